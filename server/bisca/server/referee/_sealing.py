"""Sealed deals: which seeds no interface may show yet.

The seed deals every hidden hand, so it stays hidden while any match dealt from it (the same
game and seed: a duplicate-deal twin, a rotation of a tournament's set) is waiting or running,
here or in another process writing into the same store.  A person's table seals only its own
seed (``MatchPlan.seals_twins``): a visitor may deal it from a finished match's seed, shown
already, and must not hold that match's replay closed by it.  The referee computes the set
(:meth:`Referee.sealed_deals`); the operator RPCs, the web app and a bot's ``MatchEnded`` all
ask it, so the rule lives here once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Deal:
    """What deals the cards: the game and the seed (the settings only say how many)."""

    game: str
    seed: int


#: Each sealed deal, with one of the unfinished matches that seals it.
SealedDeals = Mapping[Deal, str]


def seal_map(unfinished: Iterable[tuple[str, str, int]]) -> dict[Deal, str]:
    """The sealed deals of ``(match id, game, seed)`` triples of unfinished matches."""
    sealed: dict[Deal, str] = {}
    for match_id, game, seed in unfinished:
        sealed.setdefault(Deal(game, seed), match_id)
    return sealed
