"""What a soak run must find in its store at the end, whatever the faults did.

Of a league's ladder (:func:`check_ladder`, what ``soak.py`` runs): every pairing queued
(its job, as procrastinate keeps it) played to one finished match per rotation (or, where
its one attempt failed, that attempt recorded failed with its reason), none recorded twice,
none never played, no attempt left open (one cut off is replayed or recorded failed, with its
reason), no job left unfinished; every complete log replaying and signed as the store says;
the ratings equal to a replay of the recorded results in the order they were applied.  Of
tournaments (:func:`check_store`): every planned match recorded exactly once (one finished
attempt, the slot's current one, and no other), the logs and the ratings as above.  Pure
reading of a store, so a test runs it on a small store of its own (``tests/soak/``)."""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg.rows import dict_row

from bisca.server.logs import parse_public_key, verify
from bisca.server.records import MatchRecord, MatchStatus, RecordedMatch
from bisca.server.store import INITIAL, Incidents, Rating, Store, rate_match
from bisca.server.tournament.distributed import LADDER_TASK

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


@dataclass(frozen=True)
class QueuedPairing:
    """A ladder pairing as it was queued (a procrastinate job): its job's id and status
    (``todo``, ``doing``, ``succeeded``, ``failed``...), whether a live worker holds it (a
    ``doing`` job whose worker died has none), its game, players, seed and seatings."""

    job: int
    status: str
    held: bool
    game: str
    players: tuple[str, ...]
    seed: int
    seatings: tuple[tuple[str, ...], ...]


def queued_pairings(url: str) -> list[QueuedPairing]:
    """Every ladder job of the store at ``url``, in the order they were queued."""
    with psycopg.connect(url, row_factory=dict_row) as db:
        rows = db.execute(
            "SELECT id, status::text AS status, worker_id, args FROM procrastinate_jobs"
            " WHERE task_name = %s ORDER BY id",
            [LADDER_TASK],
        ).fetchall()
    return [
        QueuedPairing(
            job=int(row["id"]),
            status=str(row["status"]),
            held=row["worker_id"] is not None,
            game=str(row["args"]["game"]),
            players=tuple(row["args"]["players"]),
            seed=int(row["args"]["seed"]),
            seatings=tuple(tuple(seating) for seating in row["args"]["seatings"]),
        )
        for row in rows
    ]


@dataclass
class VersionIncidents(Incidents):
    """A version's finished matches and what went wrong for its seats in them."""

    matches: int = 0


@dataclass
class LadderCheck:
    #: The jobs by their status at the end.
    jobs: Counter[str] = field(default_factory=Counter)
    rotations: int = 0
    #: Rotations with exactly one finished match.
    recorded: int = 0
    #: Rotations whose one attempt failed (its bots could not start...), with its reason.
    rotations_failed: int = 0
    #: Rotations never attempted: their job ended before (its worker lost the store...), or
    #: never will (its worker died).
    dropped: int = 0
    attempts_failed: int = 0
    #: Jobs queued again as new ones, after a cut (a copy of a pairing queued before).
    queued_again: int = 0
    failure_reasons: Counter[str] = field(default_factory=Counter)
    finished: int = 0
    logs_verified: int = 0
    ratings_replayed: int = 0
    #: By player name (``crash.v1``), over the finished matches.
    incidents: dict[str, VersionIncidents] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


#: A job that ended: what it played is final.
_ENDED = frozenset({"succeeded", "failed", "cancelled", "aborted"})


def check_ladder(store: Store, queued: Sequence[QueuedPairing]) -> LadderCheck:
    """The store after a ladder's run, against the pairings it queued (read once every
    worker has stopped: nothing is played any more)."""
    found = LadderCheck()
    matches = store.matches.find(None, limit=None)
    attempts: dict[tuple[str, int, tuple[str, ...]], list[MatchRecord]] = {}
    for match in matches:
        attempts.setdefault((match.game, match.seed, tuple(match.bots)), []).append(match)
        if match.status is MatchStatus.FAILED:
            found.attempts_failed += 1
            found.failure_reasons[_first_line(match.reason)] += 1
            if not match.reason.strip():
                found.problems.append(f"match {match.id}: failed, without a reason")
        elif match.status is not MatchStatus.FINISHED:
            found.problems.append(
                f"match {match.id}: left {match.status.value} (created {match.created_at}): "
                "an attempt lost, neither replayed nor recorded failed"
            )
    planned: set[str] = set()
    # A job cut off is queued again as a new job of the same pairing (``bisca worker`` gives
    # it back): a pairing is its deal, judged by the copy queued last.
    copies: dict[tuple[str, int], list[QueuedPairing]] = {}
    for pairing in queued:
        found.jobs[pairing.status] += 1
        copies.setdefault((pairing.game, pairing.seed), []).append(pairing)
    for same in copies.values():
        found.queued_again += len(same) - 1
        pairing = max(same, key=lambda copy: copy.job)
        dropped = found.dropped
        for seating in pairing.seatings:
            found.rotations += 1
            tried = attempts.get((pairing.game, pairing.seed, seating), [])
            planned.update(match.id for match in tried)
            _check_rotation(pairing, seating, tried, found)
        unplayed = (
            f"{found.dropped - dropped} of its {len(pairing.seatings)} rotations never played "
            "(no attempt of them is recorded)"
        )
        if pairing.status not in _ENDED:
            held = "held by a live worker" if pairing.held else "its worker gone"
            found.problems.append(
                f"ladder job {pairing.job} {pairing.players}: still {pairing.status} at the "
                f"end ({held}), lost; {unplayed}"
            )
        elif found.dropped > dropped:
            found.problems.append(
                f"ladder job {pairing.job} ({pairing.status}) {pairing.players}: {unplayed}"
            )
    for match in matches:
        if match.id not in planned:
            found.problems.append(f"match {match.id} {match.bots}: of no pairing queued")
    with tempfile.TemporaryDirectory(prefix="bisca-soak-logs-") as folder:
        for match in matches:
            if match.status is MatchStatus.FINISHED:
                found.finished += 1
                _count_incidents(match, found)
                _check_log(store, match.id, Path(folder), found)
    for game in sorted({pairing.game for pairing in queued}):
        _check_ratings(store, game, found)
    return found


def _check_rotation(
    pairing: QueuedPairing,
    seating: tuple[str, ...],
    tried: list[MatchRecord],
    found: LadderCheck,
) -> None:
    finished = [match.id for match in tried if match.status is MatchStatus.FINISHED]
    failed = [match for match in tried if match.status is MatchStatus.FAILED]
    what = f"ladder job {pairing.job} ({pairing.status}), seating {list(seating)}"
    if len(finished) > 1:
        found.problems.append(f"{what}: recorded {len(finished)} times: {finished}")
    elif finished:
        found.recorded += 1
    elif failed:
        found.rotations_failed += 1
    else:
        found.dropped += 1


def _count_incidents(match: MatchRecord, found: LadderCheck) -> None:
    for seat in match.seats:
        seen = found.incidents.setdefault(seat.bot_name, VersionIncidents())
        seen.add(seat)
        seen.matches += 1


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(none)"
    return line if len(line) <= 160 else line[:157] + "..."


def _check_log(store: Store, match_id: str, folder: Path, found: SoakCheck | LadderCheck) -> None:
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
    if isinstance(found, SoakCheck):
        found.seat_timeouts += sum(seat.timeouts for seat in record.seats)
        found.seats_forfeited += sum(seat.forfeited for seat in record.seats)
    verdict = verify(path, key, {match_id: RecordedMatch.of(record)})
    if not verdict.trusted:
        why = verdict.problem or verdict.untrusted or "incomplete"
        found.problems.append(f"match {match_id}: its log does not verify: {why}")
    else:
        found.logs_verified += 1


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE)


def _check_ratings(store: Store, game: str, found: SoakCheck | LadderCheck) -> None:
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
