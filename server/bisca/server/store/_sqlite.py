"""The embedded back end: one SQLite file in the data directory (the default store).

Its connection is shared by the store's threads (the store serialises them); ``BEGIN
IMMEDIATE`` takes the file's write lock at once, so a transaction never fails half-way for
another writer.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from bisca.server.datadir import DataDir, NotADataDirectory
from bisca.server.errors import StoreError
from bisca.server.records import RecordedMatch

from ._backend import Backend, Connection, StoreKind
from ._rows import recorded_matches


class SqliteBackend(Backend):
    kind = StoreKind.SQLITE
    keeps_logs = False
    integrity_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: Path) -> None:
        self.path = path
        folder = path.parent
        if folder.exists() and not folder.is_dir():
            raise StoreError(f"{folder} is not a directory: give a data directory")
        try:
            DataDir(folder).create()
        except NotADataDirectory as problem:
            raise StoreError(str(problem)) from None
        except OSError as problem:
            raise StoreError(f"cannot create the data directory {folder}: {problem}") from None
        _refuse_a_lost_store(path)
        try:
            # Readable by the server's owner only (SQLite gives its -wal and -shm files the
            # same mode).
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        except (OSError, sqlite3.Error) as problem:
            raise StoreError(f"cannot open the store {path}: {problem}") from None
        try:
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.execute("PRAGMA synchronous=FULL")
            self._flushed = True
        except (sqlite3.Error, UnicodeDecodeError) as problem:
            # A schema damaged on disk can make SQLite's own message undecodable (a name with
            # a flipped bit in it): what the user is told is that the store is unreadable.
            self._db.close()
            why = "its schema is damaged" if isinstance(problem, UnicodeDecodeError) else problem
            raise StoreError(f"cannot open the store {path}: {why}") from None

    def connection(self) -> Connection:
        return self._db

    def begin(self, *, flushed: bool = True) -> None:
        # In WAL mode a commit under ``synchronous=NORMAL`` does not wait for the disk; the
        # next one under FULL (every flushed one) syncs the log with it, as PostgreSQL's
        # ``synchronous_commit = off`` does.  The setting is read at commit, so each
        # transaction says which it needs (a statement only when that changes).
        if flushed != self._flushed:
            self._db.execute(f"PRAGMA synchronous = {'FULL' if flushed else 'NORMAL'}")
            self._flushed = flushed
        self._db.execute("BEGIN IMMEDIATE")

    def schema_version(self) -> int:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    def table_names(self) -> list[str]:
        rows = self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " ORDER BY name"
        ).fetchall()
        return [str(row[0]) for row in rows]

    def set_schema_version(self, version: int) -> None:
        self._db.execute(f"PRAGMA user_version = {int(version)}")

    def migration(self, script: str) -> str:
        return script

    def migrating(self) -> AbstractContextManager[None]:
        """Nothing to hold: each migration's ``BEGIN IMMEDIATE`` locks the file, and the store
        of one data directory is opened by one process at a time."""
        return nullcontext()

    def lock(self, key: str) -> None:
        """Nothing to take: ``BEGIN IMMEDIATE`` holds the file's one write lock already."""

    def failed(self, problem: Exception) -> bool:
        # A damaged file's names and texts can make the error undecodable before it is raised.
        return isinstance(problem, sqlite3.Error | UnicodeDecodeError)

    def close(self) -> None:
        self._db.close()

    def describe(self) -> str:
        return str(self.path)


def recorded_results(path: Path, only: str | None = None) -> dict[str, RecordedMatch]:
    """Every match the SQLite store at ``path`` records (or the one match ``only``), with the
    final hash of its log (``None`` while it has no complete one) and its seats' outcomes;
    read-only, so checking logs never changes a store."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as problem:
        raise StoreError(f"cannot read the store {path}: {problem}") from None
    db.row_factory = sqlite3.Row
    try:
        return recorded_matches(db, only)
    except sqlite3.Error as problem:
        raise StoreError(f"cannot read the store {path}: {problem}") from None
    finally:
        db.close()


def _refuse_a_lost_store(path: Path) -> None:
    """A store that is missing or empty beside the logs of matches it recorded was lost or
    damaged: starting afresh would forget every result and let a rerun write over logs."""
    if path.exists() and path.stat().st_size > 0:
        return
    logs = DataDir(path.parent).recorded_logs()
    if logs:
        state = "empty" if path.exists() else "missing"
        raise StoreError(
            f"the store {path} is {state}, but {path.parent} holds {len(logs)} match log(s) it "
            "recorded: the store was lost or damaged.  Restore it from a backup, or give a new "
            "data directory; nothing was changed"
        )
