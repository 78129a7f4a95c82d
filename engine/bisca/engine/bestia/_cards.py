"""Bestia's 40 Italian cards and their order (rules page, "Cards").

A card is written rank then suit letter, with the suits' Italian initials: ``D`` denari (coins),
``C`` coppe (cups), ``S`` spade (swords), ``B`` bastoni (clubs); ranks ``A K Q J 7 6 5 4 3 2``
(Q is the cavallo, J the fante).  So ``"7D"`` is the seven of coins and ``"AB"`` the ace of clubs.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar

from .._cards import Card


class Suit(IntEnum):
    COINS = 0
    CUPS = 1
    SWORDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        return "DCSB"[self]


class Rank(IntEnum):
    """Ranks numbered by strength: a higher value beats a lower one of the same suit."""

    TWO = 0
    THREE = 1
    FOUR = 2
    FIVE = 3
    SIX = 4
    SEVEN = 5
    JACK = 6
    QUEEN = 7
    KING = 8
    ACE = 9

    @property
    def symbol(self) -> str:
        return "234567JQKA"[self]


class BestiaCard(Card):
    """One of the 40 cards; ``index = suit * 10 + rank``, so deck order is suit by suit, 2 to A."""

    __slots__ = ()

    DECK: ClassVar[tuple[BestiaCard, ...]]

    suit: Suit
    rank: Rank

    def __init__(self, suit: Suit, rank: Rank) -> None:
        super().__init__(suit * 10 + rank, suit, rank, rank.symbol + suit.letter)


BestiaCard.DECK = tuple(BestiaCard(suit, rank) for suit in Suit for rank in Rank)
DECK = BestiaCard.DECK


def card(label: str) -> BestiaCard:
    """The card written like ``"7D"`` or ``"ab"`` (rank, then suit letter D/C/S/B)."""
    return BestiaCard.from_label(label.strip().upper())
