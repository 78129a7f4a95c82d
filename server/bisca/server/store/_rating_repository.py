"""Each game's ratings: the current ones (its leaderboard) and every update ever applied.

A rated match is rated in the transaction that records it finished (:meth:`RatingRepository.
rate_finished`, called by the matches); a tournament's matches are rated in the order of its
plan, whichever worker finishes first.
"""

from __future__ import annotations

from collections.abc import Sequence

from bisca.server.errors import StoreError
from bisca.server.records import MatchStatus, SeatRecord

from ._backend import Connection, Row
from ._clock import now
from ._database import Database
from ._leaderboard import LeaderboardRow, leaderboard_row
from ._ratings import RatingChange, rate_match
from ._records import RatingUpdate, StoredRating, VersionState
from ._rows import integer, optional_text, real, seats_of, text

#: Planned matches read at a time while ratings catch up with a tournament's plan.
_RATING_BATCH = 64


class RatingRepository:
    def __init__(self, database: Database) -> None:
        self._database = database

    def leaderboard(
        self, game: str, limit: int | None = None, *, retired: bool = False
    ) -> list[LeaderboardRow]:
        """The game's leaderboard, best first: sorted by μ − 3σ, then μ, then name.  A league's
        version that is retired (or failed) is on it only with ``retired`` (its own page): a
        rating raised and then frozen by retiring its version (review 52) holds no place among
        those still playing."""
        query = "SELECT * FROM ratings r WHERE r.game = ?"
        values: list[object] = [game]
        if not retired:
            query += (
                " AND NOT EXISTS (SELECT 1 FROM bot_versions v"
                " WHERE r.bot = v.bot || '.v' || v.version AND v.state IN (?, ?))"
            )
            values += [VersionState.RETIRED, VersionState.FAILED]
        with self._database.reading() as db:
            rows = db.execute(
                query + " ORDER BY r.mu - 3 * r.sigma DESC, r.mu DESC, r.bot", values
            ).fetchall()
        if limit is not None:
            rows = rows[:limit]
        ratings = [_stored_rating(row) for row in rows]
        return [
            leaderboard_row(
                index + 1,
                stored.bot,
                stored.rating,
                stored.matches,
                stored.result_mean,
                stored.result_m2,
            )
            for index, stored in enumerate(ratings)
        ]

    def history(
        self, game: str, bot: str | None = None, *, newest: int | None = None
    ) -> list[RatingUpdate]:
        """Every rating update of a game (optionally one bot's), oldest first; only the
        ``newest`` ones when given."""
        query = "SELECT * FROM rating_history WHERE game = ?"
        values: list[object] = [game]
        if bot is not None:
            query += " AND bot = ?"
            values.append(bot)
        order = " ORDER BY created_at, match_id, bot"
        if newest is not None:
            order = " ORDER BY created_at DESC, match_id DESC, bot DESC LIMIT ?"
            values.append(newest)
        with self._database.reading() as db:
            rows = db.execute(query + order, values).fetchall()
        updates = [_rating_update(row) for row in rows]
        return updates[::-1] if newest is not None else updates

    def rate_finished(
        self, db: Connection, game: str, match_id: str, seats: Sequence[SeatRecord]
    ) -> list[RatingChange]:
        """Inside the transaction that recorded a rated match finished: update its game's
        ratings, and return the match's changes (none yet when it is a tournament's and an
        earlier planned match is still to finish)."""
        # One rating update of a game at a time: each reads the ratings the last wrote.
        self._database.lock(f"ratings:{game}")
        planned = db.execute(
            "SELECT tournament FROM tournament_matches WHERE match_id = ?", (match_id,)
        ).fetchone()
        if planned is None:
            return _apply_ratings(db, game, match_id, seats)
        return _rate_in_plan_order(db, text(planned, "tournament"), game).get(match_id, [])


def _stored_rating(row: Row) -> StoredRating:
    return StoredRating(
        game=text(row, "game"),
        bot=text(row, "bot"),
        mu=real(row, "mu"),
        sigma=real(row, "sigma"),
        matches=integer(row, "matches"),
        result_mean=real(row, "result_mean"),
        result_m2=real(row, "result_m2"),
        updated_at=text(row, "updated_at"),
    )


def _rating_update(row: Row) -> RatingUpdate:
    return RatingUpdate(
        match_id=text(row, "match_id"),
        bot=text(row, "bot"),
        game=text(row, "game"),
        rank=integer(row, "rank"),
        result=real(row, "result"),
        mu_before=real(row, "mu_before"),
        sigma_before=real(row, "sigma_before"),
        mu=real(row, "mu"),
        sigma=real(row, "sigma"),
        created_at=text(row, "created_at"),
    )


def _apply_ratings(
    db: Connection, game: str, match_id: str, seats: Sequence[SeatRecord]
) -> list[RatingChange]:
    """Inside a transaction: rate a finished match, then write the new ratings, the running
    result statistics (Welford's mean and sum of squared deviations) and the history rows."""
    bots = sorted({s.bot_name for s in seats})
    marks = ", ".join("?" for _ in bots)
    stored = {
        rating.bot: rating
        for rating in map(
            _stored_rating,
            db.execute(
                f"SELECT * FROM ratings WHERE game = ? AND bot IN ({marks})", (game, *bots)
            ).fetchall(),
        )
    }
    current = {bot: rating.rating for bot, rating in stored.items()}
    changes = rate_match(game, seats, current)
    stamp = now()
    db.execute("UPDATE matches SET rated_at = ? WHERE id = ?", (stamp, match_id))
    for change in changes:
        before = stored.get(change.bot)
        count, mean, m2 = (
            (0, 0.0, 0.0)
            if before is None
            else (before.matches, before.result_mean, before.result_m2)
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


def _rate_in_plan_order(
    db: Connection, tournament: str, game: str
) -> dict[str, list[RatingChange]]:
    """Inside a transaction holding the game's rating lock: rate the tournament's finished
    matches in the order of its plan, from its first unrated slot up to the first slot not
    finished yet, and move its cursor there; returns the changes by match.  So however many
    workers play it, and in whatever order they finish, the ratings are those of one run in
    plan order."""
    row = db.execute("SELECT rated_slots FROM tournaments WHERE name = ?", (tournament,)).fetchone()
    if row is None:
        # Unreachable while the schema's foreign keys hold: a planned match has its plan.
        raise StoreError(f"match of unknown tournament {tournament!r}")
    cursor = integer(row, "rated_slots")
    changes: dict[str, list[RatingChange]] = {}
    while True:
        slots = db.execute(
            "SELECT t.slot, t.match_id, m.status, m.rated_at FROM tournament_matches t"
            " LEFT JOIN matches m ON m.id = t.match_id"
            " WHERE t.tournament = ? AND t.slot >= ? ORDER BY t.slot LIMIT ?",
            (tournament, cursor, _RATING_BATCH),
        ).fetchall()
        for slot in slots:
            if optional_text(slot, "status") != MatchStatus.FINISHED:
                break
            if optional_text(slot, "rated_at") is None:
                match_id = text(slot, "match_id")
                changes[match_id] = _apply_ratings(db, game, match_id, seats_of(db, match_id))
            cursor = integer(slot, "slot") + 1
        else:
            if len(slots) == _RATING_BATCH:
                continue
        break
    db.execute("UPDATE tournaments SET rated_slots = ? WHERE name = ?", (cursor, tournament))
    return changes
