"""The base of every game's cards: one interned object per card of a deck.

Cards are compared and hashed by identity (each card exists once), which keeps the hot paths of
random playouts cheap, and they carry their game's precomputed attributes in slots.  Copying or
pickling a card yields the same object, so copied states still share the deck.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self


class Card:
    """A card of one game's deck.  Subclasses fill ``DECK`` with every card, by index."""

    __slots__ = ("index", "label", "rank", "suit")

    DECK: ClassVar[tuple[Any, ...]] = ()

    index: int
    suit: int
    rank: int
    label: str

    def __init__(self, index: int, suit: int, rank: int, label: str) -> None:
        self.index = index
        self.suit = suit
        self.rank = rank
        self.label = label

    @classmethod
    def from_index(cls, index: int) -> Self:
        """The card with this index in the deck (``ValueError`` when out of range)."""
        if not 0 <= index < len(cls.DECK):
            raise ValueError(f"{cls.__name__} index must be 0..{len(cls.DECK) - 1}, got {index}")
        card: Self = cls.DECK[index]
        return card

    @classmethod
    def from_label(cls, label: str) -> Self:
        """The card written ``label`` (as its ``str`` prints it)."""
        for card in cls.DECK:
            if card.label == label:
                found: Self = card
                return found
        raise ValueError(f"no {cls.__name__} is labelled {label!r}")

    def __repr__(self) -> str:
        return self.label

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return (type(self).from_index, (self.index,))
