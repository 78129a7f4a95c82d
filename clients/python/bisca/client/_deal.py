"""Whether the cards a seat was shown came from the seed the server committed to.

The commitment (``MatchStarted.deal_commitment``, opened by ``MatchEnded``) proves only that
the seed revealed at the end was fixed before the first card: a server could still commit to
one seed and deal from another.  The engine deals from a seed alone (its own SplitMix64
generator, the same in every version), so the bot deals again from the revealed seed and
compares what it was shown of the first deal (:class:`ShownStart`, kept as the messages come):

* the events the engine gives its seat at the start of the match, before anyone acts
  (Belote: its first five cards and the turned card; Bestia: the antes and the turned trump),
  each index as first sent (a later copy that differs fails the check: a server could show
  rigged cards and send the honest ones again at the end), and no start event the seat may not
  see;
* Bestia: the cards the seat looks at in the first hand (its first ``HandLooked``), and the
  hand in the observation of its first request after that, the one the bot plays from (unless
  it exchanged or played a card first): when it looks depends on the blind round, but which
  cards it sees depends on the seed alone (its dealt four, and the turned trump for a dealer
  who stole it);
* Belote: the hand and the turned card in the observation of its first request, once the
  moves that observation shows (bids, the first trick's cards) are played on the deal again
  (a seat first asked after a take holds the eight cards the taker decides).

Later deals depend on the moves too (and on hidden cards: discards, other hands), so a bot
cannot deal them again on its own; the match's log can (``bisca replay verify``), for whoever
holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import TypeVar

from bisca import wire
from bisca.engine import GAMES, MalformedActionError, MatchState, Settings, bestia
from bisca.v1 import arena_pb2, belote_pb2, bestia_pb2

ObservationT = TypeVar("ObservationT", belote_pb2.Observation, bestia_pb2.Observation)

#: The events of a match kept for the check, by index: those before the first action are
#: among the first few (6 in Belote, 8 in Bestia at 5 seats), the rest are not kept.
KEPT_EVENTS = 32
#: The largest event kept for the check: the start's events a seat is shown are tens of bytes
#: (38 at most, both games, every seat count); a bigger one is not one of them, and only its
#: size is kept (a server's events could otherwise fill the memory of the deal check).
MAX_KEPT_EVENT_BYTES = 16 * 1024


@dataclass
class ShownStart:
    """What a seat was shown of the first deal, as the messages came."""

    #: The first copy of each of the first :data:`KEPT_EVENTS` events, unknown fields
    #: discarded (a field this SDK does not know cannot have fooled the bot).
    events: dict[int, arena_pb2.GameEvent] = field(default_factory=dict)
    #: The size of each among them too big to be kept, by index.
    oversized: dict[int, int] = field(default_factory=dict)
    #: The first index sent again with other content (``None``: none was).
    resent_differently: int | None = None
    #: Bestia: the index of the first hand's ``HandStarted`` (another index starts the next
    #: hand), and the seat's first look at its cards in the first hand (or its size, when too
    #: big to be kept).
    first_hand: int | None = None
    first_hand_over: bool = False
    first_look: arena_pb2.GameEvent | None = None
    oversized_look: int | None = None
    #: Belote: the observation of the seat's first request; Bestia: of its first request
    #: after it looked at its cards (or its size, when too big).
    first_observation: belote_pb2.Observation | None = None
    first_looked_observation: bestia_pb2.Observation | None = None
    oversized_observation: int | None = None
    asked: bool = False
    #: The wire size of what is kept (:mod:`._kept` estimates what it costs from it).
    kept_bytes: int = 0

    def show(self, event: arena_pb2.GameEvent) -> None:
        """The seat was shown ``event`` (in a batch, a request or the end)."""
        size = event.ByteSize()
        if event.WhichOneof("game") == "bestia":
            kind = event.bestia.WhichOneof("event")
            if kind == "hand_started" and self.first_hand is None:
                self.first_hand = event.index
            elif kind == "hand_started" and event.index != self.first_hand:
                self.first_hand_over = True
            elif kind == "hand_looked" and not self.first_hand_over and not self._looked:
                if size > MAX_KEPT_EVENT_BYTES:
                    self.oversized_look = size
                else:
                    self.first_look = self._copy(event)
                    self.kept_bytes += size
        if event.index >= KEPT_EVENTS:
            return
        copy = None if size > MAX_KEPT_EVENT_BYTES else self._copy(event)
        first_size = self.oversized.get(event.index)
        first = self.events.get(event.index)
        if first is None and first_size is None:
            if copy is None:
                self.oversized[event.index] = size
            else:
                self.events[event.index] = copy
                self.kept_bytes += size
        elif (copy is None or first != copy) and self.resent_differently is None:
            self.resent_differently = event.index

    def ask(self, request: arena_pb2.ActionRequest) -> None:
        """The seat was asked ``request`` (its observation is what the bot plays from)."""
        game = request.observation.WhichOneof("game")
        if game == "belote" and not self.asked:
            self.first_observation = self._keep(request.observation.belote)
        elif (
            game == "bestia"
            and request.observation.bestia.looked
            and self.first_looked_observation is None
            and self.oversized_observation is None
        ):
            self.first_looked_observation = self._keep(request.observation.bestia)
        self.asked = True

    def _keep(self, observation: ObservationT) -> ObservationT | None:
        """A copy of ``observation`` without unknown fields (``None``, its size noted, when it
        is too big to be an honest one: those are under a kilobyte)."""
        size = observation.ByteSize()
        if size > MAX_KEPT_EVENT_BYTES:
            self.oversized_observation = size
            return None
        copy = type(observation)()
        copy.CopyFrom(observation)
        copy.DiscardUnknownFields()
        self.kept_bytes += size
        return copy

    @staticmethod
    def _copy(event: arena_pb2.GameEvent) -> arena_pb2.GameEvent:
        copy = arena_pb2.GameEvent()
        copy.CopyFrom(event)
        copy.DiscardUnknownFields()
        return copy

    @property
    def _looked(self) -> bool:
        return self.first_look is not None or self.oversized_look is not None

    @property
    def nothing(self) -> bool:
        """Nothing of the deal reached the seat (a match that failed before its first card)."""
        return not (self.events or self.oversized or self.asked or self._looked)


def seat_outside(game: str, settings: Settings, seat: int) -> str | None:
    """Why ``seat`` is no seat of such a match (``None``: it is one).  A seat outside the
    table is shown no card of the start, so nothing would be compared: not a start that holds."""
    seats = GAMES[game].seats(settings)
    return (
        None if 0 <= seat < seats else f"seat {seat} is not a seat of a {seats}-seat {game} match"
    )


def start_dealt_from(
    game: str, settings: Settings, seed: int, seat: int, shown: ShownStart
) -> str | None:
    """``None`` when what ``seat`` was shown of the first deal (:class:`ShownStart`) is what
    a match dealt from ``seed`` shows it; else what differs."""
    not_a_seat = seat_outside(game, settings, seat)
    if not_a_seat is not None:
        return not_a_seat
    if shown.resent_differently is not None:
        return f"event {shown.resent_differently} was sent twice, with different content"
    state = GAMES[game].new_match(settings, seed)
    start = [
        (audience, wire.encode_game_event(game, index, event))
        for index, (audience, event) in enumerate(state.all_events(0))
    ]
    for index, (audience, expected) in enumerate(start):
        sent = shown.events.get(index)
        size = shown.oversized.get(index)
        if not audience >> seat & 1:
            if sent is not None or size is not None:
                return f"event {index} was sent, but seat {seat} is not shown it"
            continue
        name = expected.WhichOneof("game")
        kind = getattr(expected, name or "belote").WhichOneof("event")
        if size is not None:
            return f"event {index} is not what seed {seed} deals: {size:,} bytes were sent"
        if sent is None:
            return f"event {index} of the start ({kind}) was never sent"
        if sent != expected:
            return f"event {index} is not what seed {seed} deals: {_short(sent)} was sent"
    if shown.oversized_look is not None:
        looked = f"the cards seat {seat} looked at are not what seed {seed} deals"
        return f"{looked}: {shown.oversized_look:,} bytes were sent"
    if shown.oversized_observation is not None:
        hand = f"the hand in seat {seat}'s first request is not what seed {seed} deals"
        return f"{hand}: {shown.oversized_observation:,} bytes were sent"
    if game == "bestia":
        return _first_look_differs(state, seed, seat, shown)
    return _first_hand_differs(state, game, seed, seat, shown)


def _first_look_differs(state: MatchState, seed: int, seat: int, shown: ShownStart) -> str | None:
    """Bestia: the seat's first look, and the hand in its first request after it (before it
    exchanged or played a card), are its dealt four (and, for the dealer, the turned trump if
    it stole it), in the engine's order."""
    start = [event for _, event in state.all_events(0)]
    [dealt] = [event for event in start if isinstance(event, bestia.HandDealt)]
    [started] = [event for event in start if isinstance(event, bestia.HandStarted)]
    [turned] = [event for event in start if isinstance(event, bestia.TrumpTurned)]
    own = dealt.cards[4 * seat : 4 * seat + 4]
    looks = [bestia.HandLooked(seat, own)]
    if seat == started.dealer:
        stolen = tuple(sorted((*own, turned.card), key=attrgetter("index")))
        looks.append(bestia.HandLooked(seat, stolen))
    encoded = [wire.encode_game_event("bestia", 0, look).bestia.hand_looked for look in looks]
    looked = shown.first_look
    if looked is not None and looked.bestia.hand_looked not in encoded:
        return (
            f"the cards seat {seat} looked at are not what seed {seed} deals: "
            f"{_short(looked)} was sent"
        )
    first = shown.first_looked_observation
    if first is None or first.hand_number != started.hand_number or _changed_hand(first, seat):
        return None  # not asked after looking in the first hand, or its hand has changed since
    if any(list(first.hand) == list(look.cards) for look in encoded):
        return None
    cards = " ".join(" ".join(str(card).split()) for card in first.hand)
    return (
        f"the hand in seat {seat}'s first request after it looked is not what seed {seed} "
        f"deals: {cards}"
    )


def _changed_hand(observation: bestia_pb2.Observation, seat: int) -> bool:
    """Whether the seat's hand may differ from its look: it exchanged or played a card."""
    return any(exchange.seat == seat for exchange in observation.exchanges) or any(
        play.seat == seat for trick in observation.tricks for play in trick.plays
    )


def _first_hand_differs(
    state: MatchState, game: str, seed: int, seat: int, shown: ShownStart
) -> str | None:
    """Belote: the hand and the turned card of the seat's first request are those the seed
    deals, once the moves its observation shows (the bids, the first trick's cards) are played
    on the deal again: a seat first asked after a take holds its eight cards, which the taker
    decides.  A first request in a later deal (a seat first asked after a reconnect) is not
    compared."""
    first = shown.first_observation
    if first is None or first.deal_number != 0:
        return None
    why = f"the hand in seat {seat}'s first request is not what seed {seed} deals"
    moves = [(bid.seat, _bid_action(bid)) for bid in first.bids]
    moves += [
        (play.seat, belote_pb2.Action(play_card=belote_pb2.PlayCard(card=play.card)))
        for trick in first.tricks
        for play in trick.plays
    ]
    for mover, move in moves:
        if state.is_over or state.to_act != mover:
            return f"{why}: its moves before it are not the match's"
        try:
            action = wire.decode_game_action(game, arena_pb2.GameAction(belote=move))
        except (MalformedActionError, ValueError):
            return f"{why}: its moves before it cannot be read"
        if state.why_illegal(action) is not None:
            return f"{why}: its moves before it are not legal with that deal"
        state.apply(action)
    dealt = wire.encode_game_observation(game, state.observation(seat)).belote
    if list(first.hand) == list(dealt.hand) and first.turned_card == dealt.turned_card:
        return None
    cards = " ".join(" ".join(str(card).split()) for card in first.hand)
    return f"{why}: {cards}"


def _bid_action(bid: belote_pb2.BidMade) -> belote_pb2.Action:
    """The action that makes ``bid`` (a take of its suit, or a pass)."""
    action = belote_pb2.Action()
    if bid.HasField("suit"):
        action.take.suit = bid.suit
    else:
        getattr(action, "pass").SetInParent()  # ("pass" is a Python keyword)
    return action


def _short(event: arena_pb2.GameEvent) -> str:
    text = " ".join(str(event).split())
    return text if len(text) <= 200 else text[:200] + "..."
