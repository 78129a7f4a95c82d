"""What every trick-taking game of the engine shares: which play wins a trick, and which
trick is still on the table.

Each game keeps its own card order (``trick_strength``); these take it as a key, so that the
rule "the strongest card of the trick wins it" is written once for every game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

PlayT = TypeVar("PlayT")
PlayT_co = TypeVar("PlayT_co", covariant=True)


class TrickLike(Protocol[PlayT_co]):
    """A game's trick: its plays in order, and its winner once it is complete."""

    @property
    def plays(self) -> tuple[PlayT_co, ...]: ...

    @property
    def winner(self) -> int | None: ...


def strongest_play(plays: Sequence[PlayT], strength: Callable[[PlayT], int]) -> PlayT:
    """The play of ``plays`` with the highest ``strength`` (at least one play)."""
    if not plays:
        raise ValueError("a trick needs at least one card to have a winner")
    return max(plays, key=strength)


def plays_on_the_table(tricks: Sequence[TrickLike[PlayT]]) -> tuple[PlayT, ...]:
    """The plays of the trick under way (the last one, while it has no winner), else none."""
    if tricks and tricks[-1].winner is None:
        return tricks[-1].plays
    return ()
