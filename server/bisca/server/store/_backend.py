"""What the store needs of a database, and what differs between the two it runs on.

The store's repositories write their SQL once, with ``?`` placeholders, and runs it through a
:class:`Backend`: SQLite (``_sqlite.py``, one file, the default) or PostgreSQL
(``_postgresql.py``, shared by the machines of a league).  A back end opens the connection,
begins transactions, keeps the schema version, takes the locks SQLite does not need (one
writer at a time is its rule) and turns its driver's errors into :class:`StoreError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from enum import StrEnum
from typing import Protocol


class StoreKind(StrEnum):
    """The two back ends, by the scheme of their ``--store`` URL."""

    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"


class Row(Protocol):
    """One row read by column name (SQLite's ``sqlite3.Row``, psycopg's dict rows); its values
    are typed as they are read (``_rows.py``)."""

    def __getitem__(self, column: str, /) -> object: ...


class Rows(Protocol):
    """A cursor after ``execute``: rows read by column name."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Row | None: ...

    def fetchall(self) -> Sequence[Row]: ...


class Connection(Protocol):
    def execute(self, sql: str, params: Sequence[object] = ..., /) -> Rows: ...

    def executemany(self, sql: str, params: Iterable[Sequence[object]], /) -> object: ...


class Backend(ABC):
    kind: StoreKind
    #: Whether complete match logs are kept in the store itself (every worker machine and
    #: ``bisca replay --store`` read them there) rather than only as files beside it.
    keeps_logs: bool
    #: The driver's errors for a row that breaks a unique key.
    integrity_errors: tuple[type[Exception], ...]

    @abstractmethod
    def connection(self) -> Connection:
        """The open connection (a back end that lost its server opens a new one)."""

    @abstractmethod
    def begin(self, *, flushed: bool = True) -> None:
        """Begin a transaction that will write (whose commit need not wait for the disk
        unless ``flushed``: see :meth:`Database.transaction`)."""

    @abstractmethod
    def schema_version(self) -> int: ...

    @abstractmethod
    def set_schema_version(self, version: int) -> None: ...

    @abstractmethod
    def table_names(self) -> list[str]:
        """The tables of the database (of its current schema), sorted."""

    @abstractmethod
    def migration(self, script: str) -> str:
        """A migration script in this back end's dialect."""

    @abstractmethod
    def migrating(self) -> AbstractContextManager[None]:
        """Held while the schema is read and migrated: one process migrates at a time."""

    @abstractmethod
    def lock(self, key: str) -> None:
        """Inside a transaction: wait for, and hold until it ends, the lock named ``key``.
        SQLite needs none (a write transaction holds the whole file)."""

    @abstractmethod
    def failed(self, problem: Exception) -> bool:
        """Whether ``problem`` is this back end's driver failing (to be named in a
        :class:`StoreError`) rather than a bug."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def describe(self) -> str:
        """The store as messages name it (a path, a URL without its password)."""
