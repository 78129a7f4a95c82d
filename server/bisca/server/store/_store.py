"""The store: one back end and one connection (``_database.py``) shared by its repositories,
one by concern: bots, matches, ratings, tournaments, workers and logs (``store.bots.add(...)``,
``store.matches.get(...)``).

The back end is SQLite, one file in the data directory (the default), or PostgreSQL, shared by
the machines of a league (``_backend.py``).  Its SQL is written once; the schema is versioned
(``_migrations.py``).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from bisca.server.datadir import DataDir
from bisca.server.errors import StoreError

from ._account_repository import AccountRepository
from ._backend import Backend, StoreKind
from ._bot_repository import BotRepository
from ._database import Database
from ._log_repository import LogRepository
from ._match_repository import MatchRepository
from ._rating_repository import RatingRepository
from ._sqlite import SqliteBackend
from ._tournament_repository import TournamentRepository
from ._version_repository import VersionRepository
from ._worker_repository import WorkerRepository

#: The schemes of ``--store``: ``sqlite:PATH`` or a PostgreSQL URL.
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")
#: The PostgreSQL back end's module, loaded by the first store that asks for it: its driver
#: (psycopg) costs a third of a second of CPU to import, which every process on a SQLite store
#: (a server, a match, a bot's registration, a replay's check) would pay for nothing.
POSTGRESQL_BACKEND = f"{__package__}._postgresql"


def postgresql_backend(url: str) -> Backend:
    """The PostgreSQL back end of ``url`` (``_postgresql.py``, loaded now if it is not)."""
    try:
        module = importlib.import_module(POSTGRESQL_BACKEND)
    except ImportError as problem:
        raise StoreError(
            f"a PostgreSQL store needs its driver, which cannot be loaded ({problem}): "
            "install bisca with its dependencies (psycopg)"
        ) from None
    backend: Backend = module.PostgresBackend(url)
    return backend


def without_password(url: str) -> str:
    """A store's URL as a command printed for pasting gives it: without its password, which
    PostgreSQL's clients read from ``~/.pgpass`` or ``PGPASSWORD`` (a printed one is in every
    terminal's scrollback and every log the output goes to: review s59c, F10)."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1@", url)


def open_store(
    url: str | None, data_dir: Path, *, existing: bool = False, upgrade: bool = True
) -> Store:
    """The store ``--store`` names: ``sqlite:PATH``, ``postgresql://...``, or (``None``) the
    SQLite file of ``data_dir``.  ``data_dir`` keeps the files a store does not (logs as they
    are written, keys, bot output).  ``existing``: a ``sqlite:PATH`` that is not there is an
    error (a command that only asks a store, where a mistyped path would make an empty one).
    ``upgrade``: whether a store an older Bisca left is migrated (a command that only reads
    refuses it instead: ``StoreTooOld``)."""
    if url is None:
        refuse_a_store_used_elsewhere(data_dir)
        return Store.in_directory(data_dir, upgrade=upgrade)
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:")
        if not path:
            raise StoreError("--store sqlite: needs a path, e.g. sqlite:bisca-data/bisca.sqlite3")
        if path.startswith("//"):
            # A URL's spelling (sqlite://x) would name the folder "/" (review 53).
            raise StoreError(
                f"--store {url}: give sqlite:PATH with the file's path right after the colon "
                "(sqlite:bisca-data/bisca.sqlite3, sqlite:/srv/league/bisca.sqlite3)"
            )
        if existing and not Path(path).exists():
            raise StoreError(f"--store {url}: there is no store at {path}")
        return Store(Path(path), upgrade=upgrade)
    if url.startswith(POSTGRESQL_SCHEMES):
        return Store(postgresql_backend(url), data_dir, upgrade=upgrade)
    raise StoreError(
        f"unknown store {url!r}: give sqlite:PATH or postgresql://USER@HOST:PORT/DATABASE"
    )


#: A store's name, as a server notes it in its data directory: a URL, without its password.
_NOTE_LIMIT = 4_096


def note_store_used(store: Store, data_dir: Path) -> None:
    """Note in ``data_dir`` the store a server uses, when it is not the folder's own SQLite
    file: the operator's commands given ``--data`` alone then name it instead of opening an
    empty store of the folder's own (an invite no server knows, "no accounts")."""
    layout = DataDir(data_dir)
    if store.path is None:
        used = store.describe()
    elif store.path.resolve() == layout.store.resolve():
        layout.store_note.unlink(missing_ok=True)  # served on its own store again: said so
        return
    else:
        used = f"sqlite:{store.path.resolve()}"
    layout.store_note.write_text(used + "\n")


def refuse_a_store_used_elsewhere(data_dir: Path) -> None:
    """A :class:`StoreError` naming the store ``data_dir``'s server uses, if it noted one
    (:func:`note_store_used`): the folder's own SQLite file is not the league's."""
    layout = DataDir(data_dir)
    try:
        with layout.store_note.open("rb") as note:
            used = note.read(_NOTE_LIMIT).decode("utf-8", "replace").strip()
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as problem:
        raise StoreError(f"cannot read {layout.store_note}: {problem}") from None
    raise StoreError(
        f"{layout.root}'s server keeps its store in {used}, not in this folder: give "
        f"--store with that URL (its password too); {layout.store_note} says so (remove it to "
        "use the folder's own SQLite store)"
    )


class Store:
    """The store of one data directory (SQLite) or of a league (PostgreSQL)."""

    def __init__(
        self, where: Path | str | Backend, data_dir: Path | None = None, *, upgrade: bool = True
    ) -> None:
        """Open (or create) the store: a SQLite file by its path, or a back end with the data
        directory of its local files; a ``StoreError`` naming it when it cannot be used (its
        directory is a file, it is not a database, the server cannot be reached...).  Without
        ``upgrade`` (a command that only reads) a store an older Bisca left is refused
        (``StoreTooOld``), not migrated."""
        if isinstance(where, Backend):
            backend = where
            if data_dir is None:
                raise ValueError("a store on a back end needs a data directory for its files")
            self.data_dir = data_dir
            #: The SQLite file, for a SQLite store (``None`` for PostgreSQL).
            self.path: Path | None = None
        else:
            self.path = Path(where)
            self.data_dir = self.path.parent
            backend = SqliteBackend(self.path)
        self._database = Database(backend)
        try:
            self._database.migrate(upgrade=upgrade)
        except BaseException:
            backend.close()
            raise
        self.bots = BotRepository(self._database)
        self.ratings = RatingRepository(self._database)
        self.logs = LogRepository(self._database)
        self.matches = MatchRepository(self._database, self.ratings, self.logs)
        self.tournaments = TournamentRepository(self._database)
        self.workers = WorkerRepository(self._database)
        self.accounts = AccountRepository(self._database)
        self.versions = VersionRepository(self._database)

    @classmethod
    def in_directory(cls, data_dir: Path | str, *, upgrade: bool = True) -> Store:
        return cls(DataDir(Path(data_dir)).store, upgrade=upgrade)

    @property
    def kind(self) -> StoreKind:
        return self._database.kind

    @property
    def shared(self) -> bool:
        """Whether several machines may share this store (so complete logs are kept in it,
        and a server cannot tell other machines' matches from its own cut-off ones)."""
        return self._database.keeps_logs

    def describe(self) -> str:
        return self._database.describe()

    def close(self) -> None:
        self._database.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def owner(self) -> str | None:
        """The server process that creates matches through this store (its lease id)."""
        return self.matches.owner

    @owner.setter
    def owner(self, owner: str | None) -> None:
        self.matches.owner = owner

    @property
    def log_key(self) -> str:
        """The public key (``ed25519:HEX``) that signs the logs recorded through this store."""
        return self.logs.key

    @log_key.setter
    def log_key(self, key: str) -> None:
        self.logs.key = key

    @property
    def schema_version(self) -> int:
        return self._database.schema_version()
