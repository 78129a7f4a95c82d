"""Belote's plain values: settings, actions, events and the per-seat observation.

Each maps 1:1 onto a protobuf message of ``proto/bisca/v1/belote.proto``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .._core import InvalidSettingsError
from ._cards import BeloteCard, Suit

# --------------------------------------------------------------------------------------------
# Settings


@dataclass(frozen=True, slots=True)
class BeloteSettings:
    """A match's settings (rules page, "A match").

    ``deals`` is the number of deals played.  With ``target_score`` set, the match instead ends
    after the deal in which a team reaches it, or after ``max_deals`` deals.  With ``duplicate``
    every shuffle is played twice (the second time every seat one place on), so the deal counts
    must be even and the match only ends on a complete pair.
    """

    deals: int = 4
    first_dealer: int = 0
    target_score: int | None = None
    max_deals: int = 24
    duplicate: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.first_dealer <= 3:
            raise InvalidSettingsError(f"first_dealer must be a seat 0..3, got {self.first_dealer}")
        if self.target_score is None:
            if not 1 <= self.deals <= 1000:
                raise InvalidSettingsError(f"deals must be 1..1000, got {self.deals}")
            if self.duplicate and self.deals % 2:
                raise InvalidSettingsError(
                    f"duplicate mode plays deals in pairs: deals must be even, got {self.deals}"
                )
        else:
            if not 1 <= self.target_score <= 100_000:
                raise InvalidSettingsError(
                    f"target_score must be 1..100000, got {self.target_score}"
                )
            if not 1 <= self.max_deals <= 1000:
                raise InvalidSettingsError(f"max_deals must be 1..1000, got {self.max_deals}")
            if self.duplicate and self.max_deals % 2:
                raise InvalidSettingsError(
                    "duplicate mode plays deals in pairs: max_deals must be even, "
                    f"got {self.max_deals}"
                )

    @property
    def deal_limit(self) -> int:
        """The most deals this match can last."""
        return self.deals if self.target_score is None else self.max_deals


# --------------------------------------------------------------------------------------------
# Actions


@dataclass(frozen=True, slots=True)
class Pass:
    """A bid of *pass*, in either bidding round."""


@dataclass(frozen=True, slots=True)
class Take:
    """A bid of *take*: the turned card's suit in round 1, another suit in round 2."""

    suit: Suit


@dataclass(frozen=True, slots=True)
class PlayCard:
    card: BeloteCard


BeloteAction = Pass | Take | PlayCard

# --------------------------------------------------------------------------------------------
# Events


@dataclass(frozen=True, slots=True)
class DealStarted:
    deal_number: int
    dealer: int
    #: In duplicate mode, the deal whose shuffle this one replays with seats one place on.
    replay_of: int | None


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """Cards given to ``seat`` (private to it): 5 at the deal, 3 (or 2 + the turned card for the
    taker) when the hands are completed."""

    seat: int
    cards: tuple[BeloteCard, ...]


@dataclass(frozen=True, slots=True)
class CardTurned:
    card: BeloteCard


@dataclass(frozen=True, slots=True)
class BidMade:
    seat: int
    round: int
    #: The suit taken, or ``None`` for a pass.
    suit: Suit | None


@dataclass(frozen=True, slots=True)
class DealVoided:
    deal_number: int


@dataclass(frozen=True, slots=True)
class CardPlayed:
    seat: int
    card: BeloteCard


class Announcement(Enum):
    BELOTE = "belote"
    REBELOTE = "rebelote"


@dataclass(frozen=True, slots=True)
class BeloteAnnounced:
    seat: int
    announcement: Announcement


@dataclass(frozen=True, slots=True)
class TrickWon:
    trick_number: int
    winner: int
    #: Card points of the trick, including the 10 of the last trick (not capot's 100).
    points: int


@dataclass(frozen=True, slots=True)
class DealResult:
    """The scoring of one deal (rules page, "Scoring a deal"); teams are indexed 0 and 1."""

    deal_number: int
    dealer: int
    void: bool
    taker: int | None
    trump: Suit | None
    card_points: tuple[int, int]
    belote_points: tuple[int, int]
    capot: bool
    contract_made: bool
    scores: tuple[int, int]


@dataclass(frozen=True, slots=True)
class DealScored:
    result: DealResult
    match_scores: tuple[int, int]


@dataclass(frozen=True, slots=True)
class MatchEnded:
    match_scores: tuple[int, int]
    deals_played: int


BeloteEvent = (
    DealStarted
    | CardsDealt
    | CardTurned
    | BidMade
    | DealVoided
    | CardPlayed
    | BeloteAnnounced
    | TrickWon
    | DealScored
    | MatchEnded
)

# --------------------------------------------------------------------------------------------
# Observation


class Phase(Enum):
    BIDDING_ROUND_1 = "bidding_round_1"
    BIDDING_ROUND_2 = "bidding_round_2"
    PLAYING = "playing"
    MATCH_OVER = "match_over"


@dataclass(frozen=True, slots=True)
class Trick:
    trick_number: int
    leader: int
    #: The cards in the order played.
    plays: tuple[CardPlayed, ...]
    #: ``None`` while the trick is still being played.
    winner: int | None
    points: int


@dataclass(frozen=True, slots=True)
class BeloteObservation:
    """What one seat may see (rules page, "What each seat may see")."""

    seat: int
    phase: Phase
    to_act: int | None
    deal_number: int
    dealer: int
    hand: tuple[BeloteCard, ...]
    turned_card: BeloteCard
    bids: tuple[BidMade, ...]
    trump: Suit | None
    taker: int | None
    #: Tricks of this deal, the last one possibly still being played.
    tricks: tuple[Trick, ...]
    announcements: tuple[BeloteAnnounced, ...]
    #: Card points each team has won in this deal so far.
    card_points: tuple[int, int]
    match_scores: tuple[int, int]
    deal_results: tuple[DealResult, ...]
