"""The Bestia match state: ante, deal, blind raises, rubata, declaration, accomodo, card play,
settlement, and the passing of the deal through the giro.

Each kind of decision has its own phase, legal-action function and apply function
(``_apply_raise``, ``_apply_answer``, ``_apply_steal``, ``_apply_declaration``,
``_apply_exchange``, ``_apply_discard``, ``_apply_card``).  The automatic steps between two
decisions (looking, trump changes, folding the passers, the delayed 4th cards, the burn, the
settlement, the next hand) run inside the apply of the decision that triggers them.

Every shuffle of a hand, the deal's and each refill of the stock, comes from one stream,
``DealRng.for_deal(seed, hand_number)``.  Hot paths use preallocated action and event objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import chain
from operator import attrgetter
from typing import Any, ClassVar, Final, NamedTuple, Self

from .._core import IllegalActionError, Outcome
from .._game import GameState
from .._rng import DealRng
from .._tricks import plays_on_the_table, strongest_play
from ._cards import DECK, BestiaCard, Suit
from ._settle import TRICKS, settlement_of
from ._types import (
    AntePaid,
    Assist,
    BestiaAction,
    BestiaEvent,
    BestiaObservation,
    BestiaSettings,
    Blind,
    BlindMove,
    Call,
    CardBurnt,
    CardPlayed,
    CardsDealt,
    DealerDiscarded,
    Declaration,
    Declared,
    Discard,
    Discarded,
    Exchange,
    Exchanged,
    Fold,
    Folded,
    HandDealt,
    HandEnd,
    HandEnded,
    HandLooked,
    HandResult,
    HandStarted,
    MatchEnded,
    Open,
    Pass,
    Phase,
    PlayCard,
    PotSplit,
    Raise,
    RefillSource,
    Settlement,
    Steal,
    StealDeclined,
    StockRefilled,
    Trick,
    TrickWon,
    TrumpStolen,
    TrumpTurned,
)

MAX_SEATS: Final = 7
HAND_SIZE: Final = 4
MAX_TRUMPS: Final = 3
_WIN_TRUMP: Final = 100  # added to a trump's rank in its trick_strength, above every led-suit card

_INDEX: Final = attrgetter("index")
_PASS: Final = Pass()
_RAISE: Final = Raise()
_CALL: Final = Call()
_FOLD: Final = Fold()
_STEAL: Final = Steal()
_OPEN: Final = Open()
_ASSIST: Final = Assist()
_PLAY: Final = tuple(PlayCard(c) for c in DECK)
_DISCARD: Final = tuple(Discard(c) for c in DECK)


# ---- who wins a trick (rules page, step 9, "Card play") -----------------------------------


def trick_strength(card: BestiaCard, led_suit: int, trump: int) -> int:
    """How strongly ``card`` competes in a trick led in ``led_suit`` with ``trump`` as trump.

    The card of highest strength wins the trick; the engine decides every trick with this
    function.  Every trump ranks above every card of the led suit (both by rank, A K Q J 7 6 5
    4 3 2), and a card of another suit is -1: it cannot win.  Two cards that can win never
    tie.  ``led_suit`` and ``trump`` are :class:`Suit` values (the trick's first card's suit,
    the hand's trump).
    """
    suit = card.suit
    if suit == trump:
        return _WIN_TRUMP + card.rank
    if suit == led_suit:
        return int(card.rank)
    return -1


#: ``trick_strength`` of every card by index, for each trump and led suit: a trick's cards are
#: ranked by a lookup in the table of its trump and led suit.
_STRENGTHS: Final = tuple(
    tuple(tuple(trick_strength(c, led, trump) for c in DECK) for led in Suit) for trump in Suit
)


def winning_play(plays: Sequence[CardPlayed], trump: int) -> CardPlayed:
    """The play winning the trick ``plays`` (the cards in the order played, at least one).

    For a complete trick its ``seat`` is the trick's winner (:attr:`Trick.winner`, the
    :class:`TrickWon` event); for a trick still being played, the seat winning it so far.
    """
    led_suit = plays[0].card.suit if plays else 0
    return strongest_play(plays, lambda play: trick_strength(play.card, led_suit, trump))


def current_trick(observation: BestiaObservation) -> tuple[CardPlayed, ...]:
    """The cards on the table in the trick being played, in the order played.

    Empty when no trick is under way: before card play, when the seat to act leads, and once
    the hand or the match is over.
    """
    return plays_on_the_table(observation.tricks)


def _exchange(discards: tuple[BestiaCard, ...]) -> Exchange:
    """The exchange of ``discards``, already in deck order (they come from a hand kept in deck
    order, so the constructor's checks are skipped)."""
    action = object.__new__(Exchange)
    object.__setattr__(action, "discards", discards)
    return action


# The exchanges of 0, 1 and 2 cards are built once (821 of them), those of 3 cards on first use
# (at most 9,880); one of all 4 cards is built when offered (91,390 could exist).
_STAND_PAT: Final = _exchange(())
_EXCHANGE_1: Final = tuple(_exchange((c,)) for c in DECK)
_EXCHANGE_2: Final = tuple(
    tuple(_exchange((a, b)) if a.index < b.index else _STAND_PAT for b in DECK) for a in DECK
)
_EXCHANGE_3: Final[dict[tuple[BestiaCard, ...], Exchange]] = {}


_PLAYED: Final = tuple(tuple(CardPlayed(seat, c) for c in DECK) for seat in range(MAX_SEATS))
_TRICK_WON: Final = tuple(
    tuple(TrickWon(t, seat) for seat in range(MAX_SEATS)) for t in range(TRICKS)
)
_DECLARED: Final[tuple[dict[type, tuple[Declared, ...]], ...]] = tuple(
    {
        kind: tuple(Declared(seat, declaration, number) for number in range(MAX_TRUMPS + 1))
        for kind, declaration in (
            (Pass, Declaration.PASS),
            (Open, Declaration.OPEN),
            (Assist, Declaration.ASSIST),
        )
    }
    for seat in range(MAX_SEATS)
)
_EXCHANGED: Final = tuple(
    tuple(Exchanged(seat, count) for count in range(HAND_SIZE + 1)) for seat in range(MAX_SEATS)
)
_FOLDED: Final = tuple(Folded(seat) for seat in range(MAX_SEATS))
_TURNED: Final = tuple(
    tuple(TrumpTurned(c, number) for c in DECK) for number in range(1, MAX_TRUMPS + 1)
)
_DECLINED: Final = tuple(
    (BlindMove(seat, Blind.NO_BUIO, 0), BlindMove(seat, Blind.NO_CONTROBUIO, 0))
    for seat in range(MAX_SEATS)
)
_BLIND_FOLD: Final = tuple(BlindMove(seat, Blind.FOLD, 0) for seat in range(MAX_SEATS))
_STEAL_DECLINED: Final = tuple(StealDeclined(seat) for seat in range(MAX_SEATS))
_DEALER_DISCARDED: Final = tuple(DealerDiscarded(seat) for seat in range(MAX_SEATS))

# Enum members are slow to look up on their class (about 75 ns each): the hot paths use these.
_ASSISTING: Final = Phase.ASSISTING
_BUIO: Final = Phase.BUIO
_BUIO_CALL: Final = Phase.BUIO_CALL
_CONTROBUIO: Final = Phase.CONTROBUIO
_CONTROBUIO_CALL: Final = Phase.CONTROBUIO_CALL
_DEALER_DISCARD: Final = Phase.DEALER_DISCARD
_EXCHANGE: Final = Phase.EXCHANGE
_MATCH_OVER: Final = Phase.MATCH_OVER
_OPENING: Final = Phase.OPENING
_PLAYING: Final = Phase.PLAYING
_RUBATA: Final = Phase.RUBATA


_ASKS: Final = {
    Phase.BUIO: "seat {seat} decides blind whether to raise a buio (Raise) or not (Pass)",
    Phase.BUIO_CALL: "seat {seat} must answer the buio: Call or Fold",
    Phase.CONTROBUIO: "seat {seat} decides blind whether to raise a controbuio (Raise) or not "
    "(Pass)",
    Phase.CONTROBUIO_CALL: "seat {seat} must answer the controbuio: Call or Fold",
    Phase.RUBATA: "the dealer, seat {seat}, decides blind whether to steal the turned card "
    "(Steal) or not (Pass)",
    Phase.OPENING: "seat {seat} must open (Open) or pass (Pass)",
    Phase.ASSISTING: "seat {seat} must assist the opener (Assist) or pass (Pass)",
    Phase.EXCHANGE: "seat {seat} must exchange 0 to 4 of its cards (Exchange)",
    Phase.DEALER_DISCARD: "the dealer, seat {seat}, who stole must discard one card (Discard)",
    Phase.PLAYING: "seat {seat} must play a card (PlayCard)",
}
_WHEN: Final = {
    Raise: "a buio is raised only by the seat after the dealer, on a pot of nothing but this "
    "hand's antes, and a controbuio only by the next seat still in, right after the buio's "
    "answers",
    Call: "Call answers a buio or controbuio",
    Fold: "Fold answers a buio or controbuio",
    Steal: "only the dealer steals, blind, the first turned card, after the blind raises",
    Open: "opening is only possible before anyone has opened",
    Assist: "assisting answers an open",
    Exchange: "the opener and assistants exchange cards (the accomodo) after the declaration "
    "and before card play",
    Discard: "only a dealer who stole discards a card, after the accomodo",
    PlayCard: "cards are played only after the declaration and the accomodo",
}


class _Table(NamedTuple):
    """What every match with the same seats and stake shares."""

    orders: tuple[tuple[int, ...], ...]
    called: tuple[BlindMove, ...]
    raised: tuple[tuple[BlindMove, BlindMove], ...]
    antes: tuple[AntePaid, ...]


@lru_cache(maxsize=64)
def _table(n: int, stake: int) -> _Table:
    return _Table(
        orders=tuple(tuple((start + i) % n for i in range(n)) for start in range(n)),
        called=tuple(BlindMove(seat, Blind.CALL, stake) for seat in range(n)),
        raised=tuple(
            (BlindMove(seat, Blind.BUIO, stake), BlindMove(seat, Blind.CONTROBUIO, stake))
            for seat in range(n)
        ),
        antes=tuple(AntePaid(seat, stake) for seat in range(n)),
    )


# The two choices of each yes/no decision, the cautious one (the default) first.
_RAISE_OR_NOT: Final[tuple[BestiaAction, ...]] = (_PASS, _RAISE)
_CALL_OR_FOLD: Final[tuple[BestiaAction, ...]] = (_FOLD, _CALL)
_STEAL_OR_NOT: Final[tuple[BestiaAction, ...]] = (_PASS, _STEAL)
_OPEN_OR_PASS: Final[tuple[BestiaAction, ...]] = (_PASS, _OPEN)
_ASSIST_OR_PASS: Final[tuple[BestiaAction, ...]] = (_PASS, _ASSIST)


class BestiaState(GameState[BestiaAction, BestiaObservation, BestiaEvent]):
    """A Bestia match: ``settings.rounds`` turns of deal per seat, the last one the giro.

    Public attributes are the true state (for the referee, logs and tests; bots get
    :meth:`observation`): ``balances``, ``pot``, ``hands`` (each in deck order), ``in_hand``,
    ``looked``, ``turned`` (every card turned this hand), ``trump``, ``stock`` (the top card
    last; while the stock is still the undealt deck its order is not yet drawn),
    ``folded_pile``, ``discard_pile`` (``(card, discarder)`` not yet back in the stock),
    ``burnt``, ``dealer_discard``, ``tricks`` and ``trick``.
    """

    GAME: ClassVar[str] = "bestia"
    ACTION_TYPES: ClassVar[tuple[type, ...]] = (
        Pass,
        Raise,
        Call,
        Fold,
        Steal,
        Open,
        Assist,
        Exchange,
        Discard,
        PlayCard,
    )

    def __init__(self, settings: BestiaSettings | None = None, seed: int = 0) -> None:
        self._setup(settings or BestiaSettings(), seed, {})

    @classmethod
    def stacked(
        cls,
        settings: BestiaSettings | None,
        decks: Sequence[Sequence[BestiaCard]],
        seed: int = 0,
    ) -> Self:
        """A match whose hands ``0 .. len(decks) - 1`` are dealt from these deck orders.

        ``decks[h]`` replaces the shuffle of hand ``h``: its first card is dealt first (to the
        seat after the dealer), then the deal goes on as the rules page says (2 cards to each
        seat, the next card turned, 2 more each, the rest is the stock from the top down).
        Every other shuffle (later hands, refills of the stock) still comes from the seeded
        stream, which for a stacked hand starts unused.  Meant for tests and worked examples.
        """
        stacked: dict[int, tuple[BestiaCard, ...]] = {}
        for number, deck in enumerate(decks):
            order = tuple(deck)
            if not all(isinstance(c, BestiaCard) for c in order):
                raise ValueError(f"deck {number} must hold Bestia cards only")
            if len(order) != len(DECK) or len(set(order)) != len(DECK):
                raise ValueError(f"deck {number} must hold each of the 40 cards exactly once")
            stacked[number] = order
        state = cls.__new__(cls)
        state._setup(settings or BestiaSettings(), seed, stacked)
        return state

    def _setup(
        self, settings: BestiaSettings, seed: int, stacked: dict[int, tuple[BestiaCard, ...]]
    ) -> None:
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        n = settings.seats
        self.settings = settings
        self.seed = seed
        self.num_seats = n
        self._everyone = (1 << n) - 1
        table = _table(n, settings.stake)
        #: Every seat in play order from each seat.
        self._orders = table.orders
        self._ev_called = table.called
        self._ev_raised = table.raised
        self._ev_ante = table.antes
        self._init_events()
        self._stacked = stacked
        self.balances = [0] * n
        self.pot = 0
        self.results: list[HandResult] = []
        self.hand_number = -1
        self.dealer_hand = 0
        #: Turns of deal so far: dealer turn ``t`` is seat ``(first_dealer + t) % n``.
        self._turn = 0
        self._turns = settings.rounds * n
        self._giro_from = (settings.rounds - 1) * n
        self._start_hand(repeat=False)

    # ---- the hand's start: ante and deal ---------------------------------------------------

    def _start_hand(self, repeat: bool) -> None:
        settings = self.settings
        n = self.num_seats
        self.hand_number += 1
        dealer = self.dealer = (settings.first_dealer + self._turn) % n
        self.giro = self._turn >= self._giro_from
        self.dealer_hand = self.dealer_hand + 1 if repeat else 1
        self._emit_public(HandStarted(self.hand_number, dealer, self.giro, self.dealer_hand))
        pot_before = self.pot
        antes: list[AntePaid] = []
        if not repeat:
            if settings.ante_mode == "all":
                if pot_before == 0:
                    antes = list(self._ev_ante)
            else:
                antes = [self._ev_ante[dealer]]
            balances = self.balances
            for ante in antes:
                balances[ante.seat] -= ante.amount
            self.pot += settings.stake * len(antes)
            self._events.extend(antes)
            self._audiences.extend([self._everyone] * len(antes))
        self.antes = antes

        # The deck is a pile whose top is the end of the list.  A shuffled deck is
        # DealRng.shuffle's Fisher-Yates done lazily: each step, from the last position down,
        # fixes the card about to be taken from the top, so the cards come out exactly as from
        # a fully shuffled deck, and the steps the stock never reaches are not computed.  (The
        # stock is refilled only once empty, after all the steps: refills continue the stream
        # exactly where a full shuffle would have left it.)
        rng = self._rng = DealRng.for_deal(self.seed, self.hand_number)
        stacked = self._stacked.get(self.hand_number)
        dealt = 4 * n + 1
        if stacked is None:
            deck = list(DECK)
            rng.shuffle_top(deck, dealt)
            self._unshuffled = len(deck) - dealt
        else:
            deck = list(reversed(stacked))
            self._unshuffled = 0
        top = len(deck) - 1
        first = (dealer + 1) % n
        second = top - 2 * n - 1  # the second packet starts under the turned card
        hands: list[list[BestiaCard]] = [[]] * n  # every seat's list is replaced below
        for i in range(n):
            at = top - 2 * i
            hand = [deck[at], deck[at - 1], deck[second - 2 * i], deck[second - 2 * i - 1]]
            hand.sort(key=_INDEX)
            hands[(first + i) % n] = hand
        turned = deck[top - 2 * n]
        del deck[len(deck) - dealt :]
        self.hands = hands
        self.stock = deck
        self.turned = [turned]
        self.trump: Suit = turned.suit
        self.in_hand = [True] * n
        self.looked = [False] * n
        self.stolen = False
        self.blind: list[BlindMove] = []
        self.declarations: list[Declared] = []
        self.opener: int | None = None
        self.assistants: list[int] = []
        self.exchanges: list[Exchanged] = []
        self.folded_pile: list[BestiaCard] = []
        self.discard_pile: list[tuple[BestiaCard, int]] = []
        self._discarded = [0] * n  # bit masks of the card indices each seat discarded
        self.burnt: list[BestiaCard] = []
        self.dealer_discard: BestiaCard | None = None
        self.tricks: list[Trick] = []
        self.trick: list[CardPlayed] = []
        self.tricks_won = [0] * n
        self.pot_at_play = 0
        self.trick_leader = -1
        self._led = -1
        self._players = 0
        self._next_player: list[int] = []
        self._queue: list[int] = []
        self._next = 0
        self._delayed: list[int] = []
        self._emit_hidden(HandDealt(tuple(chain.from_iterable(hands))))
        self._emit_public(_TURNED[0][turned.index])
        if settings.blind_raises and pot_before == 0 and self.pot > 0:
            self._ask(_BUIO, [first], _RAISE_OR_NOT)
        else:
            self._begin_rubata()

    def _emit_public(self, event: BestiaEvent) -> None:
        self._events.append(event)
        self._audiences.append(self._everyone)

    def _pay(self, seat: int, amount: int) -> None:
        self.balances[seat] -= amount
        self.pot += amount

    def _ask(
        self, phase: Phase, queue: list[int], choices: tuple[BestiaAction, ...] | None = None
    ) -> None:
        """Wait for the seats of ``queue`` to decide, one after the other (between the two
        ``choices`` of a yes/no decision)."""
        self.phase = phase
        self._choices = choices
        self._queue = queue
        self._next = 1
        self._to_act: int | None = queue[0]

    def _advance(self) -> bool:
        """The next seat of the queue acts; ``False`` when the queue is done."""
        queue = self._queue
        position = self._next
        if position < len(queue):
            self._to_act = queue[position]
            self._next = position + 1
            return True
        return False

    def _seats_in_from(self, start: int, skip: int = -1) -> list[int]:
        """Seats still in, in play order from ``start``, leaving out ``skip``."""
        in_hand = self.in_hand
        return [seat for seat in self._orders[start] if in_hand[seat] and seat != skip]

    # ---- the seat to act --------------------------------------------------------------------

    @property
    def to_act(self) -> int | None:
        return self._to_act

    def _compute_legal_actions(self) -> list[BestiaAction]:
        choices = self._choices
        if choices is not None:
            return list(choices)
        phase = self.phase
        if phase is _PLAYING:
            return self._legal_cards()
        if phase is _EXCHANGE:
            return self._legal_exchanges()
        assert self._to_act is not None
        return [_DISCARD[c.index] for c in self.hands[self._to_act]]

    def _apply_legal(self, action: BestiaAction) -> None:
        _APPLY[type(action)](self, action)

    def default_action(self) -> BestiaAction:
        """What the referee plays for a seat that did not answer in time: the first legal
        action, which is always the cautious one: decline the buio or controbuio, fold on a
        call-or-fold, do not steal, pass (opening or assisting), stand pat in the accomodo, and
        the first legal card in deck order (coins to clubs, 2 to ace) when discarding or
        playing."""
        legal = self.legal_actions()
        if not legal:
            raise IllegalActionError("the match is over", code="match_over")
        return legal[0]

    # ---- blind raises, rubata, looking --------------------------------------------------------

    def _apply_raise(self, action: BestiaAction) -> None:
        seat = self._to_act
        assert seat is not None
        controbuio = self.phase is _CONTROBUIO
        if type(action) is Pass:
            declined = _DECLINED[seat][controbuio]
            self.blind.append(declined)
            self._emit_public(declined)
            self._begin_rubata()
            return
        self._pay(seat, self.settings.stake)
        raised = self._ev_raised[seat][controbuio]
        self.blind.append(raised)
        self._emit_public(raised)
        phase = _CONTROBUIO_CALL if controbuio else _BUIO_CALL
        queue = self._seats_in_from((seat + 1) % self.num_seats, skip=seat)
        self._ask(phase, queue, _CALL_OR_FOLD)

    def _apply_pass(self, action: BestiaAction) -> None:
        phase = self.phase
        if phase is _OPENING or phase is _ASSISTING:
            self._apply_declaration(action)
        elif phase is _RUBATA:
            self._apply_steal(action)
        else:
            self._apply_raise(action)

    def _apply_answer(self, action: BestiaAction) -> None:
        seat = self._to_act
        assert seat is not None
        if type(action) is Call:
            self._pay(seat, self.settings.stake)
            answer = self._ev_called[seat]
        else:
            self._fold(seat)
            answer = _BLIND_FOLD[seat]
        self.blind.append(answer)
        self._emit_public(answer)
        if self._advance():
            return
        still_in = [s for s in range(self.num_seats) if self.in_hand[s]]
        if len(still_in) == 1:
            self._take_pot(still_in[0], HandEnd.LONE_SURVIVOR)
        elif self.phase is _BUIO_CALL:
            first = (self.dealer + 1) % self.num_seats
            queue = self._seats_in_from(first, skip=first)[:1]
            self._ask(_CONTROBUIO, queue, _RAISE_OR_NOT)
        else:
            self._begin_rubata()

    def _fold(self, seat: int) -> None:
        self.in_hand[seat] = False
        self.folded_pile.extend(self.hands[seat])
        self.hands[seat] = []

    def _begin_rubata(self) -> None:
        if self.in_hand[self.dealer]:
            self._ask(_RUBATA, [self.dealer], _STEAL_OR_NOT)
        else:
            self._look()
            self._begin_opening()

    def _apply_steal(self, action: BestiaAction) -> None:
        dealer = self.dealer
        if type(action) is Pass:
            self._emit_public(_STEAL_DECLINED[dealer])
            self._look()
            self._begin_opening()
            return
        stolen = self.turned[0]
        hand = self.hands[dealer]
        hand.append(stolen)
        hand.sort(key=_INDEX)
        self.stolen = True
        self.opener = dealer
        self._emit_public(TrumpStolen(dealer, stolen))
        self._look()
        self._begin_assisting()

    def _look(self) -> None:
        """Step 5: every seat still in looks at its cards."""
        n = self.num_seats
        for i in range(1, n + 1):
            seat = (self.dealer + i) % n
            if self.in_hand[seat]:
                self.looked[seat] = True
                self._emit_private(seat, HandLooked(seat, tuple(self.hands[seat])))

    # ---- declaration ------------------------------------------------------------------------

    def _begin_opening(self) -> None:
        queue = self._seats_in_from((self.dealer + 1) % self.num_seats)
        self._ask(_OPENING, queue, _OPEN_OR_PASS)

    def _begin_assisting(self) -> None:
        opener = self.opener
        assert opener is not None
        queue = self._seats_in_from((opener + 1) % self.num_seats, opener)
        self._ask(_ASSISTING, queue, _ASSIST_OR_PASS)

    def _apply_declaration(self, action: BestiaAction) -> None:
        seat = self._to_act
        assert seat is not None
        kind = type(action)
        trump_number = len(self.turned)
        declared = _DECLARED[seat][kind][trump_number]
        self.declarations.append(declared)
        self._emit_public(declared)
        if kind is Open:
            self.opener = seat
            self._begin_assisting()
            return
        if kind is Assist:
            self.assistants.append(seat)
        if self._advance():
            return
        if self.phase is _ASSISTING:
            self._end_declaration()
        elif trump_number < MAX_TRUMPS:
            turned = self._draw(-1, any_card=True)
            self.turned.append(turned)
            self.trump = turned.suit
            self._emit_public(_TURNED[trump_number][turned.index])
            self._begin_opening()
        else:
            self._end_hand(HandEnd.VOID)

    def _end_declaration(self) -> None:
        opener = self.opener
        assert opener is not None
        if not self.assistants:
            self._take_pot(opener, HandEnd.UNOPPOSED)
            return
        players = {opener, *self.assistants}
        for seat in self._seats_in_from((self.dealer + 1) % self.num_seats):
            if seat not in players:
                self._fold(seat)
                self._emit_public(_FOLDED[seat])
        self._begin_exchange()

    # ---- the accomodo -----------------------------------------------------------------------

    def _begin_exchange(self) -> None:
        skip = self.dealer if self.stolen else -1
        order = self._seats_in_from((self.dealer + 1) % self.num_seats, skip)
        self._delayed = []
        self._ask(_EXCHANGE, order)

    def _legal_exchanges(self) -> list[BestiaAction]:
        """Every subset of the 4 cards held, by size then in deck order (stand pat first)."""
        assert self._to_act is not None
        a, b, c, d = self.hands[self._to_act]
        ia, ib, ic, id_ = a.index, b.index, c.index, d.index
        pairs_a = _EXCHANGE_2[ia]
        pairs_b = _EXCHANGE_2[ib]
        legal: list[BestiaAction] = [
            _STAND_PAT,
            _EXCHANGE_1[ia],
            _EXCHANGE_1[ib],
            _EXCHANGE_1[ic],
            _EXCHANGE_1[id_],
            pairs_a[ib],
            pairs_a[ic],
            pairs_a[id_],
            pairs_b[ic],
            pairs_b[id_],
            _EXCHANGE_2[ic][id_],
        ]
        known = _EXCHANGE_3
        for discards in ((a, b, c), (a, b, d), (a, c, d), (b, c, d)):
            action = known.get(discards)
            if action is None:
                action = known[discards] = _exchange(discards)
            legal.append(action)
        legal.append(_exchange((a, b, c, d)))
        return legal

    def _apply_exchange(self, action: Exchange) -> None:
        seat = self._to_act
        assert seat is not None
        discards = action.discards
        count = len(discards)
        exchanged = _EXCHANGED[seat][count]
        self.exchanges.append(exchanged)
        self._emit_public(exchanged)
        if count:
            hand = self.hands[seat]
            mask = self._discarded[seat]
            pile = self.discard_pile
            for c in discards:
                hand.remove(c)
                mask |= 1 << c.index
                pile.append((c, seat))
            self._discarded[seat] = mask
            self._emit_private(seat, Discarded(seat, discards))
            if count == HAND_SIZE:
                self._delayed.append(seat)
                count = HAND_SIZE - 1  # the 4th card comes after everyone has exchanged
            draw = self._draw
            dealt = tuple([draw(seat) for _ in range(count)])
            hand += dealt
            hand.sort(key=_INDEX)
            self._emit_private(seat, CardsDealt(seat, dealt))
        if self._advance():
            return
        last = self._queue[-1]
        for waiting in self._delayed:
            if waiting == last:
                burnt = self._draw(waiting, any_card=True)
                self.burnt.append(burnt)
                self._emit_hidden(CardBurnt(burnt))
            fourth = self._draw(waiting)
            hand = self.hands[waiting]
            hand.append(fourth)
            hand.sort(key=_INDEX)
            self._emit_private(waiting, CardsDealt(waiting, (fourth,)))
        if self.stolen:
            self._ask(_DEALER_DISCARD, [self.dealer])
        else:
            self._begin_play()

    def _draw(self, seat: int, any_card: bool = False) -> BestiaCard:
        """The top card of the stock that ``seat`` did not discard, refilling the stock when it
        holds no such card (for the served ``seat``).  With ``any_card`` (a burn, a trump
        change) simply the top card."""
        stock = self.stock
        unshuffled = self._unshuffled
        if unshuffled:  # the stock is still the deck: fix its top card (see _start_hand)
            i = unshuffled - 1
            if i:
                j = self._rng.below(unshuffled)
                stock[i], stock[j] = stock[j], stock[i]
            self._unshuffled = i
            return stock.pop()
        mask = 0 if any_card else self._discarded[seat]
        while True:
            for position in range(len(stock) - 1, -1, -1):
                c = stock[position]
                if not mask >> c.index & 1:
                    del stock[position]
                    return c
            self._refill(seat)

    def _refill(self, seat: int) -> None:
        """Put the next source, shuffled, under the stock: the folded pile, else the discards
        of the other players not yet back in the stock (``seat`` is the player being served).

        A source always exists: a player being served holds at most 3 cards, so with 7 seats
        and 3 turned cards at least 40 - 6*4 - 3 - 3 - 1 (burnt) = 9 cards are free, at most 4
        of them its own discards.
        """
        if self.folded_pile:
            cards = self.folded_pile
            self.folded_pile = []
            source = RefillSource.FOLDED_PILE
        else:
            cards = [c for c, discarder in self.discard_pile if discarder != seat]
            if not cards:
                raise RuntimeError("the stock cannot be refilled: no card left to deal")
            self.discard_pile = [entry for entry in self.discard_pile if entry[1] == seat]
            source = RefillSource.DISCARDS
        self._rng.shuffle(cards)
        self._emit_hidden(StockRefilled(source, tuple(cards)))
        cards.reverse()
        self.stock[:0] = cards

    def _apply_discard(self, action: Discard) -> None:
        dealer = self.dealer
        self.hands[dealer].remove(action.card)
        self.dealer_discard = action.card
        self._emit_public(_DEALER_DISCARDED[dealer])
        self._emit_private(dealer, Discarded(dealer, (action.card,)))
        self._begin_play()

    # ---- card play --------------------------------------------------------------------------

    def _begin_play(self) -> None:
        opener = self.opener
        assert opener is not None
        n = self.num_seats
        order = self._seats_in_from(opener)
        self._players = len(order)
        self._next_player = [-1] * n
        for i, seat in enumerate(order):
            self._next_player[seat] = order[(i + 1) % len(order)]
        self.pot_at_play = self.pot
        self.trick_leader = opener
        self._led = -1
        self._strengths: tuple[int, ...] = ()
        self._best_seat = -1
        self._best_strength = -1
        self.phase = _PLAYING
        self._choices = None
        self._to_act = opener

    def _legal_cards(self) -> list[BestiaAction]:
        """Follow the led suit; void in it, play a trump if holding one; else any card."""
        seat = self._to_act
        assert seat is not None
        hand = self.hands[seat]
        if self.trick:
            led = self._led
            follow: list[BestiaAction] = [_PLAY[c.index] for c in hand if c.suit == led]
            if follow:
                return follow
            trump = self.trump
            trumps: list[BestiaAction] = [_PLAY[c.index] for c in hand if c.suit == trump]
            if trumps:
                return trumps
        return [_PLAY[c.index] for c in hand]

    def _apply_card(self, action: PlayCard) -> None:
        played = action.card
        seat = self._to_act
        assert seat is not None
        self.hands[seat].remove(played)
        trick = self.trick
        event = _PLAYED[seat][played.index]
        trick.append(event)
        self._events.append(event)
        self._audiences.append(self._everyone)
        if len(trick) == 1:
            self._led = played.suit
            self._strengths = _STRENGTHS[self.trump][played.suit]
        strength = self._strengths[played.index]
        if strength > self._best_strength:
            self._best_strength = strength
            self._best_seat = seat
        if len(trick) < self._players:
            self._to_act = self._next_player[seat]
            return
        winner = self._best_seat
        number = len(self.tricks)
        self.tricks.append(Trick(number, self.trick_leader, tuple(trick), winner))
        self.tricks_won[winner] += 1
        self._emit_public(_TRICK_WON[number][winner])
        self.trick = []
        self._best_seat = -1
        self._best_strength = -1
        if number + 1 < TRICKS:
            self.trick_leader = winner
            self._to_act = winner
            return
        assert self.opener is not None
        settlement = settlement_of(self.pot_at_play, self.opener, self.assistants, self.tricks_won)
        for s, change in enumerate(settlement.net):
            self.balances[s] += change
        self.pot = settlement.next_pot
        self._end_hand(HandEnd.PLAYED, settlement=settlement)

    # ---- the end of a hand and the passing of the deal ----------------------------------------

    def _take_pot(self, seat: int, end: HandEnd) -> None:
        taken = self.pot
        self.balances[seat] += taken
        self.pot = 0
        self._end_hand(end, taker=seat, taken=taken)

    def _end_hand(
        self,
        end: HandEnd,
        taker: int | None = None,
        taken: int = 0,
        settlement: Settlement | None = None,
    ) -> None:
        result = HandResult(
            hand_number=self.hand_number,
            dealer=self.dealer,
            end=end,
            taker=taker,
            taken=taken,
            settlement=settlement,
            pot=self.pot,
            balances=tuple(self.balances),
        )
        self.results.append(result)
        self._emit_public(HandEnded(result))
        if self.giro and self.pot:
            if self.dealer_hand < self.settings.giro_max_hands:
                self._start_hand(repeat=True)
                return
            self._split_pot()
        self._turn += 1
        if self._turn < self._turns:
            self._start_hand(repeat=False)
            return
        self.phase = _MATCH_OVER
        self._choices = None
        self._to_act = None
        self._emit_public(MatchEnded(tuple(self.balances), self.hand_number + 1))

    def _split_pot(self) -> None:
        """The giro's cap: the pot is shared equally, the remainder from ``dealer + 1`` on."""
        n = self.num_seats
        share, remainder = divmod(self.pot, n)
        shares = [share] * n
        for i in range(remainder):
            shares[(self.dealer + 1 + i) % n] += 1
        for seat, amount in enumerate(shares):
            self.balances[seat] += amount
        self.pot = 0
        self._emit_public(PotSplit(self.dealer, tuple(shares)))

    # ---- why an action is illegal -----------------------------------------------------------

    def why_illegal(self, action: BestiaAction) -> str | None:
        seat = self._to_act
        if seat is None:
            return "the match is over"
        if action in self.legal_actions():
            return None
        phase = self.phase
        ask = _ASKS[phase].format(seat=seat)
        kind = type(action)
        if phase is _PLAYING and kind is PlayCard:
            assert isinstance(action, PlayCard)
            return self._why_card_illegal(seat, action.card)
        if phase is _EXCHANGE and kind is Exchange:
            assert isinstance(action, Exchange)
            return self._why_exchange_illegal(seat, action.discards)
        if phase is _DEALER_DISCARD and kind is Discard:
            assert isinstance(action, Discard)
            return f"seat {seat} does not hold {action.card}"
        if phase is _ASSISTING and kind is Open:
            return f"seat {self.opener} has already opened: {ask}"
        if phase is _OPENING and kind is Assist:
            return f"nobody has opened yet: {ask}"
        if kind is Pass:
            return f"there is nothing to decline now: {ask}"
        return f"{_WHEN.get(kind, f'{kind.__name__} is not legal now')}: {ask}"

    def _why_exchange_illegal(self, seat: int, discards: tuple[BestiaCard, ...]) -> str:
        hand = self.hands[seat]
        if len(set(discards)) != len(discards):
            return "each card can be discarded only once"
        if len(discards) > HAND_SIZE:
            return f"at most {HAND_SIZE} cards can be exchanged"
        missing = [str(c) for c in discards if c not in hand]
        return f"seat {seat} does not hold {', '.join(missing)}"

    def _why_card_illegal(self, seat: int, played: BestiaCard) -> str:
        hand = self.hands[seat]
        if played not in hand:
            return f"seat {seat} does not hold {played}"
        led = Suit(self._led)
        if any(c.suit == led for c in hand):
            return f"{led.name.lower()} was led: follow suit"
        trump = self.trump.name.lower()
        return f"void in {led.name.lower()}, seat {seat} must play a trump ({trump})"

    # ---- what a seat sees -------------------------------------------------------------------

    def observation(self, seat: int) -> BestiaObservation:
        if not 0 <= seat < self.num_seats:
            raise ValueError(f"seats are 0..{self.num_seats - 1}, got {seat}")
        tricks = list(self.tricks)
        if self.trick:
            tricks.append(Trick(len(self.tricks), self.trick_leader, tuple(self.trick), None))
        looked = self.looked[seat] and self.in_hand[seat]
        return BestiaObservation(
            seat=seat,
            phase=self.phase,
            to_act=self._to_act,
            hand_number=self.hand_number,
            dealer=self.dealer,
            giro=self.giro,
            dealer_hand=self.dealer_hand,
            stake=self.settings.stake,
            pot=self.pot,
            balances=tuple(self.balances),
            in_hand=tuple(self.in_hand),
            hand_sizes=tuple(len(hand) for hand in self.hands),
            hand=tuple(self.hands[seat]) if looked else (),
            looked=looked,
            turned_cards=tuple(self.turned),
            trump=self.trump,
            antes=tuple(self.antes),
            blind=tuple(self.blind),
            stolen=self.stolen,
            declarations=tuple(self.declarations),
            opener=self.opener,
            assistants=tuple(self.assistants),
            exchanges=tuple(self.exchanges),
            tricks=tuple(tricks),
            tricks_won=tuple(self.tricks_won),
            results=tuple(self.results),
        )

    @property
    def outcome(self) -> Outcome | None:
        if self._to_act is not None:
            return None
        return Outcome.from_scores(self.balances)

    # ---- copying ----------------------------------------------------------------------------

    def copy(self) -> Self:
        other = self._shallow_copy()
        self._copy_events_into(other)
        other._rng = self._rng.copy()
        other.balances = self.balances.copy()
        other.results = self.results.copy()
        other.hands = [hand.copy() for hand in self.hands]
        other.stock = self.stock.copy()
        other.turned = self.turned.copy()
        other.in_hand = self.in_hand.copy()
        other.looked = self.looked.copy()
        other.antes = self.antes.copy()
        other.blind = self.blind.copy()
        other.declarations = self.declarations.copy()
        other.assistants = self.assistants.copy()
        other.exchanges = self.exchanges.copy()
        other.folded_pile = self.folded_pile.copy()
        other.discard_pile = self.discard_pile.copy()
        other._discarded = self._discarded.copy()
        other.burnt = self.burnt.copy()
        other.tricks = self.tricks.copy()
        other.trick = self.trick.copy()
        other.tricks_won = self.tricks_won.copy()
        other._delayed = self._delayed.copy()
        return other


def _dispatch() -> dict[type, Callable[[BestiaState, Any], None]]:
    table: dict[type, Callable[[BestiaState, Any], None]] = {
        Pass: BestiaState._apply_pass,
        Raise: BestiaState._apply_raise,
        Call: BestiaState._apply_answer,
        Fold: BestiaState._apply_answer,
        Steal: BestiaState._apply_steal,
        Open: BestiaState._apply_declaration,
        Assist: BestiaState._apply_declaration,
        Exchange: BestiaState._apply_exchange,
        Discard: BestiaState._apply_discard,
        PlayCard: BestiaState._apply_card,
    }
    return table


_APPLY: Final = _dispatch()
