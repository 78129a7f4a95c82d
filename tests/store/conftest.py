"""The store's tests run against both back ends: every test that takes ``new_store`` runs
once on a SQLite file and once on a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bisca.server.store import Store, open_store
from tests.support.postgres import PostgresServer

OpenStore = Callable[[], Store]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'data' / 'bisca.sqlite3'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database()


@pytest.fixture
def new_store(store_url: str, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens the test's store (again, for each call); every store opened is closed after."""
    opened: list[Store] = []

    def open_it() -> Store:
        store = open_store(store_url, tmp_path / "data")
        opened.append(store)
        return store

    yield open_it
    for store in opened:
        store.close()
