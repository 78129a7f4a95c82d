"""The embedded store: one SQLite file in the data directory.

It keeps the registered bots (only a hash of each token), the matches and their per-seat
results, each game's ratings with their history, and the plans of tournaments.  The schema
is versioned (``_migrations.py``).

Calls are synchronous and serialised by a lock; the referee calls them from worker threads
(``trio.to_thread``) so the event loop never waits on the disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from bisca.server.datadir import DataDir
from bisca.server.errors import StoreError
from bisca.server.records import (
    BotRecord,
    MatchRecord,
    MatchStatus,
    SeatEnd,
    SeatRecord,
    TournamentSlot,
)

from ._leaderboard import LeaderboardRow, leaderboard_row
from ._migrations import MIGRATIONS
from ._ratings import Rating, RatingChange, rate_match
from ._standings import Standings
from ._standings import standings as count_standings

TOKEN_PREFIX = "bisca_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Store:
    """The SQLite store of one data directory."""

    def __init__(self, path: Path | str) -> None:
        """Open (or create) the store; a ``StoreError`` naming the path when it cannot be
        used (its directory is a file, it is not a database, ...)."""
        self.path = Path(path)
        folder = self.path.parent
        if folder.exists() and not folder.is_dir():
            raise StoreError(f"{folder} is not a directory: give a data directory")
        try:
            DataDir(folder).create()
        except OSError as problem:
            raise StoreError(f"cannot create the data directory {folder}: {problem}") from None
        _refuse_a_lost_store(self.path)
        try:
            # Readable by the server's owner only (SQLite gives its -wal and -shm files the
            # same mode).
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        except OSError as problem:
            raise StoreError(f"cannot open the store {self.path}: {problem}") from None
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as problem:
            raise StoreError(f"cannot open the store {self.path}: {problem}") from None
        try:
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._migrate()
        except (sqlite3.Error, StoreError) as problem:
            self._db.close()
            if isinstance(problem, StoreError):
                raise
            raise StoreError(f"cannot open the store {self.path}: {problem}") from None
        #: The server process that creates matches through this store (its lease id).
        self.owner: str | None = None

    @classmethod
    def in_directory(cls, data_dir: Path | str) -> Store:
        return cls(DataDir(Path(data_dir)).store)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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
        settings: Mapping[str, object],
        seed: int,
        bots: Sequence[str],
        clock: Mapping[str, int | str],
        *,
        rated: bool = False,
    ) -> None:
        """Record a new match; a ``rated`` one updates its game's ratings when it finishes
        (:meth:`finish_and_rate`)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO matches (id, game, settings, seed, status, bots, clock, created_at,"
                " rated, server) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    match_id,
                    game,
                    json.dumps(settings, sort_keys=True),
                    seed,
                    MatchStatus.WAITING,
                    json.dumps(list(bots)),
                    json.dumps(clock, sort_keys=True),
                    now(),
                    int(rated),
                    self.owner,
                ),
            )

    def mark_running(self, match_id: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE matches SET status = ? WHERE id = ?", (MatchStatus.RUNNING, match_id)
            )

    def finish_match(self, match_id: str, steps: int, seats: Sequence[SeatRecord]) -> None:
        """Record a finished match and its per-seat results in one transaction, once."""
        with self._transaction() as db:
            _record_finish(db, match_id, steps, seats)

    def finish_and_rate(
        self, match_id: str, steps: int, seats: Sequence[SeatRecord]
    ) -> list[RatingChange]:
        """Record a finished match, its per-seat results and, when the match is rated, its
        game's rating update, all in one transaction, once; returns the rating changes."""
        with self._transaction() as db:
            row = _record_finish(db, match_id, steps, seats)
            if not row["rated"]:
                return []
            return _apply_ratings(db, row["game"], match_id, seats)

    def leaderboard(self, game: str, limit: int | None = None) -> list[LeaderboardRow]:
        """The game's leaderboard, best first: sorted by μ − 3σ, then μ, then name."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM ratings WHERE game = ? ORDER BY mu - 3 * sigma DESC, mu DESC, bot",
                (game,),
            ).fetchall()
        if limit is not None:
            rows = rows[:limit]
        return [
            leaderboard_row(
                index + 1,
                row["bot"],
                Rating(row["mu"], row["sigma"]),
                row["matches"],
                row["result_mean"],
                row["result_m2"],
            )
            for index, row in enumerate(rows)
        ]

    def standings(self, game: str, tournament: str | None = None) -> Standings:
        """Wins, draws, losses and head to head over the game's rated finished matches (or
        one tournament's), counted as :mod:`._standings` says."""
        finished = self.matches(MatchStatus.FINISHED, None, game=game, tournament=tournament)
        return count_standings(game, (match for match in finished if match.rated))

    def rating_history(self, game: str, bot: str | None = None) -> list[dict[str, object]]:
        """Every rating update of a game (optionally one bot's), oldest first."""
        query = "SELECT * FROM rating_history WHERE game = ?"
        values: tuple[str, ...] = (game,)
        if bot is not None:
            query += " AND bot = ?"
            values = (game, bot)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY created_at, rowid", values).fetchall()
        return [dict(row) for row in rows]

    # ---- tournaments ------------------------------------------------------------------------

    def save_tournament_plan(
        self,
        name: str,
        game: str,
        digest: str,
        source: str,
        slots: Sequence[TournamentSlot],
    ) -> bool:
        """Store a tournament's plan; ``False`` when the same plan is stored already (a
        resumed run).  A different plan under the same name is refused."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT plan_digest, source FROM tournaments WHERE name = ?", (name,)
            ).fetchone()
            if row is not None:
                if row["plan_digest"] != digest:
                    raise StoreError(
                        f"this data directory holds another plan for tournament {name!r} "
                        f"(from {row['source']}); give this one another name or another "
                        "data directory"
                    )
                return False
            db.execute(
                "INSERT INTO tournaments (name, game, plan_digest, source, planned, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (name, game, digest, source, len(slots), now()),
            )
            db.executemany(
                "INSERT INTO tournament_matches (tournament, slot, planned_id, pairing, seating,"
                " seed, bots) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        name,
                        slot.slot,
                        slot.planned_id,
                        slot.pairing,
                        slot.seating,
                        slot.seed,
                        json.dumps(list(slot.bots)),
                    )
                    for slot in slots
                ],
            )
            return True

    def tournament_slots(self, name: str) -> list[TournamentSlot]:
        """A tournament's planned matches, each with the status of its current attempt."""
        with self._lock:
            rows = self._db.execute(
                "SELECT t.*, m.status AS status FROM tournament_matches t"
                " LEFT JOIN matches m ON m.id = t.match_id"
                " WHERE t.tournament = ? ORDER BY t.slot",
                (name,),
            ).fetchall()
        return [
            TournamentSlot(
                slot=row["slot"],
                planned_id=row["planned_id"],
                pairing=row["pairing"],
                seating=row["seating"],
                seed=row["seed"],
                bots=tuple(json.loads(row["bots"])),
                match_id=row["match_id"],
                attempts=row["attempts"],
                status=None if row["status"] is None else MatchStatus(row["status"]),
            )
            for row in rows
        ]

    def start_tournament_attempt(self, name: str, slot: int, match_id: str) -> None:
        """Point a planned match at its new attempt, before the attempt's match row exists:
        a crash in between leaves the slot unplayed, never played twice."""
        with self._transaction() as db:
            db.execute(
                "UPDATE tournament_matches SET match_id = ?, attempts = attempts + 1"
                " WHERE tournament = ? AND slot = ?",
                (match_id, name, slot),
            )

    def unfinished_matches(self) -> list[tuple[str, str | None]]:
        """Every match still waiting or running, with the server that runs it (``None`` for
        matches created before servers were recorded)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, server FROM matches WHERE status IN (?, ?)",
                (MatchStatus.WAITING, MatchStatus.RUNNING),
            ).fetchall()
        return [(row["id"], row["server"]) for row in rows]

    def abandon_unfinished(self, match_ids: Sequence[str], reason: str) -> int:
        """Mark matches that were cut off (left waiting or running by a process that died) as
        failed; returns how many there were."""
        count = 0
        with self._transaction() as db:
            for match_id in match_ids:
                count += db.execute(
                    "UPDATE matches SET status = ?, reason = ?, finished_at = ?"
                    " WHERE id = ? AND status IN (?, ?)",
                    (
                        MatchStatus.FAILED,
                        reason,
                        now(),
                        match_id,
                        MatchStatus.WAITING,
                        MatchStatus.RUNNING,
                    ),
                ).rowcount
        return count

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
                "UPDATE matches SET status = ?, reason = ?, steps = ?, finished_at = ?"
                " WHERE id = ? AND status != ?",
                (MatchStatus.FAILED, reason, steps, now(), match_id, MatchStatus.FINISHED),
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

    def matches(
        self,
        status: MatchStatus | None = None,
        limit: int | None = 100,
        *,
        game: str | None = None,
        tournament: str | None = None,
    ) -> list[MatchRecord]:
        """Matches, the newest first: optionally only one status, one game, or the matches a
        tournament's slots point at now; at most ``limit`` (``None``: all of them)."""
        where: list[str] = []
        values: list[object] = []
        if status is not None:
            where.append("status = ?")
            values.append(status)
        if game is not None:
            where.append("game = ?")
            values.append(game)
        if tournament is not None:
            where.append("id IN (SELECT match_id FROM tournament_matches WHERE tournament = ?)")
            values.append(tournament)
        query = "SELECT * FROM matches"
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY created_at DESC, id"
        if limit is not None:
            query += " LIMIT ?"
            values.append(limit)
        with self._lock:
            rows = self._db.execute(query, values).fetchall()
            seats: dict[str, list[sqlite3.Row]] = {row["id"]: [] for row in rows}
            for chunk in _chunks(list(seats), 500):
                for seat in self._db.execute(
                    f"SELECT * FROM match_seats WHERE match_id IN ({', '.join('?' * len(chunk))})"
                    " ORDER BY match_id, seat",
                    chunk,
                ):
                    seats[seat["match_id"]].append(seat)
        return [_match_record(row, seats[row["id"]]) for row in rows]


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    """``items`` in pieces of at most ``size`` (SQLite caps the parameters of one query)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _record_finish(
    db: sqlite3.Connection, match_id: str, steps: int, seats: Sequence[SeatRecord]
) -> sqlite3.Row:
    """Inside a transaction: mark a match finished with its per-seat results (refused when it
    is unknown or finished already); returns its row as it was."""
    row: sqlite3.Row | None = db.execute(
        "SELECT * FROM matches WHERE id = ?", (match_id,)
    ).fetchone()
    if row is None:
        raise StoreError(f"no match {match_id}")
    if row["status"] == MatchStatus.FINISHED:
        raise StoreError(f"match {match_id} is already recorded as finished")
    db.execute(
        "UPDATE matches SET status = ?, steps = ?, finished_at = ? WHERE id = ?",
        (MatchStatus.FINISHED, steps, now(), match_id),
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
    return row


def _apply_ratings(
    db: sqlite3.Connection, game: str, match_id: str, seats: Sequence[SeatRecord]
) -> list[RatingChange]:
    """Inside a transaction: rate a finished match, then write the new ratings, the running
    result statistics (Welford's mean and sum of squared deviations) and the history rows."""
    bots = sorted({s.bot_name for s in seats})
    marks = ", ".join("?" for _ in bots)
    rows = {
        row["bot"]: row
        for row in db.execute(
            f"SELECT * FROM ratings WHERE game = ? AND bot IN ({marks})", (game, *bots)
        ).fetchall()
    }
    current = {bot: Rating(row["mu"], row["sigma"]) for bot, row in rows.items()}
    changes = rate_match(game, seats, current)
    stamp = now()
    for change in changes:
        row = rows.get(change.bot)
        count, mean, m2 = (
            (0, 0.0, 0.0) if row is None else (row["matches"], row["result_mean"], row["result_m2"])
        )
        count += 1
        delta = change.result - mean
        mean += delta / count
        m2 += delta * (change.result - mean)
        db.execute(
            "INSERT INTO ratings (game, bot, mu, sigma, matches, result_mean, result_m2,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (game, bot) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma,"
            " matches = excluded.matches, result_mean = excluded.result_mean,"
            " result_m2 = excluded.result_m2, updated_at = excluded.updated_at",
            (game, change.bot, change.after.mu, change.after.sigma, count, mean, m2, stamp),
        )
        db.execute(
            "INSERT INTO rating_history (match_id, bot, game, rank, result, mu_before,"
            " sigma_before, mu, sigma, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                match_id,
                change.bot,
                game,
                change.rank,
                change.result,
                change.before.mu,
                change.before.sigma,
                change.after.mu,
                change.after.sigma,
                stamp,
            ),
        )
    return changes


def _match_record(row: sqlite3.Row, seats: Sequence[sqlite3.Row]) -> MatchRecord:
    return MatchRecord(
        id=row["id"],
        game=row["game"],
        settings=json.loads(row["settings"]),
        seed=row["seed"],
        status=MatchStatus(row["status"]),
        bots=json.loads(row["bots"]),
        clock=json.loads(row["clock"]),
        reason=row["reason"],
        steps=row["steps"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        log_path=row["log_path"],
        log_hash=row["log_hash"],
        rated=bool(row["rated"]),
        seats=[
            SeatRecord(
                seat=s["seat"],
                bot_name=s["bot_name"],
                bot_version=s["bot_version"],
                score=s["score"],
                rank=s["rank"],
                end=SeatEnd.FORFEITED if s["forfeited"] else SeatEnd.COMPLETED,
                forfeit_reason=s["forfeit_reason"],
                timeouts=s["timeouts"],
                defaults_played=s["defaults_played"],
            )
            for s in seats
        ],
    )


def recorded_log_hashes(path: Path) -> dict[str, str | None]:
    """Every match the store at ``path`` records, with the final hash of its log (``None``
    while it has no complete one); read-only, so checking logs never changes a store."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as problem:
        raise StoreError(f"cannot read the store {path}: {problem}") from None
    try:
        rows = db.execute("SELECT id, log_hash FROM matches").fetchall()
    except sqlite3.Error as problem:
        raise StoreError(f"cannot read the store {path}: {problem}") from None
    finally:
        db.close()
    return {str(match_id): log_hash for match_id, log_hash in rows}


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


def check_bot_name(name: str) -> None:
    """Bot names are 1-64 characters of letters, digits, ``-``, ``_`` and ``.``."""
    if not 1 <= len(name) <= 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise StoreError(f"bad bot name {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
