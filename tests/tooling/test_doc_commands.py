"""Every command the README and the docs show is run by a test.

The commands are read from the shell blocks (``sh``, ``bash``, ``shell``, ``console``, indented
or not) of the documentation (:data:`DOC_FILES`); every block must name its language, so a
block of commands cannot hide as an unlabelled one (output samples are ``text``).  Each command
must be claimed by a rule of :data:`RULES`:

* :class:`Run`: run here, as written, in order, in a doc root of its file: a folder laid out
  like the project (its ``.venv``, ``clients/``, ``examples/``, ...) with a finished local match
  in ``bisca-data``, and the files the doc tells the reader to save (:data:`SAVED`) taken from
  its own code blocks.  A placeholder (``MATCH_ID``, ``LOG``, ``DIR``, a token ``bisca_...``,
  an optional ``[--flag ...]``) is replaced by a real value, the documented port by the port of
  the file's standing server;
* :class:`Serve`: a server command, started and stopped once it says where it serves;
* :class:`Standing`: a server the file's next commands talk to, kept until the next one or the
  file's end;
* :class:`Connect`: a bot command for the standing server, started, seated in a match created
  for it (``bisca matches create --wait``) and stopped;
* :class:`Install`: ``pip install`` into a fresh virtual environment made here, put first on
  the file's ``PATH`` (offline, from the wheelhouse of ``tests/support/sdk.py``);
* :class:`Seat`: a bot command, played as a seat of a local ``bisca match``;
* :class:`Elsewhere`: a named test runs that command (the C++ build, PostgreSQL, ``make``...);
  this file checks that the test exists;
* :class:`External`: a command for what this project neither installs nor runs: Go's protoc
  plugins, a public server with a public CA's certificate.  Each says why.

A documented command that no rule claims fails :func:`test_every_documented_command_is_covered`,
naming the file and line: document a command, and say here how it is tested.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bisca.v1 import arena_pb2 as pb
from tests.support.commands import BISCA
from tests.support.sdk import BUILD, RUNTIME, fresh_environment, wheelhouse
from tests.support.shared_build import shared_build

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = sorted(
    [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("clients/*/README.md")]
)
#: A fenced block, indented (inside a list) or not: its indent, language and text.
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<language>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}


@dataclass(frozen=True)
class DocCommand:
    file: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


def fenced_blocks(path: Path) -> Iterator[tuple[int, str, str]]:
    """Each fenced block of ``path``: the line its text starts on, its language, its text
    without the fence's indent."""
    text = path.read_text()
    for block in _FENCE.finditer(text):
        indent = len(block.group("indent"))
        body = "".join(line[indent:] for line in block.group("body").splitlines(keepends=True))
        yield text.count("\n", 0, block.start("body")) + 1, block.group("language").strip(), body


def documented_commands() -> list[DocCommand]:
    """Every command of every shell block, in document order: continuation lines joined,
    comments dropped."""
    found = []
    for path in DOC_FILES:
        name = str(path.relative_to(ROOT))
        for first_line, language, body in fenced_blocks(path):
            if language not in SHELL_LANGUAGES:
                continue
            pending, start = "", 0
            for offset, raw in enumerate(body.splitlines()):
                if not pending:
                    start = first_line + offset
                line = raw.rstrip()
                if line.endswith("\\"):
                    pending += line[:-1].strip() + " "
                    continue
                command, quote = _scan(pending + line.strip())
                if quote:  # a quoted argument goes on on the next line
                    pending += line.strip() + " "
                    continue
                command, pending = command.strip(), ""
                if command and not command.startswith("#"):
                    found.append(DocCommand(name, start, command))
    return found


def _scan(line: str) -> tuple[str, str]:
    """``line`` without a trailing ``# comment`` (a ``#`` outside quotes, after a space), and
    the quote left open at its end (``""`` if none)."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] == " "):
            return line[:index], ""
    return line, quote


def code_block(file: str, language: str, first_line: str) -> str:
    """The one ``language`` block of ``file`` whose text starts with ``first_line``."""
    found = [
        body
        for _, block_language, body in fenced_blocks(ROOT / file)
        if block_language == language and body.startswith(first_line)
    ]
    assert len(found) == 1, f"{file} has no single {language} block starting {first_line!r}"
    return found[0]


#: The files a doc tells its reader to save, from its own code blocks: (language, first line).
SAVED: dict[str, dict[str, tuple[str, str]]] = {
    "docs/bot-guide.md": {
        "mybot.py": ("python", '"""mybot.py:'),
        "mybot.js": ("js", "// mybot.js:"),
    },
    "clients/python/README.md": {"my_bot.py": ("python", "# my_bot.py")},
}


# --------------------------------------------------------------------------------------------
# How each command is tested


@dataclass(frozen=True)
class Run:
    """Run here, to its end; ``code`` is the exit code it must end with.  ``server``: it talks
    to the file's standing server (``BISCA_ADDRESS`` is that server's; ``MATCH_ID`` a match
    played there, by the bots a ``bisca matches create`` names, connected first)."""

    code: int = 0
    server: bool = False


@dataclass(frozen=True)
class Serve:
    """A server: started here and stopped once its first line says it serves."""


@dataclass(frozen=True)
class Standing:
    """A server for the file's next commands: started here, kept until the next one or the
    end of its file."""


@dataclass(frozen=True)
class Connect:
    """A bot command for the standing server, with the token ``bisca bots add`` printed: it is
    seated in the four seats of a Belote match created for its bot, and stopped after it."""


@dataclass(frozen=True)
class Install:
    """``pip install``: ``pip`` is a fresh virtual environment's, first on the file's PATH."""


@dataclass(frozen=True)
class Seat:
    """A bot command, played in seat 0 of a local ``bisca match`` beside three sample bots."""

    game: str = "belote"


@dataclass(frozen=True)
class Elsewhere:
    """Run by the test ``target`` (``path::name``), or by CI itself (``target`` = ``CI``):
    ``why`` says why not here, and what that test runs."""

    target: str
    why: str


@dataclass(frozen=True)
class External:
    """Not run by this project at all, for the reason ``why``."""

    why: str


Rule = Run | Serve | Standing | Connect | Install | Seat | Elsewhere | External

_BISCA = r"^(\.venv/bin/)?bisca "
_CPP = "tests/client/test_cpp_bot.py::"
_CPP_BUILD = "the C++ SDK's build (a minute of two cores) is made once, by the C++ tests"
_SERVICES = "tests/edge/test_services.py::"
_REFLECTION = _SERVICES + "test_health_and_reflection_are_served"
_NO_GRPCURL = "grpcurl is not in Debian (apt-cache policy grpcurl: none); the test makes "
_DISTRIBUTED = "tests/tournament/test_distributed.py::"
_POSTGRES = "a PostgreSQL server of the tests' own (tests/support/postgres.py), and workers"
_NODE_RANDOM = r'--bot "node clients/node/bots/random\.js"'

#: The first rule whose pattern matches a command (``re.search``) claims it.
_LEAGUE_SERVER = (
    "tests/cli/test_league_server.py::"
    "test_an_invited_stranger_submits_a_python_bot_that_becomes_active"
)
_STRANGERS = (
    "a league server with registration, an invite, an account, a submission through the gate"
)

_LADDER_SERVER = "tests/cli/test_ladder_server.py::"
_LADDER = (
    "a league server whose ladder plays hosted versions and a connected SDK bot, with "
    "--ladder settings, `bisca account connect` and the bot dialing in with its token"
)

RULES: list[tuple[str, Rule]] = [
    # docs/league-server.md, the ladder: a real serve, hosted versions and a connected bot.
    (
        _BISCA + r"serve .*--ladder ",
        Elsewhere(
            _LADDER_SERVER + "test_every_active_version_plays_rated_matches_by_itself", _LADDER
        ),
    ),
    (
        _BISCA + r"account connect ",
        Elsewhere(
            _LADDER_SERVER + "test_bisca_account_connect_makes_an_active_connected_version", _LADDER
        ),
    ),
    (
        r"^BISCA_ADDRESS=127\.0\.0\.1:50051 BISCA_TOKEN=\S+ \.venv/bin/python adabot/my_bot\.py$",
        Elsewhere(
            _LADDER_SERVER + "test_a_connected_bot_plays_rated_ladder_matches_beside_hosted_ones",
            _LADDER,
        ),
    ),
    # docs/league-server.md, a version's ladder by the command line: the walk of a Python, a
    # Node and a C++ starter on one serve with its ladder reads each one's.
    (
        _BISCA + r"ladder (show|stderr|stdout) ",
        Elsewhere(
            "tests/cli/test_league_server.py::"
            "test_each_version_is_rated_by_the_ladder_and_its_owner_reads_its_output",
            "a league server whose ladder rates the Python, Node and C++ starters and a v2: "
            "`ladder show` of a bot and of each version (table and --json), `ladder stderr` and "
            "`ladder stdout` of one match of each; another account's refusal in the test "
            "beside it",
        ),
    ),
    # docs/league-server.md, the operator's accounts: the account command's own test runs each
    # on a league's data directory, and checks what it does to the account's tokens.
    (
        _BISCA + r"account (list|suspend|reinstate|delete) ",
        Elsewhere(
            "tests/cli/test_account.py::test_invite_create_token_suspend_delete",
            "a league app of its own: `account list`, `suspend` (its tokens stop answering), "
            "`reinstate` (they answer again) and `delete` (final) with --data",
        ),
    ),
    # docs/league-server.md: one test runs the whole walk, server, operator and competitor.
    (_BISCA + r"serve .*--registration ", Elsewhere(_LEAGUE_SERVER, _STRANGERS)),
    (_BISCA + r"(account|submit|submission) ", Elsewhere(_LEAGUE_SERVER, _STRANGERS)),
    (_BISCA + r"new-bot python adabot$", Elsewhere(_LEAGUE_SERVER, _STRANGERS)),
    (
        r"^\(cd clients/node && npm ci\)$",
        Elsewhere(
            "tests/cli/test_league_server.py::"
            "test_node_and_cpp_bots_are_built_by_the_league_and_become_active",
            "the Node SDK's packages installed from its lock file (the node_random fixture, as "
            "`make test` does), then a Node bot built by the league with them",
        ),
    ),
    (r"^make test$", Elsewhere("CI", "CI's .ci/run is `make test`, the README's test command")),
    (r"^make check$", Elsewhere("CI", "`make test` runs all of it (ruff and every test)")),
    (
        r"^make run$",
        Elsewhere(
            "tests/tooling/test_make_run.py::test_make_run_plays_the_demo_league",
            "it runs `make run` itself, into a data directory of its own",
        ),
    ),
    (
        r"^apt-get install -y libgrpc\+\+-dev ",
        Elsewhere("CI", "`make system` (run by `make test`) installs these when missing"),
    ),
    # The standing servers, each for the commands after it in its file.
    (_BISCA + r"serve --listen \S+:50051 \[--unix", Standing()),  # README
    (_BISCA + r"serve --listen 127\.0\.0\.1:50051 --unix \S+ --data bisca-data$", Standing()),
    (_BISCA + r"serve --listen 0\.0\.0\.0:50051 --tls-cert ", Standing()),
    (_BISCA + r"serve --data league-data --league ", Standing()),
    (_BISCA + r"serve --http 127\.0\.0\.1:8080$", Standing()),  # docs/web.md
    (_BISCA + r"(serve|web) ", Serve()),
    (r"^curl -s .*localhost:8080/api/", Run(server=True)),
    (_BISCA + r"(matches|watch) ", Run(server=True)),
    (
        r"^BISCA_ADDRESS=grpcs://arena\.example\.org",
        External("a public server with a public CA's certificate; the private one is below"),
    ),
    (
        r"^BISCA_ADDRESS=\S+ (BISCA_CA=\S+ )?BISCA_TOKEN=\S+ (node|\S+python) mybot\.(js|py)$",
        Connect(),
    ),
    (_BISCA + r"bot greedy --address grpcs://", Connect()),
    (r"^pip install \./clients/python$", Install()),
    (r"^python my_bot\.py$", Seat("belote")),
    (r"^grpcurl .* list$", Elsewhere(_REFLECTION, _NO_GRPCURL + "the same reflection call")),
    (
        r"^grpcurl .* describe ",
        Elsewhere(_REFLECTION, _NO_GRPCURL + "the same reflection calls (file_containing_symbol)"),
    ),
    (
        r"^grpcurl .* grpc\.health\.v1\.Health/Check$",
        Elsewhere(_REFLECTION, _NO_GRPCURL + "the same Check"),
    ),
    (
        r"^grpcurl .* bisca\.v1\.Arena/CreateMatch$",
        Elsewhere(
            _SERVICES + "test_operator_calls_need_the_admin_token_and_valid_requests",
            _NO_GRPCURL + "CreateMatch calls, with the admin token and without",
        ),
    ),
    (
        r"^protoc -I proto --go_out=",
        External("Go's protoc plugins (protoc-gen-go, protoc-gen-go-grpc): the project has no Go"),
    ),
    # The C++ SDK, built once by its tests.
    (
        r"^cmake -S clients/cpp -B build/cpp && cmake --build build/cpp -j2$",
        Elsewhere(
            _CPP + "test_the_cpp_random_bot_passes_every_check", _CPP_BUILD + " (its fixture)"
        ),
    ),
    (
        _BISCA + r"check-bot --game belote --game bestia -- build/cpp/random_bot$",
        Elsewhere(_CPP + "test_the_cpp_random_bot_passes_every_check", _CPP_BUILD),
    ),
    (
        _BISCA
        + r"match --game \w+ (--set seats=4 )?--bot build/cpp/random_bot --bot random "
        + _NODE_RANDOM
        + " --bot greedy$",
        Elsewhere(_CPP + "test_a_match_beside_python_and_node_bots", _CPP_BUILD + "; both games"),
    ),
    (
        r"^cmake -S (\w+) -B \1/build && cmake --build \1/build$",
        Elsewhere(
            "tests/cli/test_new_bot.py::test_the_cpp_starter_builds_and_passes_every_check",
            _CPP_BUILD + "; the starter is built against it with these commands",
        ),
    ),
    (
        _BISCA + r"check-bot -- (mine|cppbot)/build/my_bot$",
        Elsewhere(
            "tests/cli/test_new_bot.py::test_the_cpp_starter_builds_and_passes_every_check",
            _CPP_BUILD,
        ),
    ),
    (
        _BISCA + r"match --game bestia --set seats=4 --bot (mine|cppbot)/build/my_bot ",
        Elsewhere(
            _CPP + "test_the_guides_cpp_bot_plays_a_match",
            _CPP_BUILD + "; it builds the guide's bot the guide's way and plays this match",
        ),
    ),
    # PostgreSQL and workers.
    (
        r"^bisca worker --store postgresql://\S+ --concurrency 2$",
        Elsewhere(_DISTRIBUTED + "test_one_and_three_workers_give_the_same_leaderboard", _POSTGRES),
    ),
    (
        r"^bisca tournament run \S+ --store postgresql://\S+ --distributed$",
        Elsewhere(_DISTRIBUTED + "test_three_workers_record_every_planned_match_once", _POSTGRES),
    ),
    # Metrics (docs/operating.md): a standing server and a worker, scraped by their tests.
    (
        r"^bisca serve .*--metrics \S+$",
        Elsewhere(
            "tests/metrics/test_serve_metrics.py::test_the_counters_move_as_the_match_log_says",
            "a server standing with --metrics, scraped before and after a match",
        ),
    ),
    (
        r"^bisca worker --store postgresql://\S+ .*--metrics \S+$",
        Elsewhere(
            "tests/metrics/test_worker_metrics.py::"
            "test_a_worker_counts_its_beats_matches_and_decisions",
            _POSTGRES,
        ),
    ),
    (_BISCA, Run()),
    (r"^(openssl|printf|mkdir|protoc|python -m grpc_tools\.protoc) ", Run()),
]


def rule_for(command: DocCommand) -> Rule | None:
    for pattern, rule in RULES:
        if re.search(pattern, command.text):
            return rule
    return None


def test_every_block_names_its_language() -> None:
    """An unlabelled block would hide its commands from the reader above: commands are ``sh``,
    output ``text``."""
    unlabelled = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in DOC_FILES
        for line, language, _ in fenced_blocks(path)
        if not language
    ]
    assert unlabelled == [], "blocks without a language (sh for commands, text for output)"


def test_every_documented_command_is_covered() -> None:
    commands = documented_commands()
    assert len(commands) > 50, "the shell blocks of the docs were not found"
    assert any(command.file == "docs/distributed.md" for command in commands)  # indented ones
    unclaimed = [str(command) for command in commands if rule_for(command) is None]
    assert unclaimed == [], "documented commands no test runs (add a rule):\n" + "\n".join(
        unclaimed
    )


def test_the_tests_named_for_commands_exist() -> None:
    for _, rule in RULES:
        if isinstance(rule, Elsewhere) and rule.target != "CI":
            path, name = rule.target.split("::")
            assert re.search(rf"^def {name}\(", (ROOT / path).read_text(), re.MULTILINE), rule


# --------------------------------------------------------------------------------------------
# Running them

#: The port the docs' servers listen on; a server started here takes a free one instead.
DOCUMENTED_PORT = ":50051"
#: The port the docs' browser apps listen on.
DOCUMENTED_HTTP_PORT = ":8080"
#: The project's virtual environment, the ``.venv`` of the docs.
VENV = Path(sys.prefix)
#: A match of bots connected here, short: one deal.
QUICK_MATCH = ["--game", "belote", "--set", "deals=1"]


@dataclass
class Base:
    """A data directory with a finished local match, copied into each doc root, and what fills
    the docs' placeholders for it."""

    data: Path
    values: dict[str, str]


@dataclass
class Server:
    process: subprocess.Popen[str]
    port: str
    tls: bool
    data: str
    http_port: str | None

    def address(self) -> str:
        return f"{'grpcs://' if self.tls else ''}127.0.0.1:{self.port}"


@dataclass
class DocRoot:
    """One doc file's folder, laid out like the project, and what its commands so far left:
    tokens, the standing server, the bots connected to it, a match played there."""

    file: str
    path: Path
    values: dict[str, str]
    path_front: list[Path] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)
    server: Server | None = None
    connected: dict[str, subprocess.Popen[str]] = field(default_factory=dict)
    server_match: str | None = None

    def expand(self, text: str, on_server: bool = False) -> str:
        text = re.sub(r"\s*\[(--|\.\.\.)[^\]]*\]", "", text)  # optional parts of a synopsis
        values = dict(self.values)
        if self.tokens:
            values["bisca_..."] = list(self.tokens.values())[-1]
        if on_server and "MATCH_ID" in text:
            values["MATCH_ID"] = self.match_on_server()
        if on_server and "/M/" in text:  # a match in a URL path
            text = text.replace("/M/", f"/{self.match_on_server()}/")
        for placeholder, value in values.items():
            text = re.sub(rf"(?<![\w/.-]){re.escape(placeholder)}(?![\w-])", value, text)
        if self.server is not None:
            text = text.replace(DOCUMENTED_PORT, f":{self.server.port}")
            if self.server.http_port is not None:
                text = text.replace(DOCUMENTED_HTTP_PORT, f":{self.server.http_port}")
        # The project's virtual environment, where it is (a link to it would not be where
        # the sandbox binds it).
        return re.sub(r"(?<![\w/.-])\.venv/", f"{VENV}/", text)

    def environment(self) -> dict[str, str]:
        front = [*self.path_front, VENV / "bin"]
        path = os.pathsep.join([*map(str, front), os.environ.get("PATH", "")])
        env = {**os.environ, "PATH": path, "PYTHONUNBUFFERED": "1"}
        if self.server is not None:
            env["BISCA_ADDRESS"] = self.server.address()
        return env

    def run(self, line: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            line,
            shell=True,
            cwd=self.path,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def start(self, line: str) -> subprocess.Popen[str]:
        """``line`` in the background, in a process group of its own (a shell and its bot)."""
        return subprocess.Popen(
            line,
            shell=True,
            cwd=self.path,
            env=self.environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )

    def connect(self, name: str, line: str | None = None) -> subprocess.Popen[str]:
        """Bot ``name`` on the standing server: ``line``, or the sample bot ``random`` with the
        token printed for ``name``."""
        assert name in self.tokens, f"no `bisca bots add {name}` before it in {self.file}"
        if line is None:
            line = f"bisca bot random --token {self.tokens[name]}"
        self.disconnect(name)
        self.connected[name] = self.start(line)
        return self.connected[name]

    def disconnect(self, name: str) -> str:
        process = self.connected.pop(name, None)
        return "" if process is None else stop(process, signal.SIGTERM)

    def create_match(self, names: list[str]) -> str:
        """A match of ``names`` on the standing server, played to its end: its id."""
        assert self.server is not None
        ca = " --ca ca.pem" if self.server.tls else ""
        bots = " ".join(f"--bot {name}" for name in names)
        server = f"--address {self.server.address()}{ca} --data {self.server.data}"
        line = f"bisca matches create {' '.join(QUICK_MATCH)} {bots} {server} --wait"
        done = self.run(line, timeout=180)
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
        return re.search(r"created match (\S+)", done.stdout).group(1)  # type: ignore[union-attr]

    def match_on_server(self) -> str:
        """A match played on the standing server: the last one a command created, or one of
        the sample bot ``random`` holding the last registered bot's token."""
        if self.server_match is None:
            if not self.tokens:  # no bot of the docs' own: one for this match
                assert self.server is not None
                run(
                    self,
                    DocCommand(self.file, 0, f"bisca bots add docs --data {self.server.data}"),
                    Run(),
                )
            name = list(self.tokens)[-1]
            self.connect(name)
            self.server_match = self.create_match([name] * 4)
            self.disconnect(name)
        return self.server_match

    def stop_server(self) -> None:
        for name in list(self.connected):
            self.disconnect(name)
        if self.server is not None:
            stop(self.server.process)
            self.server, self.server_match = None, None

    def close(self) -> None:
        self.stop_server()
        shutil.rmtree(self.path, ignore_errors=True)


def stop(process: subprocess.Popen[str], how: signal.Signals = signal.SIGINT) -> str:
    """Stop ``process`` and its group with ``how`` (a server's Ctrl-C; SIGKILL if it
    lingers); its output."""
    if process.poll() is None:
        os.killpg(process.pid, how)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    return output or ""


@pytest.fixture(scope="module")
def base() -> Iterator[Base]:
    data = Path(tempfile.mkdtemp(prefix="bisca-docs-base-")) / "bisca-data"
    played = subprocess.run(
        [
            *BISCA,
            "match",
            "--game",
            "belote",
            "--deals",
            "1",
            *["--bot", "random"] * 4,
            "--seed",
            "3",
        ],
        cwd=data.parent,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert played.returncode == 0, played.stdout + played.stderr
    match_id = re.search(r"match (m-[0-9a-f]+)", played.stdout)
    assert match_id, played.stdout
    key = subprocess.run(
        [*BISCA, "key", "--data", str(data / "local")], capture_output=True, text=True
    )
    assert key.returncode == 0, key.stderr
    relative = Path("bisca-data") / "local" / "matches" / match_id.group(1)
    values = {
        "MATCH_ID": match_id.group(1),
        "LOG": str(relative / f"{match_id.group(1)}.binlog"),
        "DIR": "bisca-data/local",
        "ed25519:...": re.search(r"ed25519:\S+", key.stdout).group(0),  # type: ignore[union-attr]
    }
    yield Base(data, values)
    shutil.rmtree(data.parent, ignore_errors=True)


class DocRoots:
    """The doc root of the file being run; the previous file's is closed when the next one's
    first command comes (the commands run in document order)."""

    def __init__(self, base: Base) -> None:
        self.base = base
        self.current: DocRoot | None = None

    def of(self, file: str) -> DocRoot:
        if self.current is not None and self.current.file != file:
            self.current.close()
            self.current = None
        if self.current is None:
            self.current = self._make(file)
        return self.current

    def _make(self, file: str) -> DocRoot:
        # Not under pytest's 0700 temporary folder: sandboxed bots run as other users and must
        # be able to enter the folders of their commands.
        path = Path(tempfile.mkdtemp(prefix="bisca-docs-"))
        path.chmod(0o755)
        # ``.venv/`` is the project's own, where it is (``DocRoot.expand``).
        for folder in ("clients", "examples", "proto", "docs", "build"):
            (path / folder).symlink_to(ROOT / folder)
        shutil.copytree(self.base.data, path / "bisca-data")
        # What `make run` leaves (a test runs it), for the commands that read it: here a data
        # directory with one match.
        shutil.copytree(self.base.data / "local", path / "bisca-data" / "demo")
        for name, (language, first_line) in SAVED.get(file, {}).items():
            (path / name).write_text(code_block(file, language, first_line))
        return DocRoot(file, path, dict(self.base.values))


@pytest.fixture(scope="module")
def doc_roots(base: Base) -> Iterator[DocRoots]:
    roots = DocRoots(base)
    yield roots
    if roots.current is not None:
        roots.current.close()


def _claimed(*kinds: type) -> list[DocCommand]:
    return [command for command in documented_commands() if isinstance(rule_for(command), kinds)]


_RUNNABLE = _claimed(Run, Serve, Standing, Connect, Install, Seat)


@pytest.mark.parametrize("file", sorted({command.file for command in _RUNNABLE}))
def test_the_documented_commands_of_a_file_work(doc_roots: DocRoots, file: str) -> None:
    """A file's commands, one after the other in its order (each may need what an earlier one
    made: a server, a bot's token, a file): one test per file, so that no test runner may
    reorder them."""
    for command in (command for command in _RUNNABLE if command.file == file):
        _works(doc_roots.of(file), command)


def _works(root: DocRoot, command: DocCommand) -> None:
    rule = rule_for(command)
    if isinstance(rule, Run):
        run(root, command, rule)
    elif isinstance(rule, Serve | Standing):
        serve(root, command, keep=isinstance(rule, Standing))
    elif isinstance(rule, Connect):
        connect(root, command)
    elif isinstance(rule, Install):
        install(root, command)
    else:
        assert isinstance(rule, Seat)
        seat(root, command, rule.game)


def run(root: DocRoot, command: DocCommand, rule: Run) -> None:
    if rule.server:
        assert root.server is not None, f"{command}: no server started before it in its file"
        for name in re.findall(r"--bot (\S+)", command.text):
            if name not in root.connected:
                root.connect(name)  # "each bot connects with its token"
    line = root.expand(command.text, on_server=rule.server)
    done = root.run(line)
    assert done.returncode == rule.code, f"{command}\nran: {line}\n{done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    registered = re.search(r"registered bot (\S+); its token .*\n(bisca_\S+)", done.stdout)
    if registered:
        root.tokens[registered.group(1)] = registered.group(2)
    created = re.search(r"^created match (\S+)", done.stdout, re.MULTILINE)
    if rule.server and created:
        root.server_match = created.group(1)


def serve(root: DocRoot, command: DocCommand, keep: bool) -> None:
    root.stop_server()
    line = root.expand(command.text)
    # A port of its own, so that servers of several documented commands never meet.
    line = re.sub(r"(--listen \S+?):\d+", r"\1:0", line)
    line = re.sub(r"--unix \S+", f"--unix {root.path / 'bisca.sock'}", line)
    line = re.sub(r"(--http \S+?):\d+", r"\1:0", line)
    web_only = re.search(r"bisca web ", line) is not None
    if web_only and "--http" not in line:
        line += " --http 127.0.0.1:0"
    if not web_only and "--listen" not in line:
        line += " --listen 127.0.0.1:0"
    process = root.start(line)
    assert process.stdout is not None
    said = ""
    wanted = "browser app on" if "--http" in line else "serving on"
    while wanted not in said:
        said_now = process.stdout.readline()
        if not said_now:  # it ended
            output = stop(process)
            raise AssertionError(f"{command}\nran: {line}\n{said}{output}")
        said += said_now
    if not keep:
        stop(process)
        return
    served = re.search(r"serving on \S+?:(\d+).*; data in (\S+)", said)
    assert served, said
    app = re.search(r"browser app on http://\S+?:(\d+)", said)
    http_port = app.group(1) if app else None
    root.server = Server(process, served.group(1), "grpcs://" in said, served.group(2), http_port)


def connect(root: DocRoot, command: DocCommand) -> None:
    assert root.server is not None, f"{command}: no server started before it in its file"
    name = list(root.tokens)[-1]
    bot = root.connect(name, root.expand(command.text))
    root.server_match = root.create_match([name] * 4)
    output = root.disconnect(name)
    assert bot.returncode is not None
    assert "Traceback" not in output, f"{command}\n{output}"


def install(root: DocRoot, command: DocCommand) -> None:
    """The documented ``pip install``, as written, with the ``pip`` of a fresh environment:
    the project's pip installing into it (``--python``), offline from the wheelhouse."""
    wheels = wheelhouse(*RUNTIME, *BUILD)
    python = fresh_environment(root.path / "author-venv")
    shim = python.parent / "pip"
    shim.write_text(
        f'#!/bin/sh\nexport PIP_NO_INDEX=1 PIP_FIND_LINKS="{wheels}"'
        " PIP_DISABLE_PIP_VERSION_CHECK=1\n"
        f'exec "{sys.executable}" -m pip --python "{python}" "$@"\n'
    )
    shim.chmod(0o755)
    root.path_front.insert(0, python.parent)
    with shared_build():  # pip builds the checkout's clients/python in its tree
        done = root.run(command.text)
    assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
    imported = subprocess.run(
        [str(python), "-c", "import bisca.client; print(bisca.client.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert imported.stdout.startswith(str(python.parent.parent)), imported.stdout + imported.stderr


def seat(root: DocRoot, command: DocCommand, game: str) -> None:
    line = shlex.join(
        ["bisca", "match", "--game", game, "--bot", command.text, *["--bot", "random"] * 3]
    )
    done = root.run(line)
    assert done.returncode == 0, f"{command}\nran: {line}\n{done.stdout}{done.stderr}"
    assert f"{game}, finished" in done.stdout, done.stdout


# --------------------------------------------------------------------------------------------
# The scripts the docs name in their text


#: The guide's inline command that prints every message it shows (not a shell block: it is
#: named in the guide's first paragraph).
_CAPTURE = re.compile(r"`(\.venv/bin/python docs/capture_messages\.py --seed \d+)`")


#: A JSON example of the guide that is one protocol message: its kind (``"match_ended"``...).
_MESSAGE_EXAMPLE = re.compile(r'\A\{\s*"(\w+)": \{\n(.*)\n  \}\n\}\n\Z', re.DOTALL)


def test_the_guides_messages_show_every_field_of_their_kind() -> None:
    """Review 53: the guide's ``MatchEnded`` predated four of its fields (a seat's crashes and
    illegal moves, the events it carries, ``deal_sealed``), though the guide says its messages
    are captured from real matches.  Each example shows every field of its message, as the
    capture prints them (defaults included), but where it elides fields at its own level
    (a line ``…``); and every ``SeatResult`` of a ``MatchEnded`` shows all of its own."""
    kinds = {
        **pb.BotMessage.DESCRIPTOR.fields_by_name,
        **pb.ServerMessage.DESCRIPTOR.fields_by_name,
    }
    guide = (ROOT / "docs" / "bot-guide.md").read_text()
    checked = 0
    for found in _FENCE.finditer(guide):
        example = _MESSAGE_EXAMPLE.match(found["body"]) if found["language"] == "json" else None
        if example is None or example[1] not in kinds:
            continue
        kind, body = kinds[example[1]].message_type, example[2]
        if re.search(r"^    …", body, re.MULTILINE):
            continue  # elided at its own level, by a line of its own
        missing = [f.name for f in kind.fields if f'"{f.name}":' not in body]
        assert not missing, (example[1], guide.count("\n", 0, found.start()) + 1, missing)
        results = re.findall(r"^      \{\n(.*?)^      \}", body, re.MULTILINE | re.DOTALL)
        for result in results if kind is pb.MatchEnded.DESCRIPTOR else []:
            fields = pb.SeatResult.DESCRIPTOR.fields
            assert all(f'"{f.name}":' in result for f in fields), (example[1], result)
        checked += 1
    assert checked >= 10, checked


@pytest.mark.system
def test_the_message_capture_script_the_guide_names_runs() -> None:
    """Review 45 (M1): ``docs/capture_messages.py`` crashed once ``bisca match`` sandboxed its
    bots (its recording bot wrote into a host /tmp folder the sandbox hides).  Run as the guide
    writes it, from the repository root: both matches played, and every message it shows
    captured."""
    (command,) = _CAPTURE.findall((ROOT / "docs" / "bot-guide.md").read_text())
    argv = shlex.split(command)
    done = subprocess.run(
        [str(VENV / argv[0].removeprefix(".venv/")), *argv[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    shown = re.findall(r"^### (.+)$", done.stdout, re.MULTILINE)
    assert shown[0] == "Hello" and shown[-1] == "Bestia MatchEnded", shown
    assert "ActionRejected" in shown and "MatchStarted after reconnecting" in shown, shown
    assert "(none captured)" not in done.stdout, done.stdout
