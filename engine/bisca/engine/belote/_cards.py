"""Belote's 32 French cards, their orders and their points (rules page, "Cards")."""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar

from .._cards import Card


class Suit(IntEnum):
    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def symbol(self) -> str:
        return "♠♥♦♣"[self]


class Rank(IntEnum):
    SEVEN = 0
    EIGHT = 1
    NINE = 2
    TEN = 3
    JACK = 4
    QUEEN = 5
    KING = 6
    ACE = 7

    @property
    def symbol(self) -> str:
        return ("7", "8", "9", "10", "J", "Q", "K", "A")[self]


# Strength inside a suit, higher wins; indexed by Rank.
_TRUMP_ORDER = (0, 1, 6, 4, 7, 2, 3, 5)  # J 9 A 10 K Q 8 7
_PLAIN_ORDER = (0, 1, 2, 6, 3, 4, 5, 7)  # A 10 K Q J 9 8 7
_TRUMP_POINTS = (0, 0, 14, 10, 20, 3, 4, 11)
_PLAIN_POINTS = (0, 0, 0, 10, 2, 3, 4, 11)


class BeloteCard(Card):
    """One of the 32 cards; ``index = suit * 8 + rank``."""

    __slots__ = ("plain_order", "plain_points", "trump_order", "trump_points")

    DECK: ClassVar[tuple[BeloteCard, ...]]

    suit: Suit
    rank: Rank

    def __init__(self, suit: Suit, rank: Rank) -> None:
        super().__init__(suit * 8 + rank, suit, rank, rank.symbol + suit.symbol)
        self.trump_order = _TRUMP_ORDER[rank]
        self.plain_order = _PLAIN_ORDER[rank]
        self.trump_points = _TRUMP_POINTS[rank]
        self.plain_points = _PLAIN_POINTS[rank]

    def points(self, trump: int) -> int:
        return self.trump_points if self.suit == trump else self.plain_points


BeloteCard.DECK = tuple(BeloteCard(suit, rank) for suit in Suit for rank in Rank)
DECK = BeloteCard.DECK
TOTAL_CARD_POINTS = 152
LAST_TRICK_BONUS = 10
CAPOT_POINTS = 252
BELOTE_POINTS = 20


def card(label: str) -> BeloteCard:
    """The card written like ``"J♠"``, ``"10♥"``, or with a letter suit: ``"JS"``, ``"10H"``."""
    letters = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
    text = label.strip().upper()
    if text and text[-1] in letters:
        text = text[:-1] + letters[text[-1]]
    return BeloteCard.from_label(text)
