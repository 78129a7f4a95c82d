"""The shape of the code: folder = import name, imports point one way, private stays private.

Every import in the ``bisca`` sources is read with :mod:`ast`, those inside functions included
(an import hidden in a function is still a dependency, and was how cycles hid before), and the
tests below fail when one goes round in a cycle, points up the rooms of the server
(``server/__init__.py`` draws them), or reaches into another package's ``_private`` module.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The rule of setup.py: where each part of the ``bisca`` namespace starts.
ROOTS = {
    "bisca": ROOT / "proto" / "bisca",
    "bisca.engine": ROOT / "engine",
    "bisca.server": ROOT / "server",
    "bisca.client": ROOT / "clients" / "python" / "bisca" / "client",
}

#: The rooms, lowest first: a module may import its own room and the rooms before it, never
#: one after it.  ``server/__init__.py`` and the architecture notes draw the same order.
ROOMS = [
    ("bisca.engine", "bisca.v1"),
    ("bisca.wire",),
    ("bisca.client",),
    ("bisca.server.errors", "bisca.server.records", "bisca.server.datadir"),
    ("bisca.server.store",),
    ("bisca.server.logs",),
    ("bisca.server.referee",),
    ("bisca.server.sandbox",),
    ("bisca.server.edge",),
    ("bisca.server.tournament",),
    ("bisca.server.league",),
    ("bisca.server.web",),
    ("bisca.server.conformance",),
    ("bisca.server.cli",),
]


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int


def source_modules() -> dict[str, Path]:
    """Every module of ``bisca`` under the roots, by import name (generated code aside)."""
    modules = {}
    for prefix, root in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root)
            if "node_modules" in relative.parts or path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            parts = list(relative.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([prefix, *parts])] = path
    return modules


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


def test_the_packages_are_found_by_the_folder_rule() -> None:
    """setup.py's discovery lists exactly the folders with an ``__init__.py``."""
    spec = importlib.util.spec_from_file_location("bisca_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    assert {prefix: ROOT / folder for prefix, folder in setup.ROOTS.items()} == ROOTS
    modules = source_modules()
    packages = sorted(name for name in modules if is_package(name, modules))
    assert sorted(setup.discover_packages()) == packages
    assert {"bisca.wire", "bisca.server.referee", "bisca.client.bots"} <= set(packages)


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
    bench = {
        f"bench.{path.stem}": path for path in sorted((ROOT / "bench").glob("*.py"))
    }
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


def test_a_plain_install_gives_a_working_command_and_sdk(tmp_path: Path) -> None:
    """``pip install .`` without the editable mode: a wheel built from the tree holds every
    module, the generated protobuf code and the ``bisca`` command, and works on its own."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True,
        timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("bisca-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith("entry_points.txt"))
        assert "bisca = bisca.server.cli:main" in archive.read(entry_points).decode()
        archive.extractall(tmp_path / "site")
    for module, path in source_modules().items():
        assert path.name == "__init__.py" or any(
            name.endswith("/" + path.name) and name.startswith(module.replace(".", "/"))
            for name in names
        ), f"{module} is missing from the wheel"
    assert "bisca/v1/arena_pb2.py" in names
    # The unpacked wheel alone on the path (dependencies from this environment, not the tree).
    probe = (
        "import bisca.client, bisca.server.cli, bisca.wire, bisca.v1.arena_pb2 as pb;"
        "print(bisca.server.cli.__file__); bisca.server.cli.main(['demo', '--deals', '1'])"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path / 'site')!r});"
         f"{probe}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    first, *rest = result.stdout.splitlines()
    assert first.startswith(str(tmp_path / "site")), first
    assert "Belote" in "\n".join(rest)
