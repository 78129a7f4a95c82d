"""What a soak run must find in its store at the end, whatever the faults did: every planned
match recorded exactly once (one finished attempt, the slot's current one, and no other),
every complete log replaying and signed as the store says, and the ratings equal to a replay
of the recorded results in the order they were applied.  Pure reading of a store, so a test
runs it on a small store of its own (``tests/soak/``)."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bisca.server.logs import parse_public_key, verify
from bisca.server.records import MatchStatus
from bisca.server.store import INITIAL, Rating, Store, rate_match

#: Ratings are floats computed by the same code in the same order: equal to this much.
TOLERANCE = 1e-9


@dataclass
class SoakCheck:
    planned: int = 0
    recorded: int = 0
    attempts_failed: int = 0
    logs_verified: int = 0
    ratings_replayed: int = 0
    #: What the faulty bots did, as the finished matches record it.
    seat_timeouts: int = 0
    seats_forfeited: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_store(store: Store, tournaments: Iterable[str]) -> SoakCheck:
    found = SoakCheck()
    games: set[str] = set()
    for name in tournaments:
        stored = store.tournaments.get(name)
        if stored is None:
            found.problems.append(f"tournament {name}: not in the store")
            continue
        games.add(stored.game)
        _check_plan(store, name, found)
    with tempfile.TemporaryDirectory(prefix="bisca-soak-logs-") as folder:
        for match in store.matches.find(MatchStatus.FINISHED, limit=None):
            _check_log(store, match.id, Path(folder), found)
    for game in sorted(games):
        _check_ratings(store, game, found)
    return found


def _check_plan(store: Store, name: str, found: SoakCheck) -> None:
    slots = store.tournaments.slots(name)
    found.planned += len(slots)
    finished = {m.id for m in store.matches.find(MatchStatus.FINISHED, limit=None)}
    failed = {m.id for m in store.matches.find(MatchStatus.FAILED, limit=None)}
    for slot in slots:
        attempts = {slot.planned_id} | {f"{slot.planned_id}-r{n}" for n in range(2, 100)}
        done = sorted(attempts & finished)
        found.attempts_failed += len(attempts & failed)
        if not slot.done or len(done) != 1 or done[0] != slot.match_id:
            found.problems.append(
                f"{name} slot {slot.slot}: done={slot.done}, current {slot.match_id}, "
                f"finished attempts {done} (exactly one, the current, expected)"
            )
        else:
            found.recorded += 1


def _check_log(store: Store, match_id: str, folder: Path, found: SoakCheck) -> None:
    kept = store.logs.get(match_id)
    record = store.matches.get(match_id)
    path: Path | None = None
    key = None
    if kept is not None:
        path = folder / f"{match_id}.binlog"
        path.write_bytes(kept.data)
        key = parse_public_key(kept.public_key) if kept.public_key else None
    elif record is not None and record.log_path:
        path = Path(record.log_path)
    if path is None or record is None:
        found.problems.append(f"match {match_id}: finished, but no log")
        return
    found.seat_timeouts += sum(seat.timeouts for seat in record.seats)
    found.seats_forfeited += sum(seat.forfeited for seat in record.seats)
    verdict = verify(path, key, {match_id: record.log_hash})
    if not verdict.trusted:
        why = verdict.problem or verdict.untrusted or "incomplete"
        found.problems.append(f"match {match_id}: its log does not verify: {why}")
    else:
        found.logs_verified += 1


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE)


def _check_ratings(store: Store, game: str, found: SoakCheck) -> None:
    """Replay the rating history's matches, in the order it applied them, from the recorded
    results; every update and the final leaderboard must be what the store holds."""
    history = store.ratings.history(game)
    order: list[str] = []
    for update in history:
        if not order or order[-1] != update.match_id:
            order.append(update.match_id)
    if len(order) != len(set(order)):
        found.problems.append(f"{game}: a match's rating updates are not together in history")
        return
    by_match: dict[str, dict[str, tuple[float, float]]] = {}
    for update in history:
        by_match.setdefault(update.match_id, {})[update.bot] = (update.mu, update.sigma)
    current: dict[str, Rating] = {}
    for match_id in order:
        record = store.matches.get(match_id)
        if record is None or record.status is not MatchStatus.FINISHED:
            found.problems.append(f"{game}: match {match_id} is rated but not finished")
            continue
        for change in rate_match(game, record.seats, current):
            current[change.bot] = change.after
            stored = by_match[match_id].get(change.bot)
            if stored is None or not (
                _same(stored[0], change.after.mu) and _same(stored[1], change.after.sigma)
            ):
                found.problems.append(
                    f"{game}: match {match_id}, {change.bot}: stored {stored}, replayed "
                    f"({change.after.mu}, {change.after.sigma})"
                )
        found.ratings_replayed += 1
    for row in store.ratings.leaderboard(game):
        replayed = current.get(row.bot, INITIAL)
        if not (_same(row.mu, replayed.mu) and _same(row.sigma, replayed.sigma)):
            found.problems.append(
                f"{game}: {row.bot} rated ({row.mu}, {row.sigma}), replayed "
                f"({replayed.mu}, {replayed.sigma})"
            )
    rated = {m.id for m in store.matches.find(MatchStatus.FINISHED, limit=None, game=game)}
    if not set(order) <= rated:
        found.problems.append(f"{game}: rated matches that are not finished ones")
