"""Determinization: a deal of the cards a seat has not seen, consistent with what it saw.

A seat sees its own hand and every card played, so the others' hands are drawn from the rest
(the *pool*), each seat given as many cards as it holds, and never a card the seat cannot hold:
a seat that did not follow a suit holds none of it, one that had to trump and did not holds no
trump, one that had to overtrump and did not holds no trump above the one it played (each
game says which cards each seat may hold).  Cards known to be in a hand (Belote's turned
card, taken by the taker) are placed first.

The draw is *most constrained first*: the pool is shuffled, then each card goes to a random
seat among those that may hold it and still have room, the cards with fewest such seats
first.  That can paint itself into a corner (a seat left with room only for cards it cannot
hold); it then starts again, and after :data:`ATTEMPTS` failures it drops the limits (the
limits the bot inferred can only be wrong if a rule changed, and a deal of the right sizes is
still a useful guess).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TypeVar

from bisca.engine import Card

CardT = TypeVar("CardT", bound=Card)

ATTEMPTS = 20


def deal(
    rng: random.Random,
    pool: Sequence[CardT],
    sizes: Mapping[int, int],
    may_hold: Mapping[int, set[CardT] | None],
    known: Mapping[int, Sequence[CardT]] | None = None,
) -> dict[int, list[CardT]]:
    """Hands for the seats of ``sizes`` (seat -> cards held) from ``pool`` and ``known``.

    ``may_hold[seat]`` is the set of pool cards the seat may hold (``None``: any).  ``known``
    cards go to their seat first (and count in its size).  The pool may hold more cards than
    the hands need (Bestia's stock and folded pile): the rest are left out.
    """
    known = known or {}
    room = {seat: size - len(known.get(seat, ())) for seat, size in sizes.items()}
    if any(left < 0 for left in room.values()):
        raise ValueError("a seat is known to hold more cards than it holds")
    needed = sum(room.values())
    if needed > len(pool):
        raise ValueError(f"{needed} unseen cards are needed and only {len(pool)} are unseen")
    for attempt in range(ATTEMPTS + 1):
        limited = attempt < ATTEMPTS
        hands = _try(rng, pool, room, may_hold if limited else {}, needed)
        if hands is not None:
            for seat, cards in known.items():
                hands.setdefault(seat, []).extend(cards)
            return hands
    raise AssertionError("a deal without limits always succeeds")  # pragma: no cover


def _try(
    rng: random.Random,
    pool: Sequence[CardT],
    room: Mapping[int, int],
    may_hold: Mapping[int, set[CardT] | None],
    needed: int,
) -> dict[int, list[CardT]] | None:
    cards = list(pool)
    rng.shuffle(cards)
    left = dict(room)
    hands: dict[int, list[CardT]] = {seat: [] for seat in room}
    holders = {
        card: [s for s in room if (allowed := may_hold.get(s)) is None or card in allowed]
        for card in cards
    }
    # With more cards than room (a stock), a card may also stay out: it is "held" by nobody.
    spare = len(cards) - needed
    cards.sort(key=lambda c: len(holders[c]))
    for card in cards:
        open_seats = [s for s in holders[card] if left[s] > 0]
        if spare > 0 and (not open_seats or rng.random() * len(cards) < spare):
            spare -= 1
            continue
        if not open_seats:
            return None
        seat = rng.choice(open_seats)
        hands[seat].append(card)
        left[seat] -= 1
    if any(left.values()):
        return None
    return hands
