"""The store: bots, matches and their per-seat results, each game's ratings with their
history, the plans of tournaments, the workers of a shared store and (in a shared store) the
match logs themselves.

One class on two back ends (``_backend.py``): SQLite, one file in the data directory (the
default), or PostgreSQL, shared by the machines of a league.  Its SQL is written once; the
schema is versioned (``_migrations.py``).

Calls are synchronous and serialised by a lock; the referee calls them from worker threads
(``trio.to_thread``) so the event loop never waits on the disk or the network.  A failure of
the database itself (a lost connection, a damaged file) is a :class:`StoreError` naming the
store.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

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

from ._backend import Backend, Connection, StoreKind
from ._leaderboard import LeaderboardRow, leaderboard_row
from ._migrations import MIGRATIONS
from ._postgresql import PostgresBackend
from ._ratings import Rating, RatingChange, rate_match
from ._sqlite import SqliteBackend
from ._standings import Standings
from ._standings import standings as count_standings

TOKEN_PREFIX = "bisca_"
#: The schemes of ``--store``: ``sqlite:PATH`` or a PostgreSQL URL.
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def now() -> str:
    return stamp(datetime.now(UTC))


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class StoredLog:
    """A complete match log kept in a shared store, and the key that signed it."""

    match_id: str
    data: bytes
    log_hash: str
    public_key: str


@dataclass(frozen=True)
class StoredTournament:
    """A tournament as the store keeps it: ``spec`` is its file's text (empty for one that
    only ran locally before migration 6)."""

    name: str
    game: str
    source: str
    spec: str


@dataclass(frozen=True)
class WorkerRecord:
    """A ``bisca worker`` process as the store knows it (``seen_at``: its last heartbeat)."""

    name: str
    host: str
    pid: int
    concurrency: int
    started_at: str
    seen_at: str
    stopped_at: str | None
    note: str
    running: tuple[str, ...] = ()
    #: The lease it announced (``None``: a worker of an older version, which announced none).
    lease_seconds: float | None = None

    def alive(self, at: datetime, default_lease_seconds: float) -> bool:
        """Whether it beat within its own lease (``default_lease_seconds`` if it gave none)."""
        if self.stopped_at is not None:
            return False
        seen = datetime.fromisoformat(self.seen_at.replace("Z", "+00:00"))
        lease = default_lease_seconds if self.lease_seconds is None else self.lease_seconds
        return at - seen <= timedelta(seconds=lease)


def open_store(url: str | None, data_dir: Path) -> Store:
    """The store ``--store`` names: ``sqlite:PATH``, ``postgresql://...``, or (``None``) the
    SQLite file of ``data_dir``.  ``data_dir`` keeps the files a store does not (logs as they
    are written, keys, bot output)."""
    if url is None:
        return Store.in_directory(data_dir)
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:")
        if not path:
            raise StoreError("--store sqlite: needs a path, e.g. sqlite:bisca-data/bisca.sqlite3")
        return Store(Path(path))
    if url.startswith(POSTGRESQL_SCHEMES):
        return Store(PostgresBackend(url), data_dir)
    raise StoreError(
        f"unknown store {url!r}: give sqlite:PATH or postgresql://USER@HOST:PORT/DATABASE"
    )


class Store:
    """The store of one data directory (SQLite) or of a league (PostgreSQL)."""

    def __init__(self, where: Path | str | Backend, data_dir: Path | None = None) -> None:
        """Open (or create) the store: a SQLite file by its path, or a back end with the data
        directory of its local files; a ``StoreError`` naming it when it cannot be used (its
        directory is a file, it is not a database, the server cannot be reached...)."""
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
        self._backend = backend
        self._lock = threading.Lock()
        try:
            self._migrate()
        except BaseException:
            backend.close()
            raise
        #: The server process that creates matches through this store (its lease id).
        self.owner: str | None = None
        #: The public key (``ed25519:HEX``) that signs the logs recorded through this store.
        self.log_key = ""

    @classmethod
    def in_directory(cls, data_dir: Path | str) -> Store:
        return cls(DataDir(Path(data_dir)).store)

    @property
    def kind(self) -> StoreKind:
        return self._backend.kind

    @property
    def shared(self) -> bool:
        """Whether several machines may share this store (so complete logs are kept in it,
        and a server cannot tell other machines' matches from its own cut-off ones)."""
        return self._backend.keeps_logs

    def describe(self) -> str:
        return self._backend.describe()

    def close(self) -> None:
        with self._lock:
            self._backend.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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
            raise StoreError(
                f"the store {self.describe()} failed: {text[0] if text else type(problem).__name__}"
            ) from problem

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        with self._lock, self._guarded():
            yield self._backend.connection()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self._lock, self._guarded():
            self._backend.begin()
            db = self._backend.connection()
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _migrate(self) -> None:
        # Several workers may open a new shared store at once: one migrates, the others wait
        # and find it done.
        with self._lock, self._guarded(), self._backend.migrating():
            version = self._backend.schema_version()
            if version > len(MIGRATIONS):
                raise StoreError(
                    f"{self.describe()} has schema version {version}, newer than this Bisca "
                    f"({len(MIGRATIONS)}); upgrade Bisca"
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

    @property
    def schema_version(self) -> int:
        with self._reading():
            return self._backend.schema_version()

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
        except self._backend.integrity_errors:
            raise StoreError(f"a bot named {name!r} is already registered") from None
        return token

    def bots(self) -> list[BotRecord]:
        with self._reading() as db:
            rows = db.execute("SELECT name, created_at FROM bots ORDER BY name").fetchall()
        return [BotRecord(row["name"], row["created_at"]) for row in rows]

    def bot_for_token(self, token: str) -> str | None:
        """The name of the bot whose token this is, or ``None``."""
        with self._reading() as db:
            row = db.execute(
                "SELECT name FROM bots WHERE token_hash = ?", (hash_token(token),)
            ).fetchone()
        return None if row is None else str(row["name"])

    def has_bot(self, name: str) -> bool:
        with self._reading() as db:
            row = db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone()
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
            game = row["game"]
            # One rating update of a game at a time: each reads the ratings the last wrote.
            self._backend.lock(f"ratings:{game}")
            planned = db.execute(
                "SELECT tournament FROM tournament_matches WHERE match_id = ?", (match_id,)
            ).fetchone()
            if planned is None:
                return _apply_ratings(db, game, match_id, seats)
            return _rate_in_plan_order(db, planned["tournament"], game).get(match_id, [])

    def leaderboard(self, game: str, limit: int | None = None) -> list[LeaderboardRow]:
        """The game's leaderboard, best first: sorted by μ − 3σ, then μ, then name."""
        with self._reading() as db:
            rows = db.execute(
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
        with self._reading() as db:
            rows = db.execute(query + " ORDER BY created_at, match_id, bot", values).fetchall()
        return [dict(row) for row in rows]

    # ---- tournaments ------------------------------------------------------------------------

    def save_tournament_plan(
        self,
        name: str,
        game: str,
        digest: str,
        source: str,
        slots: Sequence[TournamentSlot],
        spec: str = "",
    ) -> bool:
        """Store a tournament's plan (and ``spec``, its file's text, for the workers that
        play it); ``False`` when the same plan is stored already (a resumed run).  A
        different plan under the same name is refused."""
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
                "INSERT INTO tournaments (name, game, plan_digest, source, planned, created_at,"
                " spec) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, game, digest, source, len(slots), now(), spec),
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

    def tournament_slots(self, name: str, slot: int | None = None) -> list[TournamentSlot]:
        """A tournament's planned matches (or the one numbered ``slot``), each with the
        status of its current attempt."""
        query = (
            "SELECT t.*, m.status AS status FROM tournament_matches t"
            " LEFT JOIN matches m ON m.id = t.match_id WHERE t.tournament = ?"
        )
        values: tuple[object, ...] = (name,)
        if slot is not None:
            query += " AND t.slot = ?"
            values = (name, slot)
        with self._reading() as db:
            rows = db.execute(query + " ORDER BY t.slot", values).fetchall()
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

    def tournament(self, name: str) -> StoredTournament | None:
        """A stored tournament: its game, where its file was read and the file's text."""
        with self._reading() as db:
            row = db.execute(
                "SELECT game, source, spec FROM tournaments WHERE name = ?", (name,)
            ).fetchone()
        return (
            None if row is None else StoredTournament(name, row["game"], row["source"], row["spec"])
        )

    def tournament_names(self) -> list[str]:
        with self._reading() as db:
            rows = db.execute("SELECT name FROM tournaments ORDER BY created_at, name").fetchall()
        return [row["name"] for row in rows]

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
        with self._reading() as db:
            rows = db.execute(
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

    # ---- workers ----------------------------------------------------------------------------

    def worker_seen(
        self,
        name: str,
        host: str,
        pid: int,
        concurrency: int,
        note: str,
        lease_seconds: float | None = None,
    ) -> None:
        """A worker's heartbeat (its first one registers it), with the lease it beats within."""
        stamp_now = now()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO workers (name, host, pid, concurrency, started_at, seen_at, note,"
                " lease_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET"
                " seen_at = excluded.seen_at, note = excluded.note,"
                " lease_seconds = excluded.lease_seconds, stopped_at = NULL",
                (name, host, pid, concurrency, stamp_now, stamp_now, note, lease_seconds),
            )

    def worker_stopped(self, name: str, note: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE workers SET stopped_at = ?, note = ? WHERE name = ?", (now(), note, name)
            )

    def workers(self) -> list[WorkerRecord]:
        """Every worker that ever ran on this store, the latest first, each with the matches
        it runs now."""
        with self._reading() as db:
            rows = db.execute("SELECT * FROM workers ORDER BY started_at DESC, name").fetchall()
            running = db.execute(
                "SELECT id, server FROM matches WHERE status IN (?, ?) ORDER BY id",
                (MatchStatus.WAITING, MatchStatus.RUNNING),
            ).fetchall()
        by_worker: dict[str, list[str]] = {}
        for match in running:
            by_worker.setdefault(match["server"] or "", []).append(match["id"])
        return [
            WorkerRecord(
                name=row["name"],
                host=row["host"],
                pid=row["pid"],
                concurrency=row["concurrency"],
                started_at=row["started_at"],
                seen_at=row["seen_at"],
                stopped_at=row["stopped_at"],
                note=row["note"],
                running=tuple(by_worker.get(row["name"], ())),
                lease_seconds=row["lease_seconds"],
            )
            for row in rows
        ]

    def set_match_log(self, match_id: str, path: str, final_hash: str | None) -> None:
        """Where a match's log is, and its final hash once the log is complete.  A shared
        store keeps a complete log's bytes too (with :attr:`log_key`, the key that signed
        it), in the same transaction: any machine reads it there."""
        data = None
        if final_hash is not None and self.shared:
            try:
                data = Path(path).read_bytes()
            except OSError as problem:
                raise StoreError(f"cannot read the log {path} to store it: {problem}") from None
        with self._transaction() as db:
            db.execute(
                "UPDATE matches SET log_path = ?, log_hash = ? WHERE id = ?",
                (path, final_hash, match_id),
            )
            if data is not None:
                db.execute(
                    "INSERT INTO match_logs (match_id, data, log_hash, public_key, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (match_id, data, final_hash, self.log_key, now()),
                )

    def stored_log(self, match_id: str) -> StoredLog | None:
        """A complete log kept in the store (a shared one's), or ``None``."""
        with self._reading() as db:
            row = db.execute("SELECT * FROM match_logs WHERE match_id = ?", (match_id,)).fetchone()
        if row is None:
            return None
        return StoredLog(match_id, bytes(row["data"]), row["log_hash"], row["public_key"])

    def log_hashes(self) -> dict[str, str | None]:
        """Every match recorded, with the final hash of its log (``None`` while it has no
        complete one)."""
        with self._reading() as db:
            rows = db.execute("SELECT id, log_hash FROM matches").fetchall()
        return {row["id"]: row["log_hash"] for row in rows}

    def fail_match(self, match_id: str, reason: str, steps: int = 0) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE matches SET status = ?, reason = ?, steps = ?, finished_at = ?"
                " WHERE id = ? AND status != ?",
                (MatchStatus.FAILED, reason, steps, now(), match_id, MatchStatus.FINISHED),
            )

    def match(self, match_id: str) -> MatchRecord | None:
        with self._reading() as db:
            row = db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
            if row is None:
                return None
            seats = db.execute(
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
        with self._reading() as db:
            rows = db.execute(query, values).fetchall()
            seats: dict[str, list[Any]] = {row["id"]: [] for row in rows}
            for chunk in _chunks(list(seats), 500):
                for seat in db.execute(
                    f"SELECT * FROM match_seats WHERE match_id IN ({', '.join('?' * len(chunk))})"
                    " ORDER BY match_id, seat",
                    chunk,
                ).fetchall():
                    seats[seat["match_id"]].append(seat)
        return [_match_record(row, seats[row["id"]]) for row in rows]


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    """``items`` in pieces of at most ``size`` (SQLite caps the parameters of one query)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _record_finish(db: Connection, match_id: str, steps: int, seats: Sequence[SeatRecord]) -> Any:
    """Inside a transaction: mark a match finished with its per-seat results (refused when it
    is unknown or finished already); returns its row as it was."""
    row: Any = db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
    if row is None:
        raise StoreError(f"no match {match_id}")
    if row["status"] == MatchStatus.FINISHED:
        raise StoreError(f"match {match_id} is already recorded as finished")
    if row["status"] == MatchStatus.FAILED:
        # Given up while it ran (its worker stopped answering): the match is played again
        # under another id, and this late result must not count as well.
        raise StoreError(f"match {match_id} was given up ({row['reason']}); not recorded")
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
    db: Connection, game: str, match_id: str, seats: Sequence[SeatRecord]
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
    db.execute("UPDATE matches SET rated_at = ? WHERE id = ?", (stamp, match_id))
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


def _seats_of(db: Connection, match_id: str) -> list[SeatRecord]:
    rows = db.execute(
        "SELECT * FROM match_seats WHERE match_id = ? ORDER BY seat", (match_id,)
    ).fetchall()
    return [_seat_record(s) for s in rows]


#: Planned matches read at a time while ratings catch up with a tournament's plan.
_RATING_BATCH = 64


def _rate_in_plan_order(
    db: Connection, tournament: str, game: str
) -> dict[str, list[RatingChange]]:
    """Inside a transaction holding the game's rating lock: rate the tournament's finished
    matches in the order of its plan, from its first unrated slot up to the first slot not
    finished yet, and move its cursor there; returns the changes by match.  So however many
    workers play it, and in whatever order they finish, the ratings are those of one run in
    plan order."""
    row = db.execute("SELECT rated_slots FROM tournaments WHERE name = ?", (tournament,)).fetchone()
    cursor = int(row["rated_slots"])
    changes: dict[str, list[RatingChange]] = {}
    while True:
        slots = db.execute(
            "SELECT t.slot, t.match_id, m.status, m.rated_at FROM tournament_matches t"
            " LEFT JOIN matches m ON m.id = t.match_id"
            " WHERE t.tournament = ? AND t.slot >= ? ORDER BY t.slot LIMIT ?",
            (tournament, cursor, _RATING_BATCH),
        ).fetchall()
        for slot in slots:
            if slot["status"] != MatchStatus.FINISHED:
                break
            if slot["rated_at"] is None:
                match_id = slot["match_id"]
                changes[match_id] = _apply_ratings(db, game, match_id, _seats_of(db, match_id))
            cursor = slot["slot"] + 1
        else:
            if len(slots) == _RATING_BATCH:
                continue
        break
    db.execute("UPDATE tournaments SET rated_slots = ? WHERE name = ?", (cursor, tournament))
    return changes


def _seat_record(s: Any) -> SeatRecord:
    return SeatRecord(
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


def _match_record(row: Any, seats: Sequence[Any]) -> MatchRecord:
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
        seats=[_seat_record(s) for s in seats],
    )


def check_bot_name(name: str) -> None:
    """Bot names are 1-64 characters of letters, digits, ``-``, ``_`` and ``.``."""
    if not 1 <= len(name) <= 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise StoreError(f"bad bot name {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
