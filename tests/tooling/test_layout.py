"""The shape of the code: folder = import name, imports point one way, private stays private.

Every import in the ``bisca`` sources is read with :mod:`ast`, those inside functions included
(an import hidden in a function is still a dependency, and was how cycles hid before), and the
tests below fail when one goes round in a cycle, points up the rooms of the server
(``server/bisca/server/__init__.py`` draws them), or reaches into another package's
``_private`` module.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.shared_build import shared_build

ROOT = Path(__file__).resolve().parents[2]

#: The rule of setup.py: the source roots of the ``bisca`` namespace, and the parts each holds
#: (in its own ``bisca/`` folder: ``server/bisca/server/edge/`` is ``bisca.server.edge``).
SOURCE_ROOTS = {
    ROOT / "server": ("bisca.server",),
    ROOT / "engine": ("bisca.engine",),
    ROOT / "proto": ("bisca.v1", "bisca.wire"),
    ROOT / "clients" / "python": ("bisca.client",),
}

#: The rooms, lowest first: a module may import its own room and the rooms before it, never
#: one after it.  ``server/bisca/server/__init__.py`` and the architecture notes draw the same
#: order.
ROOMS = [
    ("bisca.engine", "bisca.v1"),
    ("bisca.wire",),
    ("bisca.client",),
    (
        "bisca.server.errors",
        "bisca.server.records",
        "bisca.server.text",
        "bisca.server.datadir",
        "bisca.server.tempfolders",
        "bisca.server.textfiles",
    ),
    ("bisca.server.metrics",),
    ("bisca.server.store",),
    ("bisca.server.logs",),
    ("bisca.server.referee",),
    ("bisca.server.sandbox",),
    ("bisca.server.edge",),
    ("bisca.server.tournament",),
    ("bisca.server.league",),
    ("bisca.server.accounts",),
    ("bisca.server.web",),
    ("bisca.server.conformance",),
    ("bisca.server.hosting",),
    ("bisca.server.cli",),
]


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int


#: Folders that builds and installs leave behind, not the project's code.
LEFT_BY_BUILDS = frozenset({"node_modules", "build"})


def python_files(folder: Path, besides: frozenset[str] = frozenset()) -> Iterator[Path]:
    """The ``.py`` files below ``folder``, but not in its own subfolders named in ``besides``
    nor in what builds leave (not descended into at all: a build beside the test makes and
    removes folders in ``build/``, and a walk into them could find one gone half-way)."""
    for parent, subfolders, files in os.walk(folder):
        left_out = LEFT_BY_BUILDS | besides if parent == str(folder) else LEFT_BY_BUILDS
        subfolders[:] = [name for name in subfolders if name not in left_out]
        yield from (Path(parent, name) for name in files if name.endswith(".py"))


#: The modules :func:`test_a_new_module_imports_without_reinstalling` adds to the tree for a
#: moment: not the project's, and gone (maybe half-way through a scan of another test) at once.
PROBE_PREFIX = "_probe_"


def source_modules() -> dict[str, Path]:
    """Every module of ``bisca`` under the roots, by import name (generated code and the probes
    aside): the import name is the path below the root, nothing else."""
    modules = {}
    for root in SOURCE_ROOTS:
        for path in sorted(python_files(root / "bisca")):
            relative = path.relative_to(root)
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")) or path.name.startswith(
                PROBE_PREFIX
            ):
                continue
            parts = list(relative.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def is_package(module: str, modules: dict[str, Path]) -> bool:
    return modules[module].name == "__init__.py"


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    """Every ``bisca`` module that ``module`` imports, anywhere in its file."""
    package = module if is_package(module, modules) else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bisca"):
                    yield Import(module, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            if not origin.startswith("bisca"):
                continue
            for alias in node.names:
                # ``from PACKAGE import name`` imports the submodule when there is one.
                candidate = f"{origin}.{alias.name}"
                yield Import(module, candidate if candidate in modules else origin, node.lineno)


def import_graph() -> tuple[dict[str, Path], list[Import]]:
    modules = source_modules()
    edges = [
        found
        for module, path in modules.items()
        for found in imports_of(module, path, modules)
        if found.target in modules and found.target != module
    ]
    return modules, edges


def room_of(module: str) -> int | None:
    for rank, names in enumerate(ROOMS):
        if any(module == name or module.startswith(name + ".") for name in names):
            return rank
    return None


def test_each_root_holds_its_parts_of_one_namespace_and_nothing_else() -> None:
    """``bisca`` is a namespace package: no ``bisca/__init__.py`` in any root, each root's
    ``bisca/`` holds exactly its declared parts, and no Python file of the project's code sits
    outside a ``bisca/`` folder (where no tool would find it by its import name)."""
    for root, parts in SOURCE_ROOTS.items():
        assert not (root / "bisca" / "__init__.py").exists(), root
        found = {f"bisca.{entry.name}" for entry in (root / "bisca").iterdir() if entry.is_dir()}
        assert found - {"bisca.__pycache__"} == set(parts), root
        strays = [
            path
            for path in python_files(root, besides=frozenset({"bisca"}))
            if path.name != "setup.py"
        ]
        assert strays == [], strays


def test_the_packages_are_found_by_the_folder_rule() -> None:
    """The two build hooks list exactly the folders with an ``__init__.py``, between them,
    and disjointly: ``bisca`` ships ``bisca.server``, ``bisca-client`` the rest."""
    arena = _load(ROOT / "setup.py", "bisca_setup")
    client = _load(ROOT / "clients" / "python" / "setup.py", "bisca_client_setup")
    modules = source_modules()
    packages = sorted(name for name in modules if is_package(name, modules))
    arena_packages = arena.discover_packages(ROOT / "server", "bisca.server")
    client_packages, _ = client.packages_and_folders()
    assert set(arena_packages).isdisjoint(client_packages)
    assert sorted(arena_packages + client_packages) == packages
    assert {"bisca.wire", "bisca.server.referee", "bisca.client.bots"} <= set(packages)
    assert all(name.startswith("bisca.server") for name in arena_packages)


def _identity(path: Path) -> tuple[int, int]:
    """A file's inode and time of last write: both stay while nothing writes it."""
    status = path.stat()
    return status.st_ino, status.st_mtime_ns


def test_a_rebuild_rewrites_only_the_generated_files_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building ``clients/python`` in a clone makes the ``bisca.v1`` code in the folder every
    arena process imports it from.  A rebuild with nothing changed leaves each file as it was
    (not written again: no moment where a bot starting beside the build could read it truncated,
    a CI failure once), and a file that differs is replaced whole, by a rename (a new inode),
    keeping its permissions."""
    client = _load(ROOT / "clients" / "python" / "setup.py", "bisca_client_setup")
    v1 = tmp_path / "proto" / "bisca" / "v1"
    v1.mkdir(parents=True)
    for proto in (ROOT / "proto" / "bisca" / "v1").glob("*.proto"):
        (v1 / proto.name).write_bytes(proto.read_bytes())
    monkeypatch.setattr(client, "package_folders", lambda: {"bisca.v1": v1})
    monkeypatch.setattr(client, "HERE", tmp_path / "client")
    (tmp_path / "client").mkdir()

    client.generate_protos()
    made = {path.name: _identity(path) for path in v1.glob("*_pb2*")}
    assert {"bestia_pb2.py", "arena_pb2_grpc.py", "belote_pb2.pyi"} <= set(made)
    emptied = v1 / "bestia_pb2.py"
    emptied.write_text("")
    emptied.chmod(0o640)
    client.generate_protos()

    again = {path.name: _identity(path) for path in v1.glob("*_pb2*")}
    assert {name for name in made if again[name] != made[name]} == {"bestia_pb2.py"}
    inode, _ = again["bestia_pb2.py"]
    assert inode != made["bestia_pb2.py"][0], "written in place, not renamed over the old file"
    assert b"AddSerializedFile" in emptied.read_bytes()
    assert emptied.stat().st_mode & 0o777 == 0o640
    assert sorted(path.name for path in v1.iterdir() if path.name.startswith(".")) == []
    assert list((tmp_path / "client" / "build").iterdir()) == []  # no scratch left behind


def test_a_new_module_imports_without_reinstalling(tmp_path: Path) -> None:
    """The editable install reads the tree: a module added to any root imports at once.  (The
    probes are in the checkout while this runs: it holds the build lock, so that no wheel built
    from the tree beside it packs them.)"""
    probes = {
        ROOT / "server" / "bisca" / "server" / f"{PROBE_PREFIX}{tmp_path.name}.py": "bisca.server",
        ROOT / "engine" / "bisca" / "engine" / f"{PROBE_PREFIX}{tmp_path.name}.py": "bisca.engine",
    }
    code = ";".join(
        f"import {package}.{path.stem} as m; assert m.ANSWER == 42"
        for path, package in probes.items()
    )
    with shared_build():
        try:
            for path in probes:
                path.write_text("ANSWER = 42\n")
            done = subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=tmp_path,
            )
        finally:
            for path in probes:
                path.unlink(missing_ok=True)
    assert done.returncode == 0, done.stderr


def test_no_import_goes_round_in_a_cycle() -> None:
    modules, edges = import_graph()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for edge in edges:
        graph[edge.importer].add(edge.target)
    # Tarjan's strongly connected components: any component of two or more is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert cycles == [], f"import cycles: {cycles}"


def test_imports_point_down_the_rooms() -> None:
    _, edges = import_graph()
    upward = []
    for edge in edges:
        mine, theirs = room_of(edge.importer), room_of(edge.target)
        assert mine is not None, f"{edge.importer} is in no room: add it to ROOMS"
        assert theirs is not None, f"{edge.target} is in no room: add it to ROOMS"
        if theirs > mine:
            upward.append(f"{edge.importer}:{edge.line} imports {edge.target}")
    assert upward == []


def _private_part(module: str) -> str | None:
    """The package that owns ``module`` if some part of its name is private."""
    parts = module.split(".")
    for position, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:position])
    return None


def test_nothing_reaches_into_another_packages_private_modules() -> None:
    modules, edges = import_graph()
    bench = {f"bench.{path.stem}": path for path in sorted((ROOT / "bench").glob("*.py"))}
    for name, path in bench.items():
        edges += [e for e in imports_of(name, path, {**modules, name: path}) if e.target in modules]
    trespass = []
    for edge in edges:
        owner = _private_part(edge.target)
        if owner is not None and not (
            edge.importer == owner or edge.importer.startswith(owner + ".")
        ):
            trespass.append(f"{edge.importer}:{edge.line} imports {edge.target}")
    assert trespass == []


def test_the_sdk_and_the_engine_do_not_depend_on_the_server() -> None:
    _, edges = import_graph()
    wrong = [
        f"{e.importer}:{e.line} imports {e.target}"
        for e in edges
        if e.target.startswith("bisca.server")
        and e.importer.startswith(("bisca.client", "bisca.engine", "bisca.wire"))
        and not e.importer.startswith("bisca.client.cli")
    ]
    assert wrong == []


def _wheel(source: Path, into: Path, environment: dict[str, str] | None = None) -> Path:
    with shared_build():  # an in-tree build: its build/ and *.egg-info are the checkout's
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
             "-w", str(into), str(source)],
            check=True,
            timeout=300,
            env=environment,
        )  # fmt: skip
    (wheel,) = into.glob("*.whl")
    return wheel


def _run_alone(site: Path, probe: str) -> subprocess.CompletedProcess[str]:
    """``probe`` run by a Python that sees only the unpacked wheels in ``site`` of the
    project (dependencies from this environment, not the tree); it must succeed."""
    result = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {probe}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=site.parent,
    )
    assert result.returncode == 0, result.stderr
    return result


def _packaged_modules(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {
            name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            for name in archive.namelist()
            if name.endswith(".py") and ".dist-info/" not in name
        }


def test_a_plain_install_gives_a_working_command_and_sdk(tmp_path: Path) -> None:
    """``pip install ./clients/python .`` without the editable mode: the two wheels built from
    the tree ship disjoint modules that are, together, every module of the tree, with the
    generated protobuf code and the ``bisca`` command, and work on their own."""
    arena = _wheel(ROOT, tmp_path / "arena")
    client = _wheel(ROOT / "clients" / "python", tmp_path / "client")
    arena_modules, client_modules = _packaged_modules(arena), _packaged_modules(client)
    assert arena_modules.isdisjoint(client_modules)
    assert all(name.startswith("bisca.server") for name in arena_modules)
    assert set(source_modules()) <= arena_modules | client_modules
    assert "bisca.v1.arena_pb2" in client_modules
    with zipfile.ZipFile(arena) as archive:
        names = archive.namelist()
        entry_points = next(n for n in names if n.endswith("entry_points.txt"))
        assert "bisca = bisca.server.cli:main" in archive.read(entry_points).decode()
        metadata = archive.read(next(n for n in names if n.endswith("METADATA"))).decode()
        assert "Requires-Dist: bisca-client==0.1.0" in metadata
        # Every file of the folders of data the code reads: new-bot's starters, the app's pages.
        for folder in ("cli/templates", "web/static"):
            files = [p for p in (ROOT / "server/bisca/server" / folder).rglob("*") if p.is_file()]
            assert files, folder
            for path in files:
                assert path.relative_to(ROOT / "server").as_posix() in names, path
        archive.extractall(tmp_path / "site")
    with zipfile.ZipFile(client) as archive:
        archive.extractall(tmp_path / "site")
    # The unpacked wheels alone on the path (dependencies from this environment, not the tree).
    probe = (
        "import bisca.client, bisca.server.cli, bisca.wire, bisca.v1.arena_pb2 as pb;"
        "print(bisca.server.cli.__file__); bisca.server.cli.main(['demo', '--deals', '1'])"
    )
    result = _run_alone(tmp_path / "site", probe)
    first, *rest = result.stdout.splitlines()
    assert first.startswith(str(tmp_path / "site")), first
    assert "Belote" in "\n".join(rest)


def test_the_sdk_builds_from_its_own_sdist(tmp_path: Path) -> None:
    """``clients/python``'s sdist carries the engine, the codec and the ``.proto`` files it
    reads from the clone, so it builds with nothing beside it."""
    sdist_folder = tmp_path / "sdist"
    with shared_build():  # setuptools writes its egg-info into clients/python
        subprocess.run(
            [sys.executable, "-c",
             "import sys, setuptools.build_meta as m; print(m.build_sdist(sys.argv[1]))",
             str(sdist_folder)],
            check=True,
            capture_output=True,
            timeout=300,
            cwd=ROOT / "clients" / "python",
        )  # fmt: skip
    (archive,) = sdist_folder.glob("bisca_client-*.tar.gz")
    elsewhere = tmp_path / "elsewhere"
    with tarfile.open(archive) as sdist:
        sdist.extractall(elsewhere, filter="data")
    (unpacked,) = elsewhere.iterdir()
    assert (unpacked / "bisca" / "v1" / "arena.proto").is_file()
    assert not list(unpacked.rglob("*_pb2.py")), "generated code is made at build time"
    # Built where no C compiler works (and no cached build can stand in for one): the install
    # goes on, and the plain-Python engine it ships plays.
    no_compiler = {**os.environ, "CC": "/bin/false", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    wheel = _wheel(unpacked, tmp_path / "wheel", no_compiler)
    modules = _packaged_modules(wheel)
    expected = {name for name in source_modules() if not name.startswith("bisca.server")}
    assert expected <= modules
    assert {"bisca.v1.arena_pb2", "bisca.v1.arena_pb2_grpc"} <= modules
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "site")
    assert "bisca/engine/_compiled/build-failed.txt" in names
    assert not [name for name in names if name.endswith(".so")], "nothing compiled"
    probe = (
        "from bisca.engine import GAMES, _native; from bisca.client.local import play_match;"
        "print(_native.describe());"
        "print(play_match('belote', ['random'] * 4, seed=3).outcome.scores)"
    )
    result = _run_alone(tmp_path / "site", probe)
    engine, scores = result.stdout.splitlines()
    assert engine.startswith("pure (not compiled at install: mypyc failed"), engine
    assert scores.startswith("("), scores
