"""The records every room of the server shares: match states, seat results, stored matches.

The referee produces them, the log and the store keep them, the edge and the command line show
them; so they live here, below all of those, and import nothing of the server but the
cleaning of bot-supplied text (:mod:`bisca.server.text`), which every record applies to the
text a bot chose (names, versions, reasons that quote its stderr).  States are
enums end to end: a :class:`MatchStatus` is what the referee holds, what the store writes (its
value is the text in the ``status`` column) and what the edge maps to the protocol's number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from bisca.engine import GAMES
from bisca.server.text import printable

__all__ = [
    "MAX_SEED",
    "BotRecord",
    "MatchRecord",
    "MatchStatus",
    "QueuedBot",
    "SeatEnd",
    "SeatRecord",
    "TournamentSlot",
    "bots_blamed",
    "bots_not_connected",
    "game_places",
    "places",
    "rank_with_forfeits",
    "seat_bot_failed",
]

#: The largest seed a match may have: the store keeps seeds as signed 64-bit integers.
MAX_SEED = 2**63 - 1


class MatchStatus(StrEnum):
    """Where a match stands.  ``WAITING`` for its bots, ``RUNNING``, then one of the two ends."""

    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"

    @property
    def is_over(self) -> bool:
        return self in (MatchStatus.FINISHED, MatchStatus.FAILED)


class SeatEnd(StrEnum):
    """How a seat's match ended for it: played to the end, or forfeited (a default player
    finished it and it ranks last)."""

    COMPLETED = "completed"
    FORFEITED = "forfeited"


@dataclass(frozen=True)
class BotRecord:
    name: str
    created_at: str


@dataclass(frozen=True)
class SeatRecord:
    """One seat's result in a finished match, with what went wrong for it on the way: its
    crashes, timeouts, illegal moves and the defaults the referee played for it."""

    seat: int
    bot_name: str
    bot_version: str
    score: int
    rank: int
    end: SeatEnd
    forfeit_reason: str
    timeouts: int
    defaults_played: int
    #: Times the seat's bot process ended during the match (a crash, a limit; at most one per
    #: match, as the seat is forfeited then), and answers the referee rejected (illegal or
    #: malformed actions).  Zero in records of before they were counted.
    crashes: int = 0
    illegal_moves: int = 0

    def __post_init__(self) -> None:
        for name in ("bot_name", "bot_version", "forfeit_reason"):
            object.__setattr__(self, name, printable(getattr(self, name)))

    @property
    def forfeited(self) -> bool:
        return self.end is SeatEnd.FORFEITED


@dataclass(frozen=True)
class MatchRecord:
    """A match as the store keeps it (``seats`` empty until it finishes)."""

    id: str
    game: str
    settings: dict[str, object]
    seed: int
    status: MatchStatus
    bots: list[str]
    clock: dict[str, int | str]
    reason: str
    steps: int
    created_at: str
    finished_at: str | None
    seats: list[SeatRecord]
    log_path: str | None = None
    log_hash: str | None = None
    rated: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", printable(self.reason))
        object.__setattr__(self, "bots", [printable(bot) for bot in self.bots])


@dataclass(frozen=True)
class SeatOutcome:
    """What the standings and ratings count of one seat: the part of a seat's result a
    match's signed log must agree with."""

    seat: int
    bot_name: str
    score: int
    rank: int
    forfeited: bool


@dataclass(frozen=True)
class RecordedMatch:
    """What a store records of a match against which its log is checked: the log's final
    hash (``None`` while it has no complete one) and the seats' outcomes (none unless it
    finished)."""

    log_hash: str | None
    seats: tuple[SeatOutcome, ...] = ()

    @classmethod
    def of(cls, match: MatchRecord) -> RecordedMatch:
        """What ``match``'s record says, as its log is held to it."""
        return cls(
            match.log_hash,
            tuple(
                SeatOutcome(seat.seat, seat.bot_name, seat.score, seat.rank, seat.forfeited)
                for seat in sorted(match.seats, key=lambda seat: seat.seat)
            ),
        )


@dataclass(frozen=True)
class TournamentSlot:
    """One planned match of a tournament and where it stands: ``match_id`` is its current
    attempt (``None`` before the first), ``status`` that attempt's match status."""

    slot: int
    planned_id: str
    pairing: int
    seating: int
    seed: int
    bots: tuple[str, ...]
    match_id: str | None = None
    attempts: int = 0
    status: MatchStatus | None = None

    @property
    def done(self) -> bool:
        return self.status is MatchStatus.FINISHED


@dataclass(frozen=True)
class QueuedBot:
    """A league bot online and idle, waiting to be matched."""

    bot: str
    games: tuple[str, ...]
    since: float  # trio clock
    since_text: str  # wall clock, RFC 3339


def rank_with_forfeits(scores: Sequence[int], forfeited: Sequence[bool]) -> list[int]:
    """Competition ranks (0 best) by score among the seats that finished; forfeited seats
    rank last, tied with each other."""
    finishing = [score for score, out in zip(scores, forfeited, strict=True) if not out]
    return [
        len(finishing) if out else sum(1 for other in finishing if other > score)
        for score, out in zip(scores, forfeited, strict=True)
    ]


class Ranked(Protocol):
    """A seat's result as the store, the wire and the log's footer hold it."""

    @property
    def seat(self) -> int: ...

    @property
    def rank(self) -> int: ...


def places(seats: Sequence[Ranked], side_of: Callable[[int], int]) -> list[int]:
    """Each seat's place as people count it, from 1: one more than the number of *sides*
    placed above it, so partners share a place and a losing Belote team is 2nd, not 3rd (the
    stored ``rank`` counts seats, 0 best).  What every result printed for people says."""
    return [
        1 + len({side_of(other.seat) for other in seats if other.rank < seat.rank})
        for seat in seats
    ]


def game_places(game: str, seats: Sequence[Ranked]) -> list[int]:
    """:func:`places` at a match of ``game`` (whose sides its rules say; each seat its own
    side when the game is not known, as in a log cut before its header)."""
    rules = GAMES.get(game)
    return places(seats, rules.side_of if rules is not None else int)


# ---- why a match failed before it started ------------------------------------------------------
# A failed match's reason is public text; these two forms name the bots that failed it (the seat
# whose bot could not start or ended, the bots that never connected), and :func:`bots_blamed`
# reads them back: the ladder rests a version its last matches blame (``league/_pace.py``).


def seat_bot_failed(seat: int, what: str) -> str:
    """The reason of a match whose seat's bot could not start or ended before it did."""
    return f"seat {seat}'s bot {what}"


def bots_not_connected(timeout_s: float, missing: Sequence[str]) -> str:
    """The reason of a match whose ``missing`` bots did not connect within its join timeout."""
    return f"bots not connected after {timeout_s:g} s: {', '.join(missing)}"


def bots_blamed(reason: str, bots: Sequence[str]) -> set[str]:
    """The bots of a match seated as ``bots`` that its failure ``reason`` names as its cause
    (one of the two forms above; none for any other reason)."""
    blamed = {bot for seat, bot in enumerate(bots) if reason.startswith(seat_bot_failed(seat, ""))}
    head, _, missing = reason.partition(": ")
    if head.startswith("bots not connected after "):
        blamed |= set(missing.split(", ")) & set(bots)
    return blamed
