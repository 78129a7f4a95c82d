"""The batteries' card finder itself: what it misses, no battery would see leaked."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import pytest

from bisca.engine.belote import DECK

from .battery import cards_in


class Colour(Enum):
    RED = 1


@dataclass(frozen=True)
class Inner:
    cards: tuple[object, ...]
    colour: Colour
    note: str | None


@dataclass(frozen=True)
class Outer:
    inner: Inner
    by_seat: dict[object, object]
    pile: list[object]
    marked: frozenset[object]
    count: int


def test_every_card_is_found_however_deep_and_whatever_holds_it() -> None:
    value = Outer(
        inner=Inner(cards=(DECK[0], (DECK[1], [DECK[2]])), colour=Colour.RED, note=None),
        by_seat={DECK[3]: [DECK[4]], 2: {"x": DECK[5]}},
        pile=[Inner(cards=(), colour=Colour.RED, note="n"), DECK[6]],
        marked=frozenset({DECK[7]}),
        count=3,
    )
    # Twice: the second walk goes by what the first learnt of each type.
    for _ in range(2):
        assert sorted(card.index for card in cards_in(value)) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert cards_in((1, "a", 2.5, None, True, Colour.RED)) == []


def test_a_value_the_walk_cannot_open_is_refused_by_name() -> None:
    class Opaque:
        pass

    with pytest.raises(AssertionError, match="unexpected value of type Opaque"):
        cards_in([DECK[0], Opaque()])
