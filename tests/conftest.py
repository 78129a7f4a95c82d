"""Fixtures shared by every room of the tests; their helpers are in ``tests/support/``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.arena import Arena, start_arena, stop_arena
from tests.support.postgres import PostgresServer

#: The lanes (markers derived from what a test needs, and the fast lane's guard against
#: processes) and pytester, for the lanes' own tests (``tests/tooling/test_lanes.py``).
pytest_plugins = ["tests.support.lanes", "pytester"]

#: Modules whose tests are dealt out one by one rather than kept on one worker: each test is
#: long (a whole doc file's commands, a match of bot processes with clocks running out, a
#: battery's share of playouts, a Node suite's floods, a person's whole game in a browser) and
#: what they share, if anything, is cheap to make once per worker (a one-deal match, the
#: module's ``arena`` server, a browser; the web's played league is made once per worker by
#: whichever web module it runs first).  Together
#: they are a third of the suite's time; kept whole, one worker ran each of them alone while
#: the others had nothing left.  (The modules that build into the checkout's shared folders
#: take ``tests/support/shared_build.py``'s lock around the build.)
_SPREAD = {
    "tests/client/test_node_unit_suites.py",
    "tests/engine/test_belote_battery.py",
    "tests/engine/test_bestia_battery.py",
    "tests/logs/test_spectators.py",
    "tests/referee/test_referee.py",
    "tests/sandbox/test_sandbox.py",
    "tests/tooling/test_doc_commands.py",
    "tests/web/test_browser.py",
    "tests/web/test_table_access.py",
    "tests/web/test_table_phone.py",
    "tests/web/test_table_return.py",
}


def _group(nodeid: str) -> str:
    """The xdist group of the test ``nodeid`` (its module path, relative to the checkout,
    then ``::``): its module, or the test itself in a module of :data:`_SPREAD`."""
    module = nodeid.split("::", 1)[0]
    return nodeid if module in _SPREAD else module


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With ``-n 2 --dist loadgroup`` (``make test``), a module's tests stay on one worker, so
    its module fixtures (a played tournament, a server) are made once, except in the modules of
    :data:`_SPREAD`."""
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item.nodeid)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``loadgroup`` that groups by :func:`_group` of each test's module.

    xdist's own ``loadgroup`` reads a group from a ``@group`` suffix that its worker appends to
    ``item._nodeid``; pytest 9 keeps the node id in ``item._id``, so no suffix appears, every
    test is its own group and a module is split over both workers (``test_match_logs.py``'s
    module fixture ``logs`` was made twice, once per worker).  The controller sees only node
    ids, so the group is derived from the id's module path, as the marks are."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling  # type: ignore[import-untyped]

    class ModuleGroups(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # a suffix, should xdist add it again
                return str(super()._split_scope(nodeid))
            return _group(nodeid)

    return ModuleGroups(config, log)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    """A ``bisca serve`` process shared by the tests of one module; it must exit cleanly."""
    arena, _ = start_arena(tmp_path_factory.mktemp("arena"))
    yield arena
    stop_arena(arena)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole session (Debian's, in a temporary folder); each
    test takes a fresh database of it (:meth:`PostgresServer.new_database`)."""
    server = PostgresServer().start()
    yield server
    server.remove()
