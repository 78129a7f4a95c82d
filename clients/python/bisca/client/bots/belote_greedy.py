"""The ``greedy`` Belote bot: rule-based, deterministic, a pure function of the request.

Bidding
    A suit is worth taking when the hand is strong in it: the J or the 9 of it, and either at
    least 3 cards of it or a strength of :data:`TAKE_THRESHOLD` (trump points of its cards plus
    10 per ace of another suit).  The taker always receives the turned card, so it counts in
    both rounds: as a trump in round 1, as a side card in round 2.  Round 1 takes the turned
    suit if it qualifies; round 2 takes the strongest qualifying other suit; otherwise pass.

Play
    Leading, it cashes a *master* card of a plain suit (no higher card of that suit is left
    outside its hand), the one worth most points; else it leads its least valuable card.
    Following, when the partner is not already winning and some legal card would win the
    trick, it wins with the cheapest such card; otherwise it throws its least valuable card.
    "Cheap" and "least valuable" mean fewest card points, a plain card before a trump, then the
    lowest in its suit's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bisca.engine.belote import (
    BeloteAction,
    BeloteCard,
    BeloteObservation,
    Phase,
    PlayCard,
    Rank,
    Suit,
    Take,
    current_trick,
    trick_strength,
    winning_play,
)

from .._types import Request

TAKE_THRESHOLD = 44
"""E.g. J and 9 of trump (34 points) with one ace aside, or J and 10 with two aces aside."""


def greedy(request: Request[BeloteObservation, BeloteAction]) -> BeloteAction:
    """The greedy bot's action for a Belote request."""
    observation = request.observation
    legal = request.legal_actions
    if observation.phase is Phase.PLAYING:
        cards = [action.card for action in legal if isinstance(action, PlayCard)]
        return PlayCard(_choose_card(observation, cards))
    return _bid(observation, legal)


# ---- bidding ---------------------------------------------------------------------------------


def take_strength(cards: Iterable[BeloteCard], trump: Suit) -> int | None:
    """How strong ``cards`` are with ``trump`` as trump, or ``None`` when too weak to take."""
    cards = list(cards)
    trumps = [c for c in cards if c.suit == trump]
    ranks = {c.rank for c in trumps}
    if Rank.JACK not in ranks and Rank.NINE not in ranks:
        return None
    side_aces = sum(1 for c in cards if c.suit != trump and c.rank == Rank.ACE)
    strength = sum(c.trump_points for c in trumps) + 10 * side_aces
    if len(trumps) >= 3 or strength >= TAKE_THRESHOLD:
        return strength
    return None


def _bid(observation: BeloteObservation, legal: Sequence[BeloteAction]) -> BeloteAction:
    cards = [*observation.hand, observation.turned_card]
    best: tuple[int, BeloteAction] | None = None
    for action in legal:
        if isinstance(action, Take):
            strength = take_strength(cards, action.suit)
            if strength is not None and (best is None or strength > best[0]):
                best = (strength, action)
    if best is not None:
        return best[1]
    return next(action for action in legal if not isinstance(action, Take))


# ---- card play -------------------------------------------------------------------------------


def cost(card: BeloteCard, trump: int) -> tuple[int, bool, int, int]:
    """What playing ``card`` gives away: its points, then whether it is a trump, then its order."""
    is_trump = card.suit == trump
    order = card.trump_order if is_trump else card.plain_order
    return (card.points(trump), is_trump, order, card.index)


def _choose_card(observation: BeloteObservation, cards: list[BeloteCard]) -> BeloteCard:
    trump = observation.trump
    assert trump is not None, "card play always has a trump"
    plays = current_trick(observation)
    if not plays:
        return _lead(observation, cards, trump)
    led = plays[0].card.suit
    winning = winning_play(plays, trump)
    if winning.seat != observation.seat ^ 2:
        to_beat = trick_strength(winning.card, led, trump)
        winners = [c for c in cards if trick_strength(c, led, trump) > to_beat]
        if winners:
            return min(winners, key=lambda c: cost(c, trump))
    return min(cards, key=lambda c: cost(c, trump))


def _lead(observation: BeloteObservation, cards: list[BeloteCard], trump: Suit) -> BeloteCard:
    gone = {play.card for trick in observation.tricks for play in trick.plays}
    gone.update(observation.hand)
    masters = [
        c
        for c in cards
        if c.suit != trump
        and all(
            other in gone
            for other in BeloteCard.DECK
            if other.suit == c.suit and other.plain_order > c.plain_order
        )
    ]
    if masters:
        return max(masters, key=lambda c: (c.plain_points, -c.index))
    return min(cards, key=lambda c: cost(c, trump))
