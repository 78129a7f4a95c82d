"""The test lanes: what a test needs beyond this interpreter, as markers, and the guard that
keeps the fast lane (``make check``: tests without them) free of processes.

The markers (registered in ``pyproject.toml``):

``system``
    starts processes or servers (``bisca serve``, bots, ``bisca`` commands, ``make``);
``postgres``
    a PostgreSQL server of its own (``tests/support/postgres.py``);
``browser``
    a headless chromium driven by Playwright;
``build``
    compiles or installs (CMake, npm, pip).

``postgres``, ``browser`` and ``build`` imply ``system``.  They are derived at collection
(:func:`needs_of`) from what the test and its fixtures refer to, followed through the helpers of
``tests/`` (a test that calls a helper that runs ``subprocess.run`` starts processes), so a new
test cannot forget them; an explicit ``@pytest.mark.system`` covers what the code under test
starts by itself (an in-process tournament launching its bots).  Whatever is still missed is
caught when it runs: a test not marked ``system`` that starts a process fails, naming the mark
(:func:`refuse_processes`).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import types
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pytest

SYSTEM = "system"
#: The markers that need more than processes; each implies ``system``.
HEAVIER = ("postgres", "browser", "build")
LANE_MARKERS = (SYSTEM, *HEAVIER)

#: Modules whose use means a marker (matched as a module name or a package prefix).
_MODULE_NEEDS = {
    "subprocess": SYSTEM,
    "multiprocessing": SYSTEM,
    "tests.support.postgres": "postgres",
    "tests.support.sdk": "build",
    "playwright": "browser",
}
#: Programs whose name, as a string of a test or helper, means a build or an install.
_BUILD_TOOLS = frozenset({"cmake", "make", "npm", "pip"})
#: Functions outside ``subprocess`` that start processes.
_STARTERS: frozenset[object] = frozenset(
    {
        os.system,
        os.fork,
        os.posix_spawn,
        os.posix_spawnp,
        os.popen,
        asyncio.create_subprocess_exec,
        asyncio.create_subprocess_shell,
    }
)


def _module_need(module_name: str) -> str | None:
    for prefix, need in _MODULE_NEEDS.items():
        if module_name == prefix or module_name.startswith(prefix + "."):
            return need
    return None


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    """``code`` and the code of the functions, lambdas and comprehensions inside it."""
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _codes(constant)


def _is_ours(value: object) -> bool:
    """A function or class of the tests' own (``tests.*``, a conftest, a test module), whose
    body is followed; not this module's (the guard refers to every way of starting a process,
    to refuse them)."""
    module = getattr(value, "__module__", None) or ""
    last = module.rpartition(".")[2]
    ours = module.startswith("tests.") or last == "conftest" or last.startswith("test_")
    return ours and module != __name__


class _Needs:
    """The markers that a set of functions needs, following the helpers of ``tests/``."""

    def __init__(self) -> None:
        self.found: set[str] = set()
        self._seen: set[int] = set()

    def of_function(self, function: object) -> None:
        function = getattr(function, "__func__", function)  # a bound method
        function = getattr(function, "__wrapped__", function)  # a decorated one
        code = getattr(function, "__code__", None)
        # Functions made by ``exec`` (a dataclass's ``__init__``) name fields, not programs.
        if code is None or id(function) in self._seen or code.co_filename.startswith("<"):
            return
        self._seen.add(id(function))
        namespace: dict[str, Any] = getattr(function, "__globals__", {})
        for inner in _codes(code):
            strings = {value for value in inner.co_consts if isinstance(value, str)}
            if strings & _BUILD_TOOLS:
                self.found.add("build")
            for name in inner.co_names:
                self._of_value(namespace.get(name))
                need = _module_need(name)  # an import inside the function
                if need is not None:
                    self.found.add(need)
            # ``module.helper`` in a test is the global ``module`` and the attribute
            # ``helper``: both are in ``co_names``.
            for module in [namespace.get(name) for name in inner.co_names]:
                if not isinstance(module, types.ModuleType):
                    continue
                for name in inner.co_names:
                    if name in vars(module):
                        self._of_value(vars(module)[name])

    def _of_value(self, value: object) -> None:
        if value is None:
            return
        if isinstance(value, types.ModuleType):
            need = _module_need(value.__name__)
        else:
            need = _module_need(getattr(value, "__module__", None) or "")
        if need is not None:
            self.found.add(need)
        try:
            if value in _STARTERS:
                self.found.add(SYSTEM)
        except TypeError:  # an unhashable value
            pass
        if not _is_ours(value):
            return
        if isinstance(value, type):
            for member in vars(value).values():
                member = member.fget if isinstance(member, property) else member
                if callable(member) or isinstance(member, staticmethod | classmethod):
                    self.of_function(member)
        elif callable(value):
            self.of_function(value)


def needs_of(item: pytest.Item) -> set[str]:
    """The lane markers ``item`` needs: its own and its parametrization's marks, and what its
    function and the fixtures it uses (those of ``tests/``) refer to."""
    needs = _Needs()
    if isinstance(item, pytest.Function):
        needs.of_function(item.obj)
        for name in item.fixturenames:
            for definition in item._fixtureinfo.name2fixturedefs.get(name, ()):
                if _is_ours(definition.func):
                    needs.of_function(definition.func)
    found = needs.found | {mark.name for mark in item.iter_markers() if mark.name in LANE_MARKERS}
    if found & set(HEAVIER):
        found.add(SYSTEM)
    return found


def mark_lanes(items: list[pytest.Item]) -> None:
    """Add to every item the lane markers it needs (:func:`needs_of`)."""
    for item in items:
        present = {mark.name for mark in item.iter_markers()}
        for name in sorted(needs_of(item) - present):
            item.add_marker(name)


class ProcessInFastLane(RuntimeError):
    """A test of the fast lane (not marked ``system``) tried to start a process."""


def _refusal(nodeid: str, what: str) -> str:
    return (
        f"{nodeid} started a process ({what}) but is not marked `system`: mark it "
        "@pytest.mark.system (and postgres, browser or build if it needs them), or take a fixture "
        "that starts processes. The fast lane (`make check`) runs only tests that start none."
    )


def refuse_processes(monkeypatch: pytest.MonkeyPatch, nodeid: str) -> list[str]:
    """Make every way of starting a process raise :class:`ProcessInFastLane` for the test
    ``nodeid``; returns the list where each refusal is written (even one the code under test
    catches), for the test to fail on afterwards."""
    refused: list[str] = []

    def refuse(what: str) -> None:
        message = _refusal(nodeid, what)
        refused.append(message)
        raise ProcessInFastLane(message)

    started = subprocess.Popen.__init__

    def popen_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> None:
        if _importing():
            # A library's first import in this worker asking the system once (trio's
            # ``ldconfig -p``, croniter's ``file -b``): whichever test imports it first, not
            # that test's doing; refused, the test failed or not with the order of the suite.
            started(self, args, *rest, **options)
            return
        refuse(f"subprocess.Popen({args!r})")

    monkeypatch.setattr(subprocess.Popen, "__init__", popen_init)
    for name in ("posix_spawn", "posix_spawnp", "fork", "forkpty", "system", "popen"):
        if hasattr(os, name):
            monkeypatch.setattr(
                os, name, lambda *arguments, _name=name, **_: refuse(f"os.{_name}{arguments!r}")
            )
    # asyncio's and trio's subprocesses go through subprocess.Popen; asyncio's are refused
    # before its set-up too (a child watcher, a transport).
    for name in ("create_subprocess_exec", "create_subprocess_shell"):
        monkeypatch.setattr(asyncio, name, _refusing_coroutine(refuse, f"asyncio.{name}"))
    return refused


def _importing() -> bool:
    """Whether a module is being imported on the calling stack (importlib's frames)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _refusing_coroutine(refuse: Callable[[str], None], name: str) -> Callable[..., Any]:
    async def refused(*arguments: Any, **_: Any) -> None:
        refuse(f"{name}{arguments!r}")

    return refused


#: The refusals of the running test, kept for :func:`pytest_runtest_makereport`.
_REFUSED = pytest.StashKey[list[str]]()


@pytest.fixture(autouse=True)
def _fast_lane_starts_no_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard: a test not marked ``system`` cannot start a process."""
    if request.node.get_closest_marker(SYSTEM) is None:
        request.node.stash[_REFUSED] = refuse_processes(monkeypatch, request.node.nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A phase in which a process was refused fails, even when the code under test caught the
    refusal and went on."""
    report = yield
    refused = item.stash.get(_REFUSED, [])
    if refused and report.passed:
        report.outcome = "failed"
        report.longrepr = refused[0]
    refused.clear()
    return report


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_lanes(items)
