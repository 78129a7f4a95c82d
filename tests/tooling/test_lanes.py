"""The lanes (``tests/support/lanes.py``): markers derived from what a test needs, and the guard
that fails a fast-lane test which starts a process.  Each test runs a small pytest session in
this process (pytester), with the lanes plugin and this project's markers, so these tests start
no process themselves and stay in the fast lane."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

#: The inner sessions' conftest: the lanes plugin, as the suite's conftest loads it.
_CONFTEST = """\
pytest_plugins = ["tests.support.lanes"]
"""


@pytest.fixture
def inner(pytester: pytest.Pytester, request: pytest.FixtureRequest) -> pytest.Pytester:
    """A pytester folder with the lanes plugin and the markers of ``pyproject.toml``."""
    markers = "\n".join(f"    {line}" for line in request.config.getini("markers"))
    pytester.makeini(f"[pytest]\naddopts = --strict-markers -p no:xdist\nmarkers =\n{markers}\n")
    pytester.makeconftest(_CONFTEST)
    return pytester


#: Ways of starting a process, each hidden from the static derivation (looked up by name at
#: run time, as code under test would start one), each touching ``{witness}`` if it ran.
_STARTS = {
    "subprocess.run": "getattr(importlib.import_module('subprocess'), 'run')(['touch', W])",
    "subprocess.Popen": "getattr(importlib.import_module('subprocess'), 'Popen')(['touch', W])",
    "os.posix_spawn": (
        "getattr(importlib.import_module('os'), 'posix_spawn')('/usr/bin/touch', ['touch', W], {})"
    ),
    "os.system": "getattr(importlib.import_module('os'), 'system')('touch ' + W)",
    "asyncio.create_subprocess_exec": (
        "importlib.import_module('asyncio').run("
        "getattr(importlib.import_module('asyncio'), 'create_subprocess_exec')('touch', W))"
    ),
    "trio.run_process": (
        "importlib.import_module('trio').run("
        "getattr(importlib.import_module('trio'), 'run_process'), ['touch', W])"
    ),
}


def _test_module(body: str, witness: Path) -> str:
    """A test module whose one test, not marked, runs ``body`` (``W`` is the witness)."""
    lines = ["import importlib", "", f"W = {str(witness)!r}", "", "def test_starts_a_process():"]
    lines += [f"    {line}" for line in body.splitlines()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("way", sorted(_STARTS))
def test_a_fast_lane_test_that_starts_a_process_fails_naming_the_mark(
    inner: pytest.Pytester, tmp_path: Path, way: str
) -> None:
    witness = tmp_path / "ran"
    inner.makepyfile(test_inner=_test_module(_STARTS[way], witness))
    result = inner.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "not marked `system`" in output
    assert "@pytest.mark.system" in output
    assert not witness.exists(), f"{way} ran its process"


def test_a_refusal_the_code_under_test_catches_still_fails_the_test(
    inner: pytest.Pytester, tmp_path: Path
) -> None:
    witness = tmp_path / "ran"
    body = f"try:\n    {_STARTS['subprocess.run']}\nexcept Exception:\n    pass\n"
    inner.makepyfile(test_inner=_test_module(body, witness))
    result = inner.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    assert "not marked `system`" in result.stdout.str()
    assert not witness.exists()


@pytest.mark.system  # (the inner test's import really runs its process)
def test_a_process_a_module_starts_as_it_is_first_imported_is_not_the_tests(
    inner: pytest.Pytester, tmp_path: Path
) -> None:
    """trio asks ``ldconfig -p`` and croniter ``file -b`` on their first import: whichever
    test imports them first in a worker starts that process; refused, a fast-lane test failed
    or not with the order of the suite.  A process started directly still fails the test."""
    witness = tmp_path / "ran"
    inner.makepyfile(
        asks_the_system=f"import subprocess\nsubprocess.run(['touch', {str(witness)!r}])\n"
    )
    imports = "importlib.import_module('asks_the_system')"
    inner.makepyfile(test_inner=_test_module(imports, witness))
    inner.runpytest_inprocess().assert_outcomes(passed=1)
    assert witness.exists()
    witness.unlink()
    inner.makepyfile(test_inner=_test_module(f"{imports}\n{_STARTS['subprocess.run']}", witness))
    inner.runpytest_inprocess().assert_outcomes(failed=1)


def test_a_test_marked_system_may_start_processes(inner: pytest.Pytester) -> None:
    """Checked without starting one: the marked test sees the real ``Popen``, the unmarked one
    the guard's."""
    inner.makepyfile(
        test_inner="""\
        import importlib

        import pytest

        # Looked up at run time and kept in a dict, so the derivation does not see them.
        def popen_init():
            return importlib.import_module("subprocess").Popen.__init__

        AT_IMPORT = {"init": popen_init()}

        @pytest.mark.system
        def test_marked():
            assert popen_init() is AT_IMPORT["init"]

        def test_unmarked():
            assert popen_init() is not AT_IMPORT["init"]
        """
    )
    inner.runpytest_inprocess().assert_outcomes(passed=2)


def _lanes(inner: pytest.Pytester, source: str) -> dict[str, set[str]]:
    """The lane markers of each test of a module of ``source``, as collection derives them."""
    inner.makepyfile(test_inner=textwrap.dedent(source))
    items = inner.inline_genitems()[0]
    lanes = {"system", "postgres", "browser", "build"}
    return {item.name: {mark.name for mark in item.iter_markers()} & lanes for item in items}


def test_markers_are_derived_from_the_test_its_helpers_and_its_fixtures(
    inner: pytest.Pytester,
) -> None:
    lanes = _lanes(
        inner,
        """\
        import subprocess

        import pytest

        from tests.support.commands import bisca
        from tests.support.postgres import PostgresServer


        def run_make():
            return subprocess.run(["make", "run"])


        @pytest.fixture
        def server():
            return PostgresServer


        @pytest.fixture
        def page():
            from playwright.sync_api import sync_playwright
            return sync_playwright


        def test_pure():
            assert 1 + 1 == 2

        def test_subprocess():
            subprocess.run(["true"])

        def test_a_helper_of_tests_support():
            bisca("--help")

        def test_a_helper_of_its_module_that_builds():
            run_make()

        def test_a_fixture_with_postgres(server):
            pass

        def test_a_fixture_with_a_browser(page):
            pass

        @pytest.mark.system
        def test_marked_by_hand():
            pass
        """,
    )
    assert lanes == {
        "test_pure": set(),
        "test_subprocess": {"system"},
        "test_a_helper_of_tests_support": {"system"},
        "test_a_helper_of_its_module_that_builds": {"system", "build"},
        "test_a_fixture_with_postgres": {"system", "postgres"},
        "test_a_fixture_with_a_browser": {"system", "browser"},
        "test_marked_by_hand": {"system"},
    }


def test_the_fast_lane_deselects_every_heavier_lane(inner: pytest.Pytester) -> None:
    """``make check``'s selection keeps only the tests that need none of the lanes."""
    inner.makepyfile(
        test_inner="""\
        import pytest

        def test_fast():
            pass

        @pytest.mark.postgres
        def test_postgres():
            pass

        @pytest.mark.browser
        def test_browser():
            pass

        @pytest.mark.build
        def test_build():
            pass
        """
    )
    result = inner.runpytest_inprocess("-m", "not system", "--collect-only", "-q")
    assert "test_inner.py::test_fast" in result.stdout.str()
    assert "3 deselected" in result.stdout.str()
