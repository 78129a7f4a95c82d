"""The ``greedy`` Bestia bot: rule-based, deterministic, a pure function of the request.

Blind decisions (buio, controbuio, answering them, the rubata) are taken without seeing a card,
so it stays out of them: no raise, fold when asked to call, no steal.  With its cards:

Declaring
    It opens (undertaking 2 tricks) with two strong trumps (ace, king or queen of trump) or three
    trumps of any rank, and assists (undertaking 1) with one strong trump.

Exchanging
    It keeps its trumps and its aces and discards the rest; a dealer who stole discards its least
    valuable card (the lowest non-trump, else the lowest trump).

Play
    Leading, it plays a *master* card (no higher card of its suit is left unseen), a trump
    before a plain card; else its lowest card.  Following, it wins the trick with the cheapest
    card that wins it now; when none does, it throws its lowest card.  "Lowest" means a plain
    card before a trump, then the lowest rank.
"""

from __future__ import annotations

from collections.abc import Sequence

from bisca.engine.bestia import (
    Assist,
    BestiaAction,
    BestiaCard,
    BestiaObservation,
    Discard,
    Exchange,
    Open,
    Pass,
    Phase,
    PlayCard,
    Rank,
    Suit,
    current_trick,
    trick_strength,
)

from .._types import Request

STRONG_TRUMPS = frozenset({Rank.ACE, Rank.KING, Rank.QUEEN})


def greedy(request: Request[BestiaObservation, BestiaAction]) -> BestiaAction:
    """The greedy bot's action for a Bestia request."""
    observation = request.observation
    legal = request.legal_actions
    phase = observation.phase
    if phase is Phase.PLAYING:
        cards = [action.card for action in legal if isinstance(action, PlayCard)]
        return PlayCard(_choose_card(observation, cards))
    if phase is Phase.OPENING:
        return Open() if wants_to_open(observation.hand, observation.trump) else Pass()
    if phase is Phase.ASSISTING:
        return Assist() if wants_to_assist(observation.hand, observation.trump) else Pass()
    if phase is Phase.EXCHANGE:
        return _exchange(observation, legal)
    if phase is Phase.DEALER_DISCARD:
        cards = [action.card for action in legal if isinstance(action, Discard)]
        return Discard(min(cards, key=lambda c: lowness(c, observation.trump)))
    # Blind raises, answering them and the rubata: the first legal action is the cautious one
    # (no raise, fold, no steal).
    return legal[0]


# ---- declaring and exchanging ----------------------------------------------------------------


def wants_to_open(hand: Sequence[BestiaCard], trump: Suit) -> bool:
    trumps = [c for c in hand if c.suit == trump]
    return sum(1 for c in trumps if c.rank in STRONG_TRUMPS) >= 2 or len(trumps) >= 3


def wants_to_assist(hand: Sequence[BestiaCard], trump: Suit) -> bool:
    return any(c.suit == trump and c.rank in STRONG_TRUMPS for c in hand)


def keeps(card: BestiaCard, trump: Suit) -> bool:
    """Whether the accomodo keeps ``card``: trumps and aces."""
    return card.suit == trump or card.rank == Rank.ACE


def _exchange(observation: BestiaObservation, legal: Sequence[BestiaAction]) -> BestiaAction:
    discards = {c for c in observation.hand if not keeps(c, observation.trump)}
    for action in legal:
        if isinstance(action, Exchange) and set(action.discards) == discards:
            return action
    return legal[0]


# ---- card play -------------------------------------------------------------------------------


def lowness(card: BestiaCard, trump: int) -> tuple[bool, int, int]:
    """Sort key, least valuable first: a plain card before a trump, then the lower rank."""
    return (card.suit == trump, card.rank, card.index)


def _choose_card(observation: BestiaObservation, cards: list[BestiaCard]) -> BestiaCard:
    trump = observation.trump
    plays = current_trick(observation)
    if not plays:
        return _lead(observation, cards)
    led = plays[0].card.suit
    to_beat = max(trick_strength(play.card, led, trump) for play in plays)
    winners = [c for c in cards if trick_strength(c, led, trump) > to_beat]
    if winners:
        return min(winners, key=lambda c: trick_strength(c, led, trump))
    return min(cards, key=lambda c: lowness(c, trump))


def _lead(observation: BestiaObservation, cards: list[BestiaCard]) -> BestiaCard:
    trump = observation.trump
    seen = {play.card for trick in observation.tricks for play in trick.plays}
    seen.update(observation.hand)
    if not observation.stolen:
        # Turned cards stay face up on the table; a stolen one went to the dealer's hand.
        seen.update(observation.turned_cards)
    else:
        seen.update(observation.turned_cards[1:])
    masters = [
        c
        for c in cards
        if all(
            other in seen
            for other in BestiaCard.DECK
            if other.suit == c.suit and other.rank > c.rank
        )
    ]
    if masters:
        return max(masters, key=lambda c: (c.suit == trump, c.rank, -c.index))
    return min(cards, key=lambda c: lowness(c, trump))
