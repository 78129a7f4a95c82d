"""The store's one back end and its one connection, shared by all its repositories.

Calls are synchronous and serialised by a lock; the referee calls them from worker threads
(``trio.to_thread``) so the event loop never waits on the disk or the network.  A repository
reads through :meth:`Database.reading` and writes in :meth:`Database.transaction`; a write
that spans several repositories (a finished match and its game's ratings) is one transaction,
its connection handed on.  A failure of the database itself (a lost connection, a damaged
file) is a :class:`StoreError` naming the store.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from bisca.server.errors import StoreError, StoreTooNew, StoreTooOld, StoreUnavailable

from ._backend import Backend, Connection, StoreKind
from ._migrations import MIGRATIONS


class Database:
    """A back end behind the store's lock: what every repository reads and writes through."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._lock = threading.Lock()

    @property
    def kind(self) -> StoreKind:
        return self._backend.kind

    @property
    def keeps_logs(self) -> bool:
        return self._backend.keeps_logs

    @property
    def integrity_errors(self) -> tuple[type[Exception], ...]:
        """The driver's errors for a row that breaks a unique key."""
        return self._backend.integrity_errors

    def describe(self) -> str:
        return self._backend.describe()

    def close(self) -> None:
        with self._lock:
            self._backend.close()

    def lock(self, key: str) -> None:
        """Inside a transaction: hold the lock named ``key`` until it ends."""
        self._backend.lock(key)

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        """Name the store in a failure of its database."""
        try:
            yield
        except StoreError:
            raise
        except Exception as problem:
            if not self._backend.failed(problem) or isinstance(
                problem, self._backend.integrity_errors
            ):
                raise
            text = str(problem).strip().splitlines()
            raise StoreUnavailable(
                f"the store {self.describe()} failed: {text[0] if text else type(problem).__name__}"
            ) from problem

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        with self._lock, self._guarded():
            yield self._backend.connection()

    @contextmanager
    def transaction(self, *, flushed: bool = True) -> Iterator[Connection]:
        """A transaction that writes; one not ``flushed`` commits without waiting for the
        disk (a back end that can), for a write whose loss in a crash of the database is
        harmless because a flushed commit always follows it (one log: flushing a commit
        flushes every commit before it)."""
        with self._lock, self._guarded():
            self._backend.begin(flushed=flushed)
            db = self._backend.connection()
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def migrate(self, *, upgrade: bool = True) -> None:
        """Bring the schema up to this Bisca's (a new store: create it).  Without ``upgrade``
        a store an older Bisca left is refused, not migrated (``StoreTooOld``)."""
        # Several workers may open a new shared store at once: one migrates, the others wait
        # and find it done.
        with self._lock, self._guarded(), self._backend.migrating():
            version = self._backend.schema_version()
            if version > len(MIGRATIONS):
                raise StoreTooNew(self.describe(), version, len(MIGRATIONS))
            if not upgrade and 0 < version < len(MIGRATIONS):
                raise StoreTooOld(self.describe(), version, len(MIGRATIONS))
            if version == 0 and (tables := self._backend.table_names()):
                # Another program's database: Bisca's tables written into it, and its own
                # schema number taken over, would break that program (review 53).
                raise StoreError(
                    f"{self.describe()} is not a Bisca store: it holds tables of another "
                    f"program ({', '.join(tables[:5])}{', ...' if len(tables) > 5 else ''}); "
                    "give a new file or database"
                )
            db = self._backend.connection()
            for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                self._backend.begin()
                try:
                    for statement in self._backend.migration(script).split(";"):
                        if statement.strip():
                            db.execute(statement)
                    self._backend.set_schema_version(number)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")

    def schema_version(self) -> int:
        with self.reading():
            return self._backend.schema_version()
