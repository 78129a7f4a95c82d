# Bisca's commands. `make run` and `make test` work on a fresh machine: they build the
# virtualenv and install what they need themselves.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.bisca-installed
NODE_CLIENT := clients/node
NODE_STAMP  := $(NODE_CLIENT)/node_modules/.bisca-installed
# The browser app's tooling (ESLint, Prettier) and the files it checks: the app and its tests.
WEB_TOOLS := server/bisca/server/web
WEB_STAMP := $(WEB_TOOLS)/node_modules/.bisca-installed
WEB_BIN   := $(WEB_TOOLS)/node_modules/.bin
WEB_JS    := server/bisca/server/web/static/*.js tests/web/js/*.js server/bisca/server/web/eslint.config.js
WEB_FILES := $(WEB_JS) server/bisca/server/web/static/*.css server/bisca/server/web/static/index.html

.PHONY: run test check lint typecheck unit bench soak install clean system bytecode

# Debian packages the arena needs on the machine: bubblewrap for the bot sandbox; a compiler,
# CMake, protoc with gRPC's C++ plugin, and gRPC's and protobuf's headers for the C++ client
# (clients/cpp); chromium for the browser app's tests (Playwright drives it headless; its own
# browser download is not available).  Each is installed (apt-get, as root or through sudo)
# when its command is missing, or for a library (SYSTEM_LIBRARIES, name:package) when
# pkg-config does not know it, or for a program outside PATH (SYSTEM_FILES, glob:package):
# PostgreSQL's server programs, in Debian's versioned folder, for the distributed tests and
# benchmark (a server of their own); libseccomp2, which compiles the bot sandbox's seccomp
# filter (through pyseccomp).
SYSTEM_PACKAGES := bwrap:bubblewrap cmake:cmake g++:g++ pkg-config:pkg-config \
  protoc:protobuf-compiler grpc_cpp_plugin:protobuf-compiler-grpc chromium:chromium
SYSTEM_LIBRARIES := grpc++:libgrpc++-dev protobuf:libprotobuf-dev libcrypto:libssl-dev
SYSTEM_FILES := /usr/lib/postgresql/*/bin/initdb:postgresql \
  /usr/lib/*/libseccomp.so.2:libseccomp2

# The virtualenv, with both distributions installed editable from the tree: `bisca-client`
# (clients/python: the SDK, the engine, the codec, the protocol generated from proto/) and
# `bisca` (server/).  Each part of the `bisca` namespace is a folder of its own
# (server/bisca/server, engine/bisca/engine, ...), so an edited or a new module is seen at once,
# without reinstalling; the install is made again only when the packaging or a .proto changes
# (protoc writes the generated code beside the .proto files at install time).  Every
# dependency is brought up to date then, as a fresh virtualenv has them: the generated code
# comes from the newest grpcio-tools (pip's isolated build) and refuses to run on an older
# grpcio, which an old virtualenv kept (seen here: 1.85.4's code on 1.85.3).
INSTALL_INPUTS := pyproject.toml setup.py clients/python/pyproject.toml clients/python/setup.py \
  $(wildcard proto/bisca/v1/*.proto)
$(STAMP): $(INSTALL_INPUTS)
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --upgrade --upgrade-strategy eager -e ./clients/python -e '.[dev]'
	touch $(STAMP)

# The compiled engine (engine/bisca/engine/_native.py): the install compiles it; an edited engine
# source makes the plain engine run (with a warning) until it is compiled again, here.
ENGINE_SOURCES := $(wildcard engine/bisca/engine/*.py engine/bisca/engine/*/*.py)
ENGINE_BUILD := engine/bisca/engine/_compiled/manifest.json
$(ENGINE_BUILD): $(ENGINE_SOURCES) | $(STAMP)
	$(BIN)/python engine/bisca/engine/_native.py build

install: $(STAMP) $(ENGINE_BUILD)
	@$(BIN)/python engine/bisca/engine/_native.py status

system:
	@missing=""; for pair in $(SYSTEM_PACKAGES); do \
	  command -v "$${pair%%:*}" >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; \
	done; \
	for pair in $(SYSTEM_LIBRARIES); do \
	  pkg-config --exists "$${pair%%:*}" 2>/dev/null || missing="$$missing $${pair#*:}"; \
	done; \
	for pair in $(SYSTEM_FILES); do \
	  ls $${pair%%:*} >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  echo "installing Debian packages:$$missing"; \
	  $$sudo apt-get update -qq && $$sudo apt-get install -y -qq $$missing; \
	fi

# The Node.js client's dependencies, exactly as its lock file says (end-to-end tests run Node
# bots).  Re-installed when the lock file changes or node_modules is gone.
$(NODE_STAMP): $(NODE_CLIENT)/package.json $(NODE_CLIENT)/package-lock.json
	cd $(NODE_CLIENT) && npm ci --silent --no-audit --no-fund
	touch $(NODE_STAMP)

# The browser app's lint and format tools, exactly as their lock file says (`make lint`), and
# axe-core, which the browser tests inject into the pages they check (`make unit`).
$(WEB_STAMP): $(WEB_TOOLS)/package.json $(WEB_TOOLS)/package-lock.json
	cd $(WEB_TOOLS) && npm ci --silent --no-audit --no-fund
	touch $(WEB_STAMP)

# The demo league: the sample bots (random, greedy) in a Belote and a Bestia tournament, with a
# live progress bar, then both leaderboards and where the match logs are.  Played afresh on
# every `make run` (the tournaments themselves resume, so the old demo data is removed first).
DEMO_DATA ?= bisca-data/demo

run: install system
	rm -rf $(DEMO_DATA)
	$(BIN)/bisca tournament run examples/demo-belote.toml examples/demo-bestia.toml --data $(DEMO_DATA)
	@echo "browse the demo league: $(BIN)/bisca web --data $(DEMO_DATA), then open http://127.0.0.1:8080/"

lint: install $(WEB_STAMP)
	$(BIN)/ruff check engine server clients proto tests bench docs
	$(BIN)/mypy -p bisca.engine -p bisca.server -p bisca.client -p bisca.wire
	$(WEB_BIN)/eslint -c $(WEB_TOOLS)/eslint.config.js $(WEB_JS)
	$(WEB_BIN)/prettier --config $(WEB_TOOLS)/.prettierrc.json --check $(WEB_FILES)

# The bytecode of the tree's modules, written ahead: where PYTHONDONTWRITEBYTECODE is set (this
# machine's shell sets it), every process of the suite (bots, servers, commands: a thousand and
# more) would compile the tree's modules again, 0.15 s of CPU each.  Only what changed since is
# compiled again.
bytecode: install
	@$(BIN)/python -m compileall -q -j 0 engine/bisca server/bisca proto/bisca clients/python/bisca tests bench

# The whole suite.  Most of its time is spent waiting (on bot processes, clocks running out,
# servers starting), not computing: four workers keep the two cores of the CI machine busy,
# where two left them idle half the time (see the README for the measured times).
TEST_WORKERS ?= 4
unit: install system bytecode $(NODE_STAMP) $(WEB_STAMP)
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup

# The fast lane, for between edits: ruff, and the tests that start no process, server,
# PostgreSQL, browser or build (tests/support/lanes.py marks the others; a test of this lane
# that starts a process fails), nor the engine batteries' larger shapes (marked `volume`: the
# lane runs each battery on its smaller ones).  Its tests have no module fixtures worth keeping together, so
# xdist spreads them test by test.  mypy stays in `make lint` (a cold run takes longer than
# this whole lane).
FAST_LANE := not (system or postgres or browser or build or volume)
check: install bytecode
	$(BIN)/ruff check engine server clients proto tests bench docs
	$(BIN)/pytest -q -n 2 --dist load -m "$(FAST_LANE)"

test: lint unit

bench: install system
	$(BIN)/pip install --quiet -e ./clients/python -e '.[bench]'
	$(BIN)/python -m bench

# A league on PostgreSQL with 2 workers under faults (crashing, hanging, late and flooding
# bots, a worker killed -9, the database restarted), then its end checks (bench/soak.py).
# Not part of `make test`: it lasts SOAK_MINUTES (10 by default).
SOAK_MINUTES ?= 10
soak: install system
	SOAK_MINUTES=$(SOAK_MINUTES) $(BIN)/python -m bench.soak

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache $(NODE_CLIENT)/node_modules $(WEB_TOOLS)/node_modules
