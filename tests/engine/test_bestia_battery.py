"""The generic engine battery, run on Bestia for every seat count and both ante modes."""

from typing import Any

import pytest

from bisca.engine import Card
from bisca.engine.bestia import DECK, BestiaSettings, BestiaState, Phase, PlayCard

from .battery import GameUnderTest, run_battery


def visible_cards(state: Any, seat: int) -> set[Card]:
    """Rules page, "What each seat may see": every turned card, the cards played this hand,
    and the seat's own cards once it has looked at them while it is still in the hand."""
    assert isinstance(state, BestiaState)
    seen: set[Card] = set(state.turned)
    for trick in state.tricks:
        seen.update(p.card for p in trick.plays)
    seen.update(p.card for p in state.trick)
    if state.looked[seat] and state.in_hand[seat]:
        seen.update(state.hands[seat])
    return seen


def revealed_by(state: Any, action: Any) -> set[Card]:
    """Only a played card becomes public (a stolen card was public already)."""
    return {action.card} if isinstance(action, PlayCard) else set()


def check_invariants(state: Any) -> None:
    assert isinstance(state, BestiaState)
    n = state.num_seats
    assert sum(state.balances) + state.pot == 0, "chips are conserved"
    assert state.pot >= 0
    on_table = state.turned[1:] if state.stolen else state.turned
    played = [p.card for trick in state.tricks for p in trick.plays] + [p.card for p in state.trick]
    everything = [
        *(c for hand in state.hands for c in hand),
        *on_table,
        *state.stock,
        *state.folded_pile,
        *(c for c, _ in state.discard_pile),
        *state.burnt,
        *([state.dealer_discard] if state.dealer_discard is not None else []),
        *played,
    ]
    assert sorted(c.index for c in everything) == list(range(len(DECK))), "each card once"
    for seat in range(n):
        if not state.in_hand[seat]:
            assert state.hands[seat] == []
    if state.phase is Phase.PLAYING:
        players = [seat for seat in range(n) if state.in_hand[seat]]
        assert set(players) == {state.opener, *state.assistants}
        in_trick = {p.seat for p in state.trick}
        for seat in players:
            assert len(state.hands[seat]) == 4 - len(state.tricks) - (seat in in_trick)
    if state.phase is Phase.MATCH_OVER:
        assert state.pot == 0
        outcome = state.outcome
        assert outcome is not None and outcome.scores == tuple(state.balances)


def bestia(settings: BestiaSettings) -> GameUnderTest:
    return GameUnderTest(
        name="bestia",
        make=lambda seed: BestiaState(settings, seed),
        visible_cards=visible_cards,
        revealed_by=revealed_by,
        check_invariants=check_invariants,
    )


# Seven seats' playouts take seconds each: out of the fast lane (``make check``).
@pytest.mark.parametrize("seats", [4, 5, 6, pytest.param(7, marks=pytest.mark.volume)])
@pytest.mark.parametrize("ante_mode", ["all", "dealer"])
@pytest.mark.parametrize("blind_raises", [True, False], ids=["blind", "no-blind"])
def test_battery(seats: int, ante_mode: str, blind_raises: bool) -> None:
    """Short matches (a first round and a giro capped at 2 hands a dealer), so that the deal
    passes, the giro repeats and the cap's split all happen within a few playouts."""
    settings = BestiaSettings(
        seats=seats,
        ante_mode=ante_mode,  # type: ignore[arg-type]
        blind_raises=blind_raises,
        rounds=2,
        giro_max_hands=2,
        first_dealer=seats - 1,
    )
    run_battery(bestia(settings), playouts=4, seed=seats * 10 + blind_raises)
