"""The Belote match state: dealing, the two bidding rounds, the tricks and the scoring.

Each phase has its own legal-action and apply function (``_legal_bidding`` / ``_apply_bid``,
``_legal_cards`` / ``_apply_card``).  Hot paths work on the interned cards' slots and on
preallocated action and event objects, because bots search and benchmarks play millions of
random actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final, Self

from .._core import Outcome
from .._game import GameState
from .._rng import DealRng
from .._tricks import plays_on_the_table, strongest_play
from ._cards import (
    BELOTE_POINTS,
    CAPOT_POINTS,
    DECK,
    LAST_TRICK_BONUS,
    TOTAL_CARD_POINTS,
    BeloteCard,
    Rank,
    Suit,
)
from ._types import (
    Announcement,
    BeloteAction,
    BeloteAnnounced,
    BeloteEvent,
    BeloteObservation,
    BeloteSettings,
    BidMade,
    CardPlayed,
    CardsDealt,
    CardTurned,
    DealResult,
    DealScored,
    DealStarted,
    DealVoided,
    MatchEnded,
    Pass,
    Phase,
    PlayCard,
    Take,
    Trick,
    TrickWon,
)

SEATS: Final = 4
_EVERYONE: Final = (1 << SEATS) - 1  # the audience of a public event
_PASS: Final = Pass()
_TAKE: Final = tuple(Take(suit) for suit in Suit)
_PLAY: Final = tuple(PlayCard(card) for card in DECK)
_PLAYED: Final = tuple(tuple(CardPlayed(seat, card) for card in DECK) for seat in range(SEATS))
_WIN_TRUMP: Final = 100  # added to a trump's order in its trick_strength, above every led-suit card


def team_of(seat: int) -> int:
    return seat & 1


# ---- who wins a trick (rules page, "Playing the tricks") ----------------------------------


def trick_strength(card: BeloteCard, led_suit: int, trump: int) -> int:
    """How strongly ``card`` competes in a trick led in ``led_suit`` with ``trump`` as trump.

    The card of highest strength wins the trick; the engine decides every trick with this
    function.  Every trump ranks above every card of the led suit (trumps in the order
    J 9 A 10 K Q 8 7, the led suit in the order A 10 K Q J 9 8 7), and a card of another suit
    is -1: it cannot win.  Two cards that can win never tie.  ``led_suit`` and ``trump`` are
    :class:`Suit` values (the trick's first card's suit, the deal's trump).
    """
    if card.suit == trump:
        return _WIN_TRUMP + card.trump_order
    if card.suit == led_suit:
        return card.plain_order
    return -1


#: ``trick_strength`` of every card by index, for each trump and led suit, and every card's
#: points for each trump: the hot paths look them up instead of calling per card.
_STRENGTHS: Final = tuple(
    tuple(tuple(trick_strength(c, led, trump) for c in DECK) for led in Suit) for trump in Suit
)
_POINTS: Final = tuple(tuple(c.points(trump) for c in DECK) for trump in Suit)
#: The bids each seat can make, made once: a pass and a take of each suit, in either round.
_PASSED: Final = tuple((BidMade(seat, 1, None), BidMade(seat, 2, None)) for seat in range(SEATS))
_TOOK: Final = tuple(
    tuple(tuple(BidMade(seat, round_number, suit) for suit in Suit) for round_number in (1, 2))
    for seat in range(SEATS)
)
_ROUND_1_BIDS: Final[tuple[tuple[BeloteAction, ...], ...]] = tuple(
    (_PASS, _TAKE[turned]) for turned in Suit
)
_ROUND_2_BIDS: Final[tuple[tuple[BeloteAction, ...], ...]] = tuple(
    (_PASS, *(_TAKE[suit] for suit in Suit if suit != turned)) for turned in Suit
)
# Enum members are slow to look up on their class: the hot paths use these.
_PLAYING: Final = Phase.PLAYING
_ROUND_1: Final = Phase.BIDDING_ROUND_1
_ROUND_2: Final = Phase.BIDDING_ROUND_2


def winning_play(plays: Sequence[CardPlayed], trump: int) -> CardPlayed:
    """The play winning the trick ``plays`` (the cards in the order played, at least one).

    For a complete trick its ``seat`` is the trick's winner (:attr:`Trick.winner`, the
    :class:`TrickWon` event); for a trick still being played, the seat winning it so far.
    """
    led_suit = plays[0].card.suit if plays else 0
    return strongest_play(plays, lambda play: trick_strength(play.card, led_suit, trump))


def current_trick(observation: BeloteObservation) -> tuple[CardPlayed, ...]:
    """The cards on the table in the trick being played, in the order played.

    Empty when no trick is under way: before card play, when the seat to act leads, and once
    the deal or the match is over.
    """
    return plays_on_the_table(observation.tricks)


Pair = tuple[int, int]


def score_deal(
    taking_team: int,
    card_points: Sequence[int],
    tricks_won: Sequence[int],
    belote_team: int | None,
) -> tuple[Pair, Pair, bool, bool, Pair]:
    """Score a played deal (rules page, "Scoring a deal").

    ``card_points`` are the points of the tricks each team won, the last trick's 10 included.
    Returns ``(card_points, belote_points, capot, contract_made, scores)``, each per team, with
    card points replaced by 252 / 0 on a capot.
    """
    if 8 in tricks_won:
        capot = True
        points: Pair = (CAPOT_POINTS, 0) if tricks_won[0] == 8 else (0, CAPOT_POINTS)
    else:
        capot = False
        points = (card_points[0], card_points[1])
    belote: Pair = (0, 0)
    if belote_team is not None:
        belote = (BELOTE_POINTS, 0) if belote_team == 0 else (0, BELOTE_POINTS)
    totals = (points[0] + belote[0], points[1] + belote[1])
    defending = 1 - taking_team
    made = totals[taking_team] >= totals[defending]
    if made:
        return points, belote, capot, True, totals
    everything = (CAPOT_POINTS if capot else TOTAL_CARD_POINTS + LAST_TRICK_BONUS) + sum(belote)
    scores: Pair = (everything, 0) if defending == 0 else (0, everything)
    return points, belote, capot, False, scores


class BeloteState(GameState[BeloteAction, BeloteObservation, BeloteEvent]):
    """A Belote match of ``settings.deals`` deals (or to a target score)."""

    GAME: ClassVar[str] = "belote"
    ACTION_TYPES: ClassVar[tuple[type, ...]] = (Pass, Take, PlayCard)

    def __init__(self, settings: BeloteSettings | None = None, seed: int = 0) -> None:
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        self.settings = settings or BeloteSettings()
        self.seed = seed
        self.num_seats = SEATS
        self._init_events()
        self.match_scores = [0, 0]
        self.deal_results: list[DealResult] = []
        self._start_deal(0)

    @classmethod
    def from_position(
        cls,
        *,
        hands: Sequence[Sequence[BeloteCard]],
        trump: Suit,
        taker: int,
        leader: int,
        trick: Sequence[BeloteCard] = (),
        settings: BeloteSettings | None = None,
    ) -> BeloteState:
        """A deal in card play from a given position, for analysis, bots' search and tests.

        ``hands`` are the cards each seat still holds; ``trick`` the cards already in the
        current trick, played by ``leader`` and the seats after it.  Earlier tricks are not
        recorded, so card points start at 0.  When every seat holds the same number of cards
        (counting its card in ``trick``), the position is the end of a real deal: it plays on
        to the 8th trick, with its 10 points, and is scored like any deal.  Otherwise it is a
        position for analysis only, counted as the first trick.  A seat
        holding both the K and the Q of trump, in its hand or already played into ``trick``,
        announces Belote and Rebelote as it plays them (a K or Q in ``trick`` at once).  The
        turned card is taken to be the lowest trump held or played (it only matters to bids).
        """
        everything = [c for hand in hands for c in hand] + list(trick)
        if len(hands) != SEATS:
            raise ValueError(f"a position needs 4 hands, got {len(hands)}")
        if len(set(everything)) != len(everything):
            raise ValueError("a card appears twice in the position")
        if not 0 <= taker < SEATS or not 0 <= leader < SEATS:
            raise ValueError("taker and leader must be seats 0..3")
        if len(trick) >= SEATS:
            raise ValueError("the current trick holds at most 3 cards")
        to_act = (leader + len(trick)) % SEATS
        if not hands[to_act]:
            raise ValueError(f"seat {to_act} is to play but holds no card")
        state = cls(settings, 0)
        state._init_events()
        state.hands = [list(hand) for hand in hands]
        trumps = [c for c in everything if c.suit == trump]
        state.turned_card = min(trumps, key=lambda c: c.trump_order) if trumps else DECK[trump * 8]
        state.trump = trump
        state.taker = taker
        state.phase = Phase.PLAYING
        state.trick_leader = leader
        state._to_act = leader
        state._best_seat = state._best_strength = -1
        # A seat's cards are those it holds and the one it already played into the trick.
        held = [list(hand) for hand in hands]
        for offset, card in enumerate(trick):
            held[(leader + offset) % SEATS].append(card)
        for seat, hand in enumerate(held):
            if sum(1 for c in hand if c.suit == trump and c.rank in (Rank.KING, Rank.QUEEN)) == 2:
                state._belote_holder = seat
        sizes = {len(hand) for hand in held}
        if len(sizes) == 1 and 1 <= (size := sizes.pop()) <= 8:
            state._trick_offset = 8 - size
        for card in trick:
            state.hands[state._to_act].append(card)
            state._apply_card(card)
        return state

    # ---- dealing ----------------------------------------------------------------------------

    def _start_deal(self, deal_number: int) -> None:
        settings = self.settings
        self.deal_number = deal_number
        self.dealer = (settings.first_dealer + deal_number) % SEATS
        shuffle_number = deal_number // 2 if settings.duplicate else deal_number
        deck = list(DECK)
        DealRng.for_deal(self.seed, shuffle_number).shuffle(deck)
        self._deck = deck
        first = (self.dealer + 1) % SEATS
        order = [(first + offset) % SEATS for offset in range(SEATS)]
        hands: list[list[BeloteCard]] = [[], [], [], []]
        position = 0
        for packet in (3, 2):
            for seat in order:
                hands[seat].extend(deck[position : position + packet])
                position += packet
        self.hands = hands
        self.turned_card = deck[20]
        self._next_card = 21
        self.phase = Phase.BIDDING_ROUND_1
        self.bids: list[BidMade] = []
        self.trump: Suit | None = None
        self.taker: int | None = None
        self.tricks: list[Trick] = []
        #: Tricks played before the first one recorded (only positions start past 0).
        self._trick_offset = 0
        self.trick: list[CardPlayed] = []
        self.trick_leader = first
        self._best_seat = -1
        self._best_strength = -1
        #: The trick's card strengths by card index (set by its first card).
        self._strengths: tuple[int, ...] = ()
        self.card_points = [0, 0]
        self.tricks_won = [0, 0]
        self.announcements: list[BeloteAnnounced] = []
        self._belote_holder: int | None = None
        self._to_act: int | None = first
        replay_of = deal_number - 1 if settings.duplicate and deal_number % 2 else None
        self._emit_public(DealStarted(deal_number, self.dealer, replay_of))
        for seat in order:
            self._emit_private(seat, CardsDealt(seat, tuple(hands[seat])))
        self._emit_public(CardTurned(self.turned_card))

    def _complete_hands(self) -> None:
        """The taker gets the turned card and 2 more, every other seat 3, from ``dealer+1``."""
        taker = self.taker
        assert taker is not None and self.trump is not None
        deck = self._deck
        position = self._next_card
        for offset in range(1, SEATS + 1):
            seat = (self.dealer + offset) % SEATS
            if seat == taker:
                received = [self.turned_card, *deck[position : position + 2]]
                position += 2
            else:
                received = deck[position : position + 3]
                position += 3
            self.hands[seat].extend(received)
            self._emit_private(seat, CardsDealt(seat, tuple(received)))
        self._next_card = position
        trump = self.trump
        for seat, hand in enumerate(self.hands):
            royals = sum(1 for c in hand if c.suit == trump and c.rank in (Rank.KING, Rank.QUEEN))
            if royals == 2:
                self._belote_holder = seat

    # ---- the seat to act --------------------------------------------------------------------

    @property
    def to_act(self) -> int | None:
        return self._to_act

    def _compute_legal_actions(self) -> list[BeloteAction]:
        if self.phase is _PLAYING:
            return self._legal_cards()
        return self._legal_bidding()

    def _apply_legal(self, action: BeloteAction) -> None:
        if type(action) is PlayCard:
            self._apply_card(action.card)
        else:
            self._apply_bid(action)

    def default_action(self) -> BeloteAction:
        """Pass when bidding; when playing, the first legal card in deck order (♠ to ♣, 7 to A)."""
        if self.phase is Phase.PLAYING:
            cards = [action for action in self.legal_actions() if isinstance(action, PlayCard)]
            return min(cards, key=lambda action: action.card.index)
        return _PASS

    # ---- bidding ----------------------------------------------------------------------------

    def _legal_bidding(self) -> list[BeloteAction]:
        turned = self.turned_card.suit
        if self.phase is _ROUND_1:
            return list(_ROUND_1_BIDS[turned])
        return list(_ROUND_2_BIDS[turned])

    def _apply_bid(self, action: BeloteAction) -> None:
        seat = self._to_act
        assert seat is not None
        first_round = self.phase is _ROUND_1
        if type(action) is Take:
            bid = _TOOK[seat][not first_round][action.suit]
            self.bids.append(bid)
            self._emit_public(bid)
            self.trump = action.suit
            self.taker = seat
            self._complete_hands()
            self.phase = _PLAYING
            self._to_act = self.trick_leader
            return
        bid = _PASSED[seat][not first_round]
        self.bids.append(bid)
        self._emit_public(bid)
        next_seat = (seat + 1) % SEATS
        if next_seat != (self.dealer + 1) % SEATS:
            self._to_act = next_seat
        elif first_round:
            self.phase = _ROUND_2
            self._to_act = next_seat
        else:
            self._emit_public(DealVoided(self.deal_number))
            self._finish_deal(void=True)

    # ---- card play --------------------------------------------------------------------------

    def _legal_cards(self) -> list[BeloteAction]:
        """The legal-card duties of the rules page, "Playing the tricks"."""
        seat = self._to_act
        assert seat is not None
        hand = self.hands[seat]
        trick = self.trick
        if not trick:
            return [_PLAY[c.index] for c in hand]
        trump = self.trump
        led = trick[0].card.suit
        trumps = [c for c in hand if c.suit == trump]
        # The highest trump already in the trick is the winning card whenever there is one.
        best = self._best_strength
        best_trump = best - _WIN_TRUMP if best >= _WIN_TRUMP else -1
        if led != trump:
            follow = [c for c in hand if c.suit == led]
            if follow:
                return [_PLAY[c.index] for c in follow]
            if not trumps:
                return [_PLAY[c.index] for c in hand]
            higher = [c for c in trumps if c.trump_order > best_trump]
            if (self._best_seat ^ seat) == 2:  # partner winning: free, but overtrump if trumping
                allowed = [c for c in hand if c.suit != trump]
                allowed += higher or trumps
                return [_PLAY[c.index] for c in allowed]
            return [_PLAY[c.index] for c in (higher or trumps)]
        if not trumps:
            return [_PLAY[c.index] for c in hand]
        higher = [c for c in trumps if c.trump_order > best_trump]
        return [_PLAY[c.index] for c in (higher or trumps)]

    def _apply_card(self, card: BeloteCard) -> None:
        seat = self._to_act
        assert seat is not None and self.trump is not None
        self.hands[seat].remove(card)
        trick = self.trick
        played = _PLAYED[seat][card.index]
        trick.append(played)
        self._events.append(played)
        self._audiences.append(_EVERYONE)
        if (
            seat == self._belote_holder
            and card.suit == self.trump
            and (card.rank == Rank.KING or card.rank == Rank.QUEEN)
        ):
            self._announce(seat)
        if len(trick) == 1:
            self._strengths = _STRENGTHS[self.trump][card.suit]
        strength = self._strengths[card.index]
        if strength > self._best_strength:
            self._best_strength = strength
            self._best_seat = seat
        if len(trick) < SEATS:
            self._to_act = (seat + 1) % SEATS
            return
        self._close_trick()

    def _announce(self, seat: int) -> None:
        kind = Announcement.REBELOTE if self.announcements else Announcement.BELOTE
        announced = BeloteAnnounced(seat, kind)
        self.announcements.append(announced)
        self._emit_public(announced)

    def _close_trick(self) -> None:
        trump = self.trump
        assert trump is not None
        winner = self._best_seat
        points_of = _POINTS[trump]
        points = sum([points_of[p.card.index] for p in self.trick])
        trick_number = self._trick_offset + len(self.tricks)
        if trick_number == 7:
            points += LAST_TRICK_BONUS
        self.tricks.append(
            Trick(trick_number, self.trick_leader, tuple(self.trick), winner, points)
        )
        team = winner & 1
        self.card_points[team] += points
        self.tricks_won[team] += 1
        self._emit_public(TrickWon(trick_number, winner, points))
        self.trick = []
        self.trick_leader = winner
        self._best_seat = -1
        self._best_strength = -1
        if trick_number == 7:
            self._finish_deal(void=False)
        else:
            self._to_act = winner

    # ---- scoring ----------------------------------------------------------------------------

    def _score(self) -> DealResult:
        assert self.taker is not None and self.trump is not None
        belote_team = team_of(self.announcements[0].seat) if len(self.announcements) == 2 else None
        card_points, belote, capot, made, scores = score_deal(
            team_of(self.taker), self.card_points, self.tricks_won, belote_team
        )
        return DealResult(
            deal_number=self.deal_number,
            dealer=self.dealer,
            void=False,
            taker=self.taker,
            trump=self.trump,
            card_points=card_points,
            belote_points=belote,
            capot=capot,
            contract_made=made,
            scores=scores,
        )

    def _finish_deal(self, void: bool) -> None:
        if void:
            result = DealResult(
                deal_number=self.deal_number,
                dealer=self.dealer,
                void=True,
                taker=None,
                trump=None,
                card_points=(0, 0),
                belote_points=(0, 0),
                capot=False,
                contract_made=False,
                scores=(0, 0),
            )
        else:
            result = self._score()
        self.deal_results.append(result)
        self.match_scores[0] += result.scores[0]
        self.match_scores[1] += result.scores[1]
        scores = (self.match_scores[0], self.match_scores[1])
        self._emit_public(DealScored(result, scores))
        if self._match_is_over():
            self.phase = Phase.MATCH_OVER
            self._to_act = None
            self._emit_public(MatchEnded(scores, len(self.deal_results)))
        else:
            self._start_deal(self.deal_number + 1)

    def _match_is_over(self) -> bool:
        settings = self.settings
        played = len(self.deal_results)
        if settings.duplicate and played % 2:
            return False
        if played >= settings.deal_limit:
            return True
        target = settings.target_score
        return target is not None and max(self.match_scores) >= target

    # ---- why an action is illegal -----------------------------------------------------------

    def why_illegal(self, action: BeloteAction) -> str | None:
        if self._to_act is None:
            return "the match is over"
        if action in self.legal_actions():
            return None
        if self.phase is Phase.PLAYING:
            if not isinstance(action, PlayCard):
                return "bidding is over: play a card"
            return self._why_card_illegal(action.card)
        if isinstance(action, PlayCard):
            return "bidding is not over: pass or take"
        if isinstance(action, Take):
            turned = self.turned_card.suit
            if self.phase is Phase.BIDDING_ROUND_1:
                return f"round 1 only takes the turned card's suit {turned.name.lower()}"
            return f"round 2 excludes the turned card's suit {turned.name.lower()}"
        return f"{action!r} is not legal now"

    def _why_card_illegal(self, card: BeloteCard) -> str:
        seat = self._to_act
        assert seat is not None and self.trump is not None
        if card not in self.hands[seat]:
            return f"seat {seat} does not hold {card}"
        led = self.trick[0].card.suit
        trump = self.trump
        holds = {c.suit for c in self.hands[seat]}
        if led == trump:
            if card.suit != trump:
                return f"trump ({Suit(trump).name.lower()}) was led: play a trump"
            return "trump was led: play a trump higher than every trump in the trick"
        if led in holds:
            return f"{Suit(led).name.lower()} was led: follow suit"
        if card.suit == trump:
            return "a trump played must be higher than every trump in the trick when able"
        return "an opponent is winning the trick: play a trump"

    # ---- what a seat sees -------------------------------------------------------------------

    def observation(self, seat: int) -> BeloteObservation:
        if not 0 <= seat < SEATS:
            raise ValueError(f"Belote seats are 0..3, got {seat}")
        tricks = list(self.tricks)
        if self.trick:
            points = (
                sum(p.card.points(self.trump) for p in self.trick) if self.trump is not None else 0
            )
            tricks.append(
                Trick(
                    self._trick_offset + len(self.tricks),
                    self.trick_leader,
                    tuple(self.trick),
                    None,
                    points,
                )
            )
        return BeloteObservation(
            seat=seat,
            phase=self.phase,
            to_act=self._to_act,
            deal_number=self.deal_number,
            dealer=self.dealer,
            hand=tuple(sorted(self.hands[seat], key=lambda c: c.index)),
            turned_card=self.turned_card,
            bids=tuple(self.bids),
            trump=self.trump,
            taker=self.taker,
            tricks=tuple(tricks),
            announcements=tuple(self.announcements),
            card_points=(self.card_points[0], self.card_points[1]),
            match_scores=(self.match_scores[0], self.match_scores[1]),
            deal_results=tuple(self.deal_results),
        )

    @property
    def outcome(self) -> Outcome | None:
        if self._to_act is not None:
            return None
        return Outcome.from_scores([self.match_scores[team_of(seat)] for seat in range(SEATS)])

    # ---- copying ----------------------------------------------------------------------------

    def copy(self) -> Self:
        other = self._shallow_copy()
        self._copy_events_into(other)
        other.match_scores = self.match_scores.copy()
        other.deal_results = self.deal_results.copy()
        other.hands = [hand.copy() for hand in self.hands]
        other.bids = self.bids.copy()
        other.tricks = self.tricks.copy()
        other.trick = self.trick.copy()
        other.card_points = self.card_points.copy()
        other.tricks_won = self.tricks_won.copy()
        other.announcements = self.announcements.copy()
        return other
