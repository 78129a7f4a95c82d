"""Fixtures shared by every room of the tests; their helpers are in ``tests/support/``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.arena import Arena, start_arena, stop_arena
from tests.support.postgres import PostgresServer


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
