"""The data directory's layout: every name in it is spelled here and nowhere else.

::

    DATA/                         (default ./bisca-data)
      bisca.sqlite3               the store (bots, matches, results, ratings, tournaments)
      store                       the store its servers use instead, named (no password)
      admin.token                 the operator's token (created on first start, mode 0600)
      server.key                  the server's Ed25519 key that signs every match log (0600)
      spectator.token             the spectators' token
      servers/ID.lock             one lease per running server process
      matches/M/M.binlog          each match's log (``M.binlog.partial`` while it is written)
      matches/M/seatN.*.log       a local match's bot output
      bot-logs/T/B.*.log          a tournament bot's output

    A tournament run without ``--data`` has a data directory of its own,
    ``bisca-data/tournaments/T/`` (:meth:`DataDir.tournament_dir` of the default one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = [
    "DATA_ENTRIES",
    "DEFAULT_DATA_DIR",
    "LOCAL_DATA_DIR",
    "LOG_SUFFIX",
    "PARTIAL_SUFFIX",
    "DataDir",
    "NotADataDirectory",
    "log_file",
    "partial_of",
    "private_folder",
]

DEFAULT_DATA_DIR = Path("bisca-data")
#: ``bisca match``'s own: never a standing server's (whose tokens and live logs it would share).
LOCAL_DATA_DIR = DEFAULT_DATA_DIR / "local"
LOG_SUFFIX = ".binlog"
#: A log being written, or one a crash left incomplete, carries this after LOG_SUFFIX.
PARTIAL_SUFFIX = ".partial"


#: The names a data directory's own entries have (its store, its keys and tokens, the folders of
#: its matches, bots, servers and tournaments, ``bisca match``'s own data directory, a league's
#: submissions, builds and gate): one of them says a folder is one.
DATA_ENTRIES = (
    "bisca.sqlite3",
    "admin.token",
    "server.key",
    "spectator.token",
    "servers",
    "matches",
    "bot-logs",
    "tournaments",
    "local",
    "submissions",
    "builds",
    "gate",
    "store",
)


class NotADataDirectory(OSError):
    """An existing folder with other files in it, named as a data directory."""


@dataclass(frozen=True)
class DataDir:
    """Paths inside one data directory (nothing is created by asking)."""

    root: Path

    @property
    def store(self) -> Path:
        return self.root / "bisca.sqlite3"

    @property
    def admin_token(self) -> Path:
        return self.root / "admin.token"

    @property
    def server_key(self) -> Path:
        return self.root / "server.key"

    @property
    def spectator_token(self) -> Path:
        return self.root / "spectator.token"

    @property
    def store_note(self) -> Path:
        """The store a server of this folder used when it was not the folder's own SQLite
        file (its URL without its password): commands given the folder alone refuse to read
        the folder's own, which is not the league's (operator review)."""
        return self.root / "store"

    @property
    def servers(self) -> Path:
        return self.root / "servers"

    def server_lease(self, server_id: str) -> Path:
        return self.servers / f"{server_id}.lock"

    @property
    def matches(self) -> Path:
        return self.root / "matches"

    def match_dir(self, match_id: str) -> Path:
        return self.matches / match_id

    def match_log(self, match_id: str) -> Path:
        """Where a match's complete log is (see :func:`log_file` for a match folder)."""
        return log_file(self.match_dir(match_id), match_id)

    def recorded_log(self, match_id: str, recorded: str) -> Path:
        """The log the store recorded for a match at ``recorded`` (a whole path); when nothing
        is there any more and this data directory holds the match's log, that one: the
        directory was moved, or restored from a backup elsewhere."""
        path = Path(recorded)
        if path.exists():
            return path
        here = self.match_log(match_id)
        return here if here.exists() else path

    def tournament_dir(self, name: str) -> Path:
        """A tournament's own data directory, when this is the default one."""
        return self.root / "tournaments" / name

    def tournament_bots(self, name: str) -> Path:
        """The folder of a tournament's bot output files (named by the tournament, as several
        tournaments may share one data directory)."""
        return self.bot_logs / name

    @classmethod
    def of_log(cls, path: Path) -> DataDir | None:
        """The data directory a match log lies in (``DATA/matches/M/M.binlog``), if it does."""
        folder = path.resolve().parent
        if folder.parent.name == "matches" and path.name.startswith(folder.name):
            return cls(folder.parent.parent)
        return None

    @property
    def bot_logs(self) -> Path:
        return self.root / "bot-logs"

    def create(self) -> None:
        """Create the directory and its folders, readable by their owner only (they hold
        tokens, keys, every hand of every match and every bot's output); existing ones are
        made so too.  The folders are created here rather than left to ``mkdir(parents=True)``
        of a match's own folder, which would give them the umask's mode (0755).

        An existing folder that holds other files and nothing of Bisca's is refused
        (:class:`NotADataDirectory`), never made private and filled: a mistyped ``--data``,
        or ``--store sqlite:/tmp/x.db``, made ``/tmp`` mode 0700 (review 53; as root,
        ``sqlite://x`` did it to ``/``)."""
        if self.root.is_dir() and not self.holds_bisca_data():
            with os.scandir(self.root) as entries:
                others = sorted(entry.name for entry in entries)
            if others:
                raise NotADataDirectory(
                    f"{self.root} holds other files ({', '.join(others[:3])}"
                    f"{', ...' if len(others) > 3 else ''}) and no Bisca data: give a data "
                    "directory, or a new or empty folder to make one"
                )
        for folder in (self.root, self.matches, self.bot_logs, self.servers):
            private_folder(folder)

    def holds_bisca_data(self) -> bool:
        """Whether the folder holds anything a data directory does (:data:`DATA_ENTRIES`);
        ``OSError`` naming the folder when it may not be read (review s57c)."""
        try:
            return any((self.root / name).exists() for name in DATA_ENTRIES)
        except OSError as problem:
            raise OSError(f"cannot read {self.root}: {problem.strerror}") from None

    def recorded_logs(self) -> list[Path]:
        """Every match log (complete or partial) under ``matches/``."""
        if not self.matches.is_dir():
            return []
        return sorted(self.matches.glob(f"*/*{LOG_SUFFIX}*"))

    def __str__(self) -> str:
        return str(self.root)


def private_folder(path: Path) -> None:
    """Create ``path`` and every missing folder above it with mode 0700 (``mkdir``'s
    ``parents=True`` gives those the umask's mode instead); an existing ``path`` open to others
    is made 0700, and one that is not a folder is refused (``NotADirectoryError``), never
    changed."""
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"{path} is not a directory")
    missing = []
    folder = path
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)


def log_file(match_dir: Path, match_id: str) -> Path:
    """The log of match ``match_id`` kept in ``match_dir``: named by the match, so logs copied
    out of their folders never collide."""
    return match_dir / f"{match_id}{LOG_SUFFIX}"


class OutputStream(StrEnum):
    """A launched bot's output streams: the sandbox writes each to a file of its own."""

    STDOUT = "stdout"
    STDERR = "stderr"


def output_file(log_prefix: Path, stream: OutputStream) -> Path:
    """Where the sandbox writes ``stream`` of a bot launched with ``log_prefix``:
    ``PREFIX.stream.log``."""
    return log_prefix.with_name(f"{log_prefix.name}.{stream}.log")


def seat_log_prefix(match_dir: Path, seat: int) -> Path:
    """The log prefix of a seat's launched bot in the match kept in ``match_dir``: ``seatN``."""
    return match_dir / f"seat{seat}"


def seat_output_file(match_dir: Path, seat: int, stream: OutputStream) -> Path:
    """Where a seat's launched bot wrote ``stream`` in the match kept in ``match_dir``."""
    return output_file(seat_log_prefix(match_dir, seat), stream)


def partial_of(path: Path) -> Path:
    """The name a log has while it is written (or after a crash cut it short)."""
    return path.with_name(path.name + PARTIAL_SUFFIX)
