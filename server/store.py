"""The embedded store: one SQLite file in the data directory.

It keeps the registered bots (only a hash of each token), the matches and their per-seat
results.  The schema is versioned: :data:`MIGRATIONS` is applied in order, each in its own
transaction, so an older data directory upgrades in place when a newer server opens it.

Calls are synchronous and serialised by a lock; the referee calls them from worker threads
(``trio.to_thread``) so the event loop never waits on the disk.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TOKEN_PREFIX = "bisca_"

MIGRATIONS: list[str] = [
    # 1: bots, matches, per-seat results.
    """
    CREATE TABLE bots (
        name        TEXT PRIMARY KEY,
        token_hash  TEXT NOT NULL UNIQUE,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE matches (
        id           TEXT PRIMARY KEY,
        game         TEXT NOT NULL,
        settings     TEXT NOT NULL,
        seed         INTEGER NOT NULL,
        status       TEXT NOT NULL,
        bots         TEXT NOT NULL,
        clock        TEXT NOT NULL,
        reason       TEXT NOT NULL DEFAULT '',
        steps        INTEGER NOT NULL DEFAULT 0,
        created_at   TEXT NOT NULL,
        finished_at  TEXT
    );
    CREATE INDEX matches_status ON matches (status, created_at);
    CREATE TABLE match_seats (
        match_id        TEXT NOT NULL REFERENCES matches (id),
        seat            INTEGER NOT NULL,
        bot_name        TEXT NOT NULL,
        bot_version     TEXT NOT NULL DEFAULT '',
        score           INTEGER NOT NULL,
        rank            INTEGER NOT NULL,
        forfeited       INTEGER NOT NULL,
        forfeit_reason  TEXT NOT NULL DEFAULT '',
        timeouts        INTEGER NOT NULL DEFAULT 0,
        defaults_played INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (match_id, seat)
    );
    """,
    # 2: each match's log file and its final hash (bisca.server.matchlog).
    """
    ALTER TABLE matches ADD COLUMN log_path TEXT;
    ALTER TABLE matches ADD COLUMN log_hash TEXT;
    """,
]


class StoreError(Exception):
    """A request the store refuses (duplicate bot, unknown match, ...), with the reason."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class BotRecord:
    name: str
    created_at: str


@dataclass(frozen=True)
class SeatRecord:
    seat: int
    bot_name: str
    bot_version: str
    score: int
    rank: int
    forfeited: bool
    forfeit_reason: str
    timeouts: int
    defaults_played: int


@dataclass(frozen=True)
class MatchRecord:
    id: str
    game: str
    settings: dict[str, Any]
    seed: int
    status: str
    bots: list[str]
    clock: dict[str, Any]
    reason: str
    steps: int
    created_at: str
    finished_at: str | None
    seats: list[SeatRecord]
    log_path: str | None = None
    log_hash: str | None = None


MATCH_STATUSES = ("waiting", "running", "finished", "failed")


class Store:
    """The SQLite store of one data directory."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._migrate()

    @classmethod
    def in_directory(cls, data_dir: Path | str) -> Store:
        return cls(Path(data_dir) / "bisca.sqlite3")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _migrate(self) -> None:
        with self._lock:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this Bisca "
                f"({len(MIGRATIONS)}); upgrade Bisca"
            )
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            with self._transaction() as db:
                for statement in script.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {number}")

    @property
    def schema_version(self) -> int:
        with self._lock:
            version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    # ---- bots -------------------------------------------------------------------------------

    def add_bot(self, name: str) -> str:
        """Register a bot and return its token (only its hash is kept)."""
        check_bot_name(name)
        token = new_token()
        try:
            with self._transaction() as db:
                db.execute(
                    "INSERT INTO bots (name, token_hash, created_at) VALUES (?, ?, ?)",
                    (name, hash_token(token), now()),
                )
        except sqlite3.IntegrityError:
            raise StoreError(f"a bot named {name!r} is already registered") from None
        return token

    def bots(self) -> list[BotRecord]:
        with self._lock:
            rows = self._db.execute("SELECT name, created_at FROM bots ORDER BY name").fetchall()
        return [BotRecord(row["name"], row["created_at"]) for row in rows]

    def bot_for_token(self, token: str) -> str | None:
        """The name of the bot whose token this is, or ``None``."""
        with self._lock:
            row = self._db.execute(
                "SELECT name FROM bots WHERE token_hash = ?", (hash_token(token),)
            ).fetchone()
        return None if row is None else str(row["name"])

    def has_bot(self, name: str) -> bool:
        with self._lock:
            row = self._db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone()
        return row is not None

    # ---- matches ----------------------------------------------------------------------------

    def create_match(
        self,
        match_id: str,
        game: str,
        settings: dict[str, Any],
        seed: int,
        bots: Sequence[str],
        clock: dict[str, Any],
    ) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO matches (id, game, settings, seed, status, bots, clock, created_at)"
                " VALUES (?, ?, ?, ?, 'waiting', ?, ?, ?)",
                (
                    match_id,
                    game,
                    json.dumps(settings, sort_keys=True),
                    seed,
                    json.dumps(list(bots)),
                    json.dumps(clock, sort_keys=True),
                    now(),
                ),
            )

    def mark_running(self, match_id: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE matches SET status = 'running' WHERE id = ?", (match_id,))

    def finish_match(self, match_id: str, steps: int, seats: Sequence[SeatRecord]) -> None:
        """Record a finished match and its per-seat results in one transaction, once."""
        with self._transaction() as db:
            status = db.execute("SELECT status FROM matches WHERE id = ?", (match_id,)).fetchone()
            if status is None:
                raise StoreError(f"no match {match_id}")
            if status["status"] == "finished":
                raise StoreError(f"match {match_id} is already recorded as finished")
            db.execute(
                "UPDATE matches SET status = 'finished', steps = ?, finished_at = ? WHERE id = ?",
                (steps, now(), match_id),
            )
            db.executemany(
                "INSERT INTO match_seats (match_id, seat, bot_name, bot_version, score, rank,"
                " forfeited, forfeit_reason, timeouts, defaults_played)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        match_id,
                        s.seat,
                        s.bot_name,
                        s.bot_version,
                        s.score,
                        s.rank,
                        int(s.forfeited),
                        s.forfeit_reason,
                        s.timeouts,
                        s.defaults_played,
                    )
                    for s in seats
                ],
            )

    def set_match_log(self, match_id: str, path: str, final_hash: str | None) -> None:
        """Where a match's log is, and its final hash once the log is complete."""
        with self._transaction() as db:
            db.execute(
                "UPDATE matches SET log_path = ?, log_hash = ? WHERE id = ?",
                (path, final_hash, match_id),
            )

    def fail_match(self, match_id: str, reason: str, steps: int = 0) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE matches SET status = 'failed', reason = ?, steps = ?, finished_at = ?"
                " WHERE id = ? AND status != 'finished'",
                (reason, steps, now(), match_id),
            )

    def match(self, match_id: str) -> MatchRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
            if row is None:
                return None
            seats = self._db.execute(
                "SELECT * FROM match_seats WHERE match_id = ? ORDER BY seat", (match_id,)
            ).fetchall()
        return _match_record(row, seats)

    def matches(self, status: str | None = None, limit: int = 100) -> list[MatchRecord]:
        with self._lock:
            if status is None:
                rows = self._db.execute(
                    "SELECT * FROM matches ORDER BY created_at DESC, id LIMIT ?", (limit,)
                ).fetchall()
            else:
                rows = self._db.execute(
                    "SELECT * FROM matches WHERE status = ? ORDER BY created_at DESC, id LIMIT ?",
                    (status, limit),
                ).fetchall()
            seats = {
                row["id"]: self._db.execute(
                    "SELECT * FROM match_seats WHERE match_id = ? ORDER BY seat", (row["id"],)
                ).fetchall()
                for row in rows
            }
        return [_match_record(row, seats[row["id"]]) for row in rows]


def _match_record(row: sqlite3.Row, seats: Sequence[sqlite3.Row]) -> MatchRecord:
    return MatchRecord(
        id=row["id"],
        game=row["game"],
        settings=json.loads(row["settings"]),
        seed=row["seed"],
        status=row["status"],
        bots=json.loads(row["bots"]),
        clock=json.loads(row["clock"]),
        reason=row["reason"],
        steps=row["steps"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        log_path=row["log_path"],
        log_hash=row["log_hash"],
        seats=[
            SeatRecord(
                seat=s["seat"],
                bot_name=s["bot_name"],
                bot_version=s["bot_version"],
                score=s["score"],
                rank=s["rank"],
                forfeited=bool(s["forfeited"]),
                forfeit_reason=s["forfeit_reason"],
                timeouts=s["timeouts"],
                defaults_played=s["defaults_played"],
            )
            for s in seats
        ],
    )


def check_bot_name(name: str) -> None:
    """Bot names are 1-64 characters of letters, digits, ``-``, ``_`` and ``.``."""
    if not 1 <= len(name) <= 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise StoreError(f"bad bot name {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
