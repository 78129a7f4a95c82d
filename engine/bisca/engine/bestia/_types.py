"""Bestia's plain values: settings, actions, events and the per-seat observation.

Every value is a frozen, slotted dataclass (or an enum), so it can be hashed, compared and
mapped 1:1 onto a protobuf message: fields are ints, bools, enums, cards, other such
dataclasses, optional ones, or flat tuples of one of these.  Seats are numbered in play
order: after seat ``s`` comes ``(s + 1) % seats``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from .._core import InvalidSettingsError, MalformedActionError
from ._cards import BestiaCard, Suit

# --------------------------------------------------------------------------------------------
# Settings

AnteMode = Literal["all", "dealer"]
ANTE_MODES: tuple[AnteMode, ...] = ("all", "dealer")


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidSettingsError(f"{name} must be an int, got {value!r}")
    if not low <= value <= high:
        raise InvalidSettingsError(f"{name} must be {low}..{high}, got {value}")


@dataclass(frozen=True, slots=True)
class BestiaSettings:
    """A match's settings (rules page, "Settings of a match").

    ``seats``: 4 to 7.  ``stake``: the chips of one ante (and of a buio, controbuio or call).
    ``ante_mode``: ``"all"`` (every seat antes into an empty pot) or ``"dealer"`` (the dealer
    antes at each of its deals, pot empty or not).  ``rounds``: how many times each seat deals,
    the last round being the giro.  ``blind_raises``: allow buio and controbuio.
    ``giro_max_hands``: the most hands one dealer deals in the giro.  ``first_dealer``: the seat
    that deals the first hand.
    """

    seats: int = 5
    stake: int = 10
    ante_mode: AnteMode = "all"
    rounds: int = 2
    blind_raises: bool = True
    giro_max_hands: int = 10
    first_dealer: int = 0

    def __post_init__(self) -> None:
        _check_int("seats", self.seats, 4, 7)
        _check_int("stake", self.stake, 1, 1_000_000)
        if self.ante_mode not in ANTE_MODES:
            raise InvalidSettingsError(
                f"ante_mode must be 'all' or 'dealer', got {self.ante_mode!r}"
            )
        _check_int("rounds", self.rounds, 1, 100)
        if not isinstance(self.blind_raises, bool):
            raise InvalidSettingsError(f"blind_raises must be a bool, got {self.blind_raises!r}")
        _check_int("giro_max_hands", self.giro_max_hands, 1, 1000)
        _check_int("first_dealer", self.first_dealer, 0, self.seats - 1)


# --------------------------------------------------------------------------------------------
# Actions


@dataclass(frozen=True, slots=True)
class Pass:
    """Decline whatever is offered: the buio or controbuio, the rubata, opening, assisting."""


@dataclass(frozen=True, slots=True)
class Raise:
    """Add one stake blind: the buio (seat after the dealer) or the controbuio."""


@dataclass(frozen=True, slots=True)
class Call:
    """Answer a buio or controbuio by paying one stake and staying in."""


@dataclass(frozen=True, slots=True)
class Fold:
    """Answer a buio or controbuio by leaving the hand (cards to the folded pile)."""


@dataclass(frozen=True, slots=True)
class Steal:
    """The dealer's rubata: take the turned card blind and open with its suit as trump."""


@dataclass(frozen=True, slots=True)
class Open:
    """Batto: undertake to win at least 2 tricks."""


@dataclass(frozen=True, slots=True)
class Assist:
    """Undertake to win at least 1 trick in the opener's game."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """The accomodo: discard these 0-4 cards (none = stand pat) and be dealt as many.

    The cards are kept in deck order, so ``Exchange((a, b)) == Exchange((b, a))``.
    """

    discards: tuple[BestiaCard, ...]

    def __post_init__(self) -> None:
        discards = self.discards
        if not isinstance(discards, tuple) or not all(isinstance(c, BestiaCard) for c in discards):
            raise MalformedActionError("Exchange takes a tuple of Bestia cards")
        ordered = tuple(sorted(discards, key=lambda c: c.index))
        if ordered != discards:
            object.__setattr__(self, "discards", ordered)


@dataclass(frozen=True, slots=True)
class Discard:
    """The discard of a dealer who stole: one card, back to 4."""

    card: BestiaCard


@dataclass(frozen=True, slots=True)
class PlayCard:
    card: BestiaCard


BestiaAction = Pass | Raise | Call | Fold | Steal | Open | Assist | Exchange | Discard | PlayCard

# --------------------------------------------------------------------------------------------
# Events


@dataclass(frozen=True, slots=True)
class HandStarted:
    hand_number: int
    dealer: int
    #: Whether this hand belongs to the giro, the closing round.
    giro: bool
    #: 1 for a dealer's first hand of its turn, 2, 3, ... for its repeated hands in the giro.
    dealer_hand: int


@dataclass(frozen=True, slots=True)
class AntePaid:
    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class HandDealt:
    """The 4 cards dealt to each seat (in the omniscient record only: nobody has looked yet):
    seat ``s`` got ``cards[4 * s : 4 * s + 4]``."""

    cards: tuple[BestiaCard, ...]


@dataclass(frozen=True, slots=True)
class TrumpTurned:
    card: BestiaCard
    #: 1 for the card turned at the deal, 2 and 3 for the trump changes.
    number: int


class Blind(Enum):
    """A decision of the blind phase (step 3)."""

    BUIO = "buio"
    NO_BUIO = "no_buio"
    CONTROBUIO = "controbuio"
    NO_CONTROBUIO = "no_controbuio"
    CALL = "call"
    #: Out of the hand: the seat's cards go face down to the folded pile.
    FOLD = "fold"


@dataclass(frozen=True, slots=True)
class BlindMove:
    seat: int
    move: Blind
    #: Chips paid into the pot: one stake for a buio, a controbuio or a call, else 0.
    amount: int


@dataclass(frozen=True, slots=True)
class Folded:
    """At the end of the declaration, ``seat`` (which neither opened nor assisted) gave its
    cards face down to the folded pile."""

    seat: int


@dataclass(frozen=True, slots=True)
class TrumpStolen:
    seat: int
    card: BestiaCard


@dataclass(frozen=True, slots=True)
class StealDeclined:
    seat: int


@dataclass(frozen=True, slots=True)
class HandLooked:
    """``seat`` looks at its cards (private to it)."""

    seat: int
    cards: tuple[BestiaCard, ...]


class Declaration(Enum):
    PASS = "pass"
    OPEN = "open"
    ASSIST = "assist"


@dataclass(frozen=True, slots=True)
class Declared:
    seat: int
    declaration: Declaration
    #: Which trump the declaration was made under (1, 2 or 3).
    trump_number: int


@dataclass(frozen=True, slots=True)
class Exchanged:
    """``seat`` discarded ``count`` cards in the accomodo (public: the count only)."""

    seat: int
    count: int


@dataclass(frozen=True, slots=True)
class Discarded:
    """The cards ``seat`` discarded (private to it)."""

    seat: int
    cards: tuple[BestiaCard, ...]


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """Cards dealt to ``seat`` from the stock in the accomodo (private to it)."""

    seat: int
    cards: tuple[BestiaCard, ...]


class RefillSource(Enum):
    FOLDED_PILE = "folded_pile"
    DISCARDS = "discards"


@dataclass(frozen=True, slots=True)
class StockRefilled:
    """The stock was refilled, shuffled, from ``source`` (hidden from every seat)."""

    source: RefillSource
    #: The new cards from the top of the stock down.
    cards: tuple[BestiaCard, ...]


@dataclass(frozen=True, slots=True)
class CardBurnt:
    """The dealer burnt this card before a last player's 4th card (hidden from every seat)."""

    card: BestiaCard


@dataclass(frozen=True, slots=True)
class DealerDiscarded:
    """The dealer who stole discarded its one card (public; the card itself is private)."""

    seat: int


@dataclass(frozen=True, slots=True)
class CardPlayed:
    seat: int
    card: BestiaCard


@dataclass(frozen=True, slots=True)
class TrickWon:
    trick_number: int
    winner: int


@dataclass(frozen=True, slots=True)
class Settlement:
    """The settlement of a played hand (rules page, step 10); per-seat tuples by seat."""

    #: ``P``, the pot when card play started.
    pot: int
    #: ``P // 4``.
    per_trick: int
    opener: int
    #: In risk order: the order they assisted.
    assistants: tuple[int, ...]
    tricks: tuple[int, ...]
    #: Each seat's share of the pot, remainder included.
    shares: tuple[int, ...]
    #: What each seat pays for being in bestia.
    bestia: tuple[int, ...]
    opener_made: bool
    #: What the opener receives from the assistants in bestia (0 when the opener is in bestia).
    to_opener: int
    #: The pot of the next hand: the bestia payments when the opener is in bestia, else 0.
    next_pot: int
    #: Each seat's chip change from this settlement (antes and raises not included).
    net: tuple[int, ...]


class HandEnd(Enum):
    PLAYED = "played"
    VOID = "void"
    LONE_SURVIVOR = "lone_survivor"
    UNOPPOSED = "unopposed"


@dataclass(frozen=True, slots=True)
class HandResult:
    hand_number: int
    dealer: int
    end: HandEnd
    #: The seat that took the pot without play (lone survivor, unopposed opener).
    taker: int | None
    #: What it took.
    taken: int
    settlement: Settlement | None
    #: The pot left for the next hand.
    pot: int
    balances: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HandEnded:
    result: HandResult


@dataclass(frozen=True, slots=True)
class PotSplit:
    """After ``giro_max_hands`` hands of one dealer in the giro, the pot left is shared equally
    among all seats, the remainder one chip at a time in play order from ``dealer + 1``."""

    dealer: int
    shares: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MatchEnded:
    balances: tuple[int, ...]
    hands_played: int


BestiaEvent = (
    HandStarted
    | AntePaid
    | HandDealt
    | TrumpTurned
    | BlindMove
    | Folded
    | TrumpStolen
    | StealDeclined
    | HandLooked
    | Declared
    | Exchanged
    | Discarded
    | CardsDealt
    | StockRefilled
    | CardBurnt
    | DealerDiscarded
    | CardPlayed
    | TrickWon
    | HandEnded
    | PotSplit
    | MatchEnded
)

# --------------------------------------------------------------------------------------------
# Observation


class Phase(Enum):
    """Whose decision the match waits for (one per kind of decision)."""

    BUIO = "buio"
    BUIO_CALL = "buio_call"
    CONTROBUIO = "controbuio"
    CONTROBUIO_CALL = "controbuio_call"
    RUBATA = "rubata"
    OPENING = "opening"
    ASSISTING = "assisting"
    EXCHANGE = "exchange"
    DEALER_DISCARD = "dealer_discard"
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


@dataclass(frozen=True, slots=True)
class BestiaObservation:
    """What one seat may see (rules page, "What each seat may see")."""

    seat: int
    phase: Phase
    to_act: int | None
    hand_number: int
    dealer: int
    giro: bool
    #: Hands dealt by this dealer in this turn, this one included.
    dealer_hand: int
    stake: int
    pot: int
    balances: tuple[int, ...]
    #: Seats not folded (in card play: the players).
    in_hand: tuple[bool, ...]
    #: How many cards each seat holds.
    hand_sizes: tuple[int, ...]
    #: This seat's cards; empty until it may look at them (step 5) and once it is out.
    hand: tuple[BestiaCard, ...]
    looked: bool
    #: Every card turned this hand, the current trump's last.
    turned_cards: tuple[BestiaCard, ...]
    trump: Suit
    #: The antes paid into this hand's pot.
    antes: tuple[AntePaid, ...]
    #: The blind phase of this hand.
    blind: tuple[BlindMove, ...]
    stolen: bool
    declarations: tuple[Declared, ...]
    opener: int | None
    #: In risk order.
    assistants: tuple[int, ...]
    #: How many cards each player discarded, in the order they exchanged.
    exchanges: tuple[Exchanged, ...]
    #: This hand's tricks, the last one possibly still being played.
    tricks: tuple[Trick, ...]
    tricks_won: tuple[int, ...]
    results: tuple[HandResult, ...]
