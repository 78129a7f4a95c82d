"""The settlement of a played hand (rules page, step 10), as a pure function."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ._types import Settlement

TRICKS: Final = 4


def settle(pot: int, opener: int, assistants: Sequence[int], tricks: Sequence[int]) -> Settlement:
    """Share ``pot`` (``P``, the pot when card play started) and charge the bestia payments.

    ``tricks`` holds every seat's tricks (0 for seats that did not play); ``assistants`` are in
    the order they assisted.  Each trick is worth ``P // 4``; the remainder ``P % 4`` goes one
    chip at a time, round and round, to the players who won a trick, in risk order (opener, then
    assistants).  An opener with fewer than 2 tricks pays ``2 * P``, an assistant with none pays
    ``P``; the payments go to the opener when it made its 2 tricks, else they are the next pot.
    """
    seats = len(tricks)
    players = (opener, *assistants)
    if pot < 0:
        raise ValueError(f"the pot cannot be negative, got {pot}")
    if not all(0 <= seat < seats for seat in players) or len(set(players)) != len(players):
        raise ValueError(f"opener and assistants must be distinct seats 0..{seats - 1}")
    if not assistants:
        raise ValueError("a played hand has at least one assistant")
    if any(count < 0 for count in tricks) or sum(tricks[seat] for seat in players) != TRICKS:
        raise ValueError(f"the players must win all {TRICKS} tricks, got {tuple(tricks)}")
    if sum(tricks) != TRICKS:
        raise ValueError("a seat that did not play cannot win a trick")

    return settlement_of(pot, opener, assistants, tricks)


def settlement_of(
    pot: int, opener: int, assistants: Sequence[int], tricks: Sequence[int]
) -> Settlement:
    """:func:`settle` without checking its arguments (the engine's own, already valid)."""
    per_trick, remainder = divmod(pot, TRICKS)
    shares = [per_trick * count for count in tricks]
    if remainder:
        winners = [seat for seat in (opener, *assistants) if tricks[seat]]
        for turn in range(remainder):
            shares[winners[turn % len(winners)]] += 1
    bestia = [0] * len(tricks)
    opener_made = tricks[opener] >= 2
    payments = 0 if opener_made else 2 * pot
    bestia[opener] = payments
    for seat in assistants:
        if not tricks[seat]:
            bestia[seat] = pot
            payments += pot
    net = [share - paid for share, paid in zip(shares, bestia, strict=True)]
    to_opener = payments if opener_made else 0
    net[opener] += to_opener
    return Settlement(
        pot=pot,
        per_trick=per_trick,
        opener=opener,
        assistants=tuple(assistants),
        tricks=tuple(tricks),
        shares=tuple(shares),
        bestia=tuple(bestia),
        opener_made=opener_made,
        to_opener=to_opener,
        next_pot=0 if opener_made else payments,
        net=tuple(net),
    )
