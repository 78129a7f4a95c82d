"""The matches: created waiting, then running, then finished with their per-seat results (and,
when rated, their game's ratings, in the same transaction) or failed; and the standings
counted from them."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import TypeVar

from bisca.server.errors import StoreError
from bisca.server.records import MatchRecord, MatchStatus, SeatRecord

from ._backend import Connection
from ._clock import now
from ._database import Database
from ._log_repository import LogRepository
from ._rating_repository import RatingRepository
from ._ratings import RatingChange
from ._records import FinishedMatch, UnfinishedMatch
from ._rows import flag, integer, match_record, optional_text, seat_record, seats_of, text
from ._standings import Incidents, PlayerTotals, Standings
from ._standings import standings as count_standings

T = TypeVar("T")

#: The values of one ``IN (...)`` list (SQLite caps the parameters of one query): matches
#: whose seats, or seeds whose matches, one query reads.
_IN_BATCH = 500


#: The slots of tournaments' plans whose match is not played yet: none begun, or its current
#: attempt not finished (a failed one is played again), that attempt not being the match given
#: (the one asking as it ends).  Parameters: ``MatchStatus.FINISHED``, that match's id or "".
_UNPLAYED_SLOTS = (
    "SELECT t.planned_id AS id, n.game AS game, t.seed AS seed FROM tournament_matches t"
    " JOIN tournaments n ON n.name = t.tournament"
    " LEFT JOIN matches m ON m.id = t.match_id"
    " WHERE (t.match_id IS NULL OR (m.status != ? AND t.match_id != ?))"
)


class MatchRepository:
    def __init__(self, database: Database, ratings: RatingRepository, logs: LogRepository) -> None:
        self._database = database
        self._ratings = ratings
        self._logs = logs
        #: The server process that creates matches through this store (its lease id).
        self.owner: str | None = None

    def create(
        self,
        match_id: str,
        game: str,
        settings: Mapping[str, object],
        seed: int,
        bots: Sequence[str],
        clock: Mapping[str, int | str],
        *,
        rated: bool = False,
        seals_twins: bool = True,
    ) -> None:
        """Record a new match; a ``rated`` one updates its game's ratings when it finishes
        (:meth:`finish_and_rate`); one that ``seals_twins`` keeps the deal of every match
        dealt from its seed sealed while it is not over (:meth:`deal_in_play`)."""
        with self._database.transaction() as db:
            db.execute(
                "INSERT INTO matches (id, game, settings, seed, status, bots, clock, created_at,"
                " rated, server, seals_twins) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    int(seals_twins),
                ),
            )

    def mark_running(self, match_id: str) -> bool:
        """Mark a waiting match running; ``False`` when it is not waiting any more (given up
        meanwhile, e.g. a ladder rotation recorded ahead whose pairing another worker plays
        again): it is not to be played."""
        # Not flushed: the match's end (its result, or its failure) is, and a running match
        # lost in a crash of the database is an unfinished one all the same.
        with self._database.transaction(flushed=False) as db:
            marked = db.execute(
                "UPDATE matches SET status = ? WHERE id = ? AND status = ?",
                (MatchStatus.RUNNING, match_id, MatchStatus.WAITING),
            )
            return bool(marked.rowcount)

    def finish(self, match_id: str, steps: int, seats: Sequence[SeatRecord]) -> None:
        """Record a finished match and its per-seat results in one transaction, once."""
        with self._database.transaction() as db:
            _record_finish(db, match_id, steps, seats)

    def finish_and_rate(
        self,
        match_id: str,
        steps: int,
        seats: Sequence[SeatRecord],
        *,
        log: tuple[str, str | None] | None = None,
    ) -> list[RatingChange]:
        """Record a finished match, its per-seat results, its ``log`` (path and final hash, as
        :meth:`LogRepository.record` records it) and, when the match is rated, its game's
        rating update, all in one transaction, once; returns the rating changes."""
        kept = None if log is None else self._logs.kept(*log)
        with self._database.transaction() as db:
            finished = _record_finish(db, match_id, steps, seats)
            if kept is not None:
                self._logs.record_in(db, match_id, kept)
            if not finished.rated:
                return []
            return self._ratings.rate_finished(db, finished.game, match_id, seats)

    def fail(self, match_id: str, reason: str, steps: int = 0) -> None:
        with self._database.transaction() as db:
            db.execute(
                "UPDATE matches SET status = ?, reason = ?, steps = ?, finished_at = ?"
                " WHERE id = ? AND status != ?",
                (MatchStatus.FAILED, reason, steps, now(), match_id, MatchStatus.FINISHED),
            )

    def get(self, match_id: str) -> MatchRecord | None:
        with self._database.reading() as db:
            row = db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
            if row is None:
                return None
            seats = seats_of(db, match_id)
        return match_record(row, seats)

    def find(
        self,
        status: MatchStatus | None = None,
        limit: int | None = 100,
        *,
        game: str | None = None,
        tournament: str | None = None,
        player: str | None = None,
        since: str | None = None,
        seed: int | None = None,
    ) -> list[MatchRecord]:
        """Matches, the newest first: optionally only one status, one game, the matches a
        tournament's slots point at now, those one player (``adabot.v2``) is seated in, those
        created from ``since`` (a store timestamp) on, those dealt from one ``seed``; at most
        ``limit`` (``None``: all)."""
        where: list[str] = []
        values: list[object] = []
        if status is not None:
            where.append("status = ?")
            values.append(status)
        if game is not None:
            where.append("game = ?")
            values.append(game)
        if seed is not None:
            where.append("seed = ?")
            values.append(seed)
        if tournament is not None:
            where.append("id IN (SELECT match_id FROM tournament_matches WHERE tournament = ?)")
            values.append(tournament)
        if player is not None:
            where.append("bots LIKE ? ESCAPE '\\'")
            values.append(_player_pattern(player))
        if since is not None:
            where.append("created_at >= ?")
            values.append(since)
        query = "SELECT * FROM matches"
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY created_at DESC, id"
        if limit is not None:
            query += " LIMIT ?"
            values.append(limit)
        with self._database.reading() as db:
            rows = db.execute(query, values).fetchall()
            seats: dict[str, list[SeatRecord]] = {text(row, "id"): [] for row in rows}
            for chunk in _chunks(list(seats), _IN_BATCH):
                for seat in db.execute(
                    f"SELECT * FROM match_seats WHERE match_id IN ({', '.join('?' * len(chunk))})"
                    " ORDER BY match_id, seat",
                    chunk,
                ).fetchall():
                    seats[text(seat, "match_id")].append(seat_record(seat))
        return [match_record(row, seats[text(row, "id")]) for row in rows]

    def player_totals(self, player: str) -> PlayerTotals:
        """What :class:`PlayerTotals` says of ``player`` (``adabot.v2``), summed by the store
        from the seats of its finished matches (their bots indexed) and counted among the
        matches not finished (their status indexed): a version's history is never read."""
        # A sum over no seat is NULL, and PostgreSQL's sum of BIGINTs a NUMERIC: each is cast.
        sums = ", ".join(
            f"CAST(COALESCE(SUM({column}), 0) AS BIGINT) AS {column}"
            for column in ("forfeited", "crashes", "timeouts", "illegal_moves", "defaults_played")
        )
        unfinished = [status for status in MatchStatus if status is not MatchStatus.FINISHED]
        with self._database.reading() as db:
            finished = db.execute(
                f"SELECT COUNT(DISTINCT match_id) AS matches, {sums}"
                " FROM match_seats WHERE bot_name = ?",
                (player,),
            ).fetchone()
            others = db.execute(
                f"SELECT COUNT(*) AS matches FROM matches WHERE status IN"
                f" ({', '.join('?' * len(unfinished))}) AND bots LIKE ? ESCAPE '\\'",
                [*unfinished, _player_pattern(player)],
            ).fetchone()
        assert finished is not None and others is not None  # an aggregate's one row
        return PlayerTotals(
            matches=integer(finished, "matches") + integer(others, "matches"),
            forfeits=integer(finished, "forfeited"),
            incidents=Incidents(
                crashes=integer(finished, "crashes"),
                timeouts=integer(finished, "timeouts"),
                illegal_moves=integer(finished, "illegal_moves"),
                defaults_played=integer(finished, "defaults_played"),
            ),
        )

    def deal_in_play(self, game: str, seed: int, *, besides: str | None = None) -> str | None:
        """A match other than ``besides`` dealt from ``game``'s ``seed`` that is waiting or
        running and seals its twins (not a person's table), or a tournament's planned match of
        that deal not played yet (its id), else ``None``: whether a deal is sealed, without
        reading every unfinished match.

        A tournament records a match as it begins it, so the rotations of a duplicate set
        that have not begun are only in its plan: without them, the first rotation's end
        would show its bots the seed of the rotations they play next."""
        query = (
            "SELECT id FROM matches WHERE game = ? AND seed = ? AND status IN (?, ?)"
            " AND seals_twins = 1"
        )
        values: list[object] = [game, seed, MatchStatus.WAITING, MatchStatus.RUNNING]
        if besides is not None:
            query += " AND id != ?"
            values.append(besides)
        # ``besides`` is the current attempt of its own slot.
        planned = _UNPLAYED_SLOTS + " AND t.seed = ? AND n.game = ?"
        unplayed = [MatchStatus.FINISHED, besides or "", seed, game]
        with self._database.reading() as db:
            row = db.execute(query + " LIMIT 1", values).fetchone()
            if row is None:
                row = db.execute(planned + " LIMIT 1", unplayed).fetchone()
        return None if row is None else text(row, "id")

    def deals_in_play(self, deals: Collection[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """Of ``deals`` (``(game, seed)``), each that :meth:`deal_in_play` finds in play, with
        one match (or planned match) that seals it: what a list of matches asks of its page,
        in two indexed reads per 500 seeds, however many matches the store holds or its
        tournaments plan."""
        wanted = set(deals)
        seeds = sorted({seed for _, seed in wanted})
        found: dict[tuple[str, int], str] = {}
        with self._database.reading() as db:
            for chunk in _chunks(seeds, _IN_BATCH):
                marks = ", ".join("?" * len(chunk))
                unfinished = db.execute(
                    "SELECT id, game, seed FROM matches WHERE status IN (?, ?)"
                    f" AND seals_twins = 1 AND seed IN ({marks})",
                    [MatchStatus.WAITING, MatchStatus.RUNNING, *chunk],
                ).fetchall()
                planned = db.execute(
                    _UNPLAYED_SLOTS + f" AND t.seed IN ({marks})",
                    [MatchStatus.FINISHED, "", *chunk],
                ).fetchall()
                for row in [*unfinished, *planned]:
                    deal = (text(row, "game"), integer(row, "seed"))
                    if deal in wanted:
                        found.setdefault(deal, text(row, "id"))
        return found

    def standings(self, game: str, tournament: str | None = None) -> Standings:
        """Wins, draws, losses and head to head over the game's rated finished matches (or
        one tournament's), counted as :mod:`._standings` says."""
        finished = self.find(MatchStatus.FINISHED, None, game=game, tournament=tournament)
        return count_standings(game, (match for match in finished if match.rated))

    def unfinished(self) -> list[UnfinishedMatch]:
        """Every match still waiting or running, with the server that runs it."""
        with self._database.reading() as db:
            rows = db.execute(
                "SELECT id, server FROM matches WHERE status IN (?, ?)",
                (MatchStatus.WAITING, MatchStatus.RUNNING),
            ).fetchall()
        return [UnfinishedMatch(text(row, "id"), optional_text(row, "server")) for row in rows]

    def abandon_unfinished(self, match_ids: Sequence[str], reason: str) -> int:
        """Mark matches that were cut off (left waiting or running by a process that died) as
        failed; returns how many there were."""
        count = 0
        with self._database.transaction() as db:
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


def _player_pattern(player: str) -> str:
    """The ``LIKE`` pattern of the matches ``player`` is seated in: the matches table lists its
    bots as JSON, so the exact quoted name, not a prefix."""
    return "%" + _like_escaped(json.dumps(player)) + "%"


def _like_escaped(literal: str) -> str:
    return literal.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _chunks(items: list[T], size: int) -> Iterator[list[T]]:
    """``items`` in pieces of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _record_finish(
    db: Connection, match_id: str, steps: int, seats: Sequence[SeatRecord]
) -> FinishedMatch:
    """Inside a transaction: mark a match finished with its per-seat results (refused when it
    is unknown or finished already); returns what rating it needs of its row."""
    row = db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
    if row is None:
        raise StoreError(f"no match {match_id}")
    status = MatchStatus(text(row, "status"))
    if status is MatchStatus.FINISHED:
        raise StoreError(f"match {match_id} is already recorded as finished")
    if status is MatchStatus.FAILED:
        # Given up while it ran (its worker stopped answering): the match is played again
        # under another id, and this late result must not count as well.
        raise StoreError(f"match {match_id} was given up ({text(row, 'reason')}); not recorded")
    db.execute(
        "UPDATE matches SET status = ?, steps = ?, finished_at = ? WHERE id = ?",
        (MatchStatus.FINISHED, steps, now(), match_id),
    )
    db.executemany(
        "INSERT INTO match_seats (match_id, seat, bot_name, bot_version, score, rank,"
        " forfeited, forfeit_reason, timeouts, defaults_played, crashes, illegal_moves)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                s.crashes,
                s.illegal_moves,
            )
            for s in seats
        ],
    )
    return FinishedMatch(text(row, "game"), flag(row, "rated"))
