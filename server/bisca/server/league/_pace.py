"""What holds a version back, read from the store, for the ladder's draw and for the page that
says why a version waits: its pace (the matches it started in the last :data:`PACE_WINDOW`),
and a rest after its bot failed its last matches before they started (:func:`resting`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bisca.server.records import MatchRecord, MatchStatus, bots_blamed
from bisca.server.store import Store, stamp

from ._ladder import PACE_WINDOW

UNPLAYED_LADDER_ROTATION = (
    "not played: its ladder pairing stopped before this rotation's turn (a match of the "
    "pairing could not be played)"
)
CUT_OFF_LADDER_ATTEMPT = (
    "cut off: the worker playing its ladder pairing stopped or lost the store; the pairing's "
    "missing matches are played again"
)
#: Why a rotation of the pairing in play is failed when the server stops before it was played:
#: the pairing did not stop at a failed match (:data:`UNPLAYED_LADDER_ROTATION` says it did).
SERVER_STOPPED_ROTATION = (
    "not played: the server stopped before this rotation was played (no match of its ladder "
    "pairing failed)"
)
#: The reasons of a ladder match that failed without being played (not counted as tried).
NOT_PLAYED_LADDER_REASONS = frozenset(
    {UNPLAYED_LADDER_ROTATION, CUT_OFF_LADDER_ATTEMPT, SERVER_STOPPED_ROTATION}
)


def unplayed_ladder_rotation(why: str) -> str:
    """:data:`UNPLAYED_LADDER_ROTATION`, naming why its pairing stopped (an error of its job)."""
    return f"{UNPLAYED_LADDER_ROTATION}: {why}"


def not_played_ladder_match(reason: str) -> bool:
    """Whether a failed ladder match's ``reason`` says it was never played (not tried)."""
    return reason in NOT_PLAYED_LADDER_REASONS or reason.startswith(f"{UNPLAYED_LADDER_ROTATION}: ")


#: Matches in a row a version's bot may fail before they start before the ladder rests it.
FAILING_STREAK = 3
#: The first rest; each failure more in a row doubles it, up to :data:`LONGEST_REST`.
FIRST_REST = timedelta(minutes=10)
LONGEST_REST = timedelta(hours=24)
#: A version's newest matches read to count its streak (each pairing that fails at its first
#: rotation leaves three more unplayed).
_STREAK_READ = 64
#: How far back a streak is counted (a rest ends at most :data:`LONGEST_REST` after its last
#: failure, so older ones can only have lengthened a rest long over).
_STREAK_SPAN = timedelta(days=7)


def in_pace_window(store: Store, player: str, now: datetime) -> list[MatchRecord]:
    """The matches ``player`` (a version, ``mybot.v3``) started in the window up to ``now``:
    not those its pairing never came to (a pairing stopped at a failed rotation leaves three,
    which took nobody's time) nor a worker's attempts cut off (played again, and counted
    then)."""
    found = store.matches.find(None, None, player=player, since=stamp(now - PACE_WINDOW))
    return [match for match in found if not not_played_ladder_match(match.reason)]


def started_in_pace_window(store: Store, player: str, now: datetime) -> list[datetime]:
    """When ``player`` started each match of the window up to ``now``."""
    return [datetime.fromisoformat(m.created_at) for m in in_pace_window(store, player, now)]


def seconds_played(matches: list[MatchRecord], now: datetime) -> float:
    """The seconds ``matches`` (:func:`in_pace_window`'s) lasted, one not over up to ``now``:
    what a version's play costs the others' time on a one-table ladder."""
    seconds = 0.0
    for match in matches:
        started = datetime.fromisoformat(match.created_at)
        ended = datetime.fromisoformat(match.finished_at) if match.finished_at else now
        seconds += max(0.0, (ended - started).total_seconds())
    return seconds


def failed_before_start_by(match: MatchRecord, player: str) -> bool:
    """Whether ``match`` failed before it started because of ``player``'s bot: it could not
    start, ended before the match did, or never connected (``records.bots_blamed``)."""
    return match.status is MatchStatus.FAILED and player in bots_blamed(match.reason, match.bots)


@dataclass(frozen=True)
class Resting:
    """A version the ladder leaves out until ``until``: its bot failed its last ``streak``
    matches before they started, the newest ``last``."""

    streak: int
    last: MatchRecord
    until: datetime

    @property
    def reason(self) -> str:
        return (
            f"waiting: its bot failed its last {self.streak} matches before they started "
            f"(the last, {self.last.id}: {self.last.reason}); the ladder tries it again from "
            f"{self.until:%H:%M} UTC"
        )


def resting(store: Store, player: str, now: datetime) -> Resting | None:
    """The rest ``player`` is in at ``now``, if its bot failed its last :data:`FAILING_STREAK`
    matches (or more) before they started: :data:`FIRST_REST` from its last failure, doubled
    for each failure more, at most :data:`LONGEST_REST`.  Worked out from the store each time,
    nothing kept: a bot that fails because the machine cannot run bots (a broken sandbox) rests
    like the others and plays again once the machine is mended; a failed match is not rated,
    so without the rest such a version stayed a newcomer, the anchor of every pairing, and
    stopped the whole ladder (review 52)."""
    since = stamp(now - _STREAK_SPAN)
    tried = sorted(
        (
            match
            for match in store.matches.find(None, _STREAK_READ, player=player, since=since)
            if match.status.is_over and not not_played_ladder_match(match.reason)
        ),
        key=_ended,
        reverse=True,
    )
    streak = 0
    for match in tried:
        if not failed_before_start_by(match, player):
            break
        streak += 1
    if streak < FAILING_STREAK:
        return None
    last = tried[0]
    rest = min(FIRST_REST * 2 ** (streak - FAILING_STREAK), LONGEST_REST)
    until = datetime.fromisoformat(_ended(last)) + rest
    return Resting(streak, last, until) if now < until else None


def _ended(match: MatchRecord) -> str:
    """When a match that is over ended (a store timestamp: they sort as they read)."""
    return match.finished_at or match.created_at
