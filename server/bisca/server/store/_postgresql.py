"""The shared back end: a PostgreSQL database (psycopg 3), for a league on several machines.

The store's SQL is SQLite's and PostgreSQL's common ground; what differs is here: ``%s``
placeholders, the column types of the migrations (``for_postgresql``), the schema version in
a table of its own, and advisory locks where SQLite's single writer made them unneeded.  A
connection that breaks (the server restarted, the network went away) is opened again on the
next call: the call that saw it break fails with a :class:`StoreUnavailable` saying so.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import psycopg
from psycopg.rows import dict_row

from bisca.server.errors import StoreUnavailable

from ._backend import Backend, Connection, Rows, StoreKind
from ._migrations import for_postgresql
from ._rows import integer, text

#: How long opening a connection may take before the store is called unreachable.
CONNECT_TIMEOUT_SECONDS = 5


def _placeholders(sql: str) -> str:
    return sql.replace("?", "%s")


class _Connection:
    """A psycopg connection that takes the store's ``?`` placeholders."""

    def __init__(self, db: psycopg.Connection[dict[str, object]]) -> None:
        self.db = db

    def execute(self, sql: str, params: Sequence[object] = (), /) -> Rows:
        return self.db.execute(_placeholders(sql), tuple(params) or None)

    def executemany(self, sql: str, params: Iterable[Sequence[object]], /) -> object:
        with self.db.cursor() as cursor:
            cursor.executemany(_placeholders(sql), [tuple(p) for p in params])
        return None


def hide_password(url: str) -> str:
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


class PostgresBackend(Backend):
    kind = StoreKind.POSTGRESQL
    keeps_logs = True
    integrity_errors = (psycopg.errors.IntegrityError,)

    def __init__(self, url: str) -> None:
        self.url = url
        self._guard = threading.Lock()
        self._db: _Connection | None = None
        self.connection()

    def connection(self) -> Connection:
        with self._guard:
            if self._db is not None and not (self._db.db.closed or self._db.db.broken):
                return self._db
            if self._db is not None:
                self._db.db.close()
                self._db = None
            try:
                db = psycopg.connect(
                    self.url,
                    autocommit=True,
                    row_factory=dict_row,
                    connect_timeout=CONNECT_TIMEOUT_SECONDS,
                    application_name="bisca",
                )
            except psycopg.Error as problem:
                # psycopg's message may repeat the URL, password and all (a malformed one).
                said = hide_password(_first_line(problem))
                where = self.describe()
                raise StoreUnavailable(f"cannot reach the store {where}: {said}") from None
            self._db = _Connection(db)
            return self._db

    def begin(self, *, flushed: bool = True) -> None:
        db = self.connection()
        db.execute("BEGIN")
        if not flushed:
            db.execute("SET LOCAL synchronous_commit = off")

    def schema_version(self) -> int:
        db = self.connection()
        found = db.execute("SELECT to_regclass('bisca_schema') AS t").fetchone()
        if found is None or found["t"] is None:
            return 0
        row = db.execute("SELECT version FROM bisca_schema").fetchone()
        return 0 if row is None else integer(row, "version")

    def table_names(self) -> list[str]:
        rows = (
            self.connection()
            .execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
            )
            .fetchall()
        )
        return [text(row, "tablename") for row in rows]

    def set_schema_version(self, version: int) -> None:
        db = self.connection()
        db.execute("CREATE TABLE IF NOT EXISTS bisca_schema (version BIGINT NOT NULL)")
        db.execute("DELETE FROM bisca_schema")
        db.execute("INSERT INTO bisca_schema (version) VALUES (?)", (version,))

    def migration(self, script: str) -> str:
        return for_postgresql(script)

    @contextmanager
    def migrating(self) -> Iterator[None]:
        # A session lock, taken outside the migrations' transactions: a transaction that
        # began before another process's migration committed could still see the old
        # catalog (an advisory lock does not refresh it; a new transaction does).
        db = self.connection()
        db.execute("SELECT pg_advisory_lock(?)", (_lock_number("bisca-migrations"),))
        try:
            yield
        finally:
            if not (self._db is None or self._db.db.broken or self._db.db.closed):
                db.execute("SELECT pg_advisory_unlock(?)", (_lock_number("bisca-migrations"),))

    def lock(self, key: str) -> None:
        self.connection().execute("SELECT pg_advisory_xact_lock(?)", (_lock_number(key),))

    def failed(self, problem: Exception) -> bool:
        return isinstance(problem, psycopg.Error)

    def close(self) -> None:
        with self._guard:
            if self._db is not None:
                self._db.db.close()
                self._db = None

    def describe(self) -> str:
        return hide_password(self.url)


def _lock_number(key: str) -> int:
    """An advisory lock's 64-bit number, from its name."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


def _first_line(problem: Exception) -> str:
    text = str(problem).strip()
    return text.splitlines()[0] if text else type(problem).__name__
