"""The generic engine battery, run on Belote in every match shape."""

from typing import Any

import pytest

from bisca.engine import Card
from bisca.engine.belote import DECK, BeloteSettings, BeloteState, Phase, PlayCard

from .battery import GameUnderTest, run_battery


def visible_cards(state: Any, seat: int) -> set[Card]:
    """Rules page, "What each seat may see": its own hand, the turned card, played cards."""
    assert isinstance(state, BeloteState)
    played = {p.card for trick in state.tricks for p in trick.plays} | {p.card for p in state.trick}
    return set(state.hands[seat]) | {state.turned_card} | played


def revealed_by(state: Any, action: Any) -> set[Card]:
    return {action.card} if isinstance(action, PlayCard) else set()


def check_invariants(state: Any) -> None:
    assert isinstance(state, BeloteState)
    held = [c for hand in state.hands for c in hand]
    played = [p.card for trick in state.tricks for p in trick.plays] + [p.card for p in state.trick]
    undealt = state._deck[state._next_card :]
    if state.phase in (Phase.BIDDING_ROUND_1, Phase.BIDDING_ROUND_2):
        undealt = [state.turned_card, *undealt]
        assert all(len(hand) == 5 for hand in state.hands)
    everything = held + played + undealt
    if state.phase is not Phase.MATCH_OVER:
        assert sorted(c.index for c in everything) == list(range(32)), "each card exactly once"
    if state.phase is Phase.PLAYING:
        in_trick = {p.seat for p in state.trick}
        for seat, hand in enumerate(state.hands):
            assert len(hand) == 8 - len(state.tricks) - (seat in in_trick)
        assert sum(trick.points for trick in state.tricks) == sum(state.card_points)
    for result in state.deal_results:
        if result.void:
            assert result.scores == (0, 0)
        elif result.contract_made:
            assert result.scores == tuple(
                p + b for p, b in zip(result.card_points, result.belote_points, strict=True)
            )
        else:
            assert result.scores[result.taker % 2] == 0
            all_points = 252 if result.capot else 162
            assert result.scores[1 - result.taker % 2] == all_points + sum(result.belote_points)
    assert tuple(state.match_scores) == tuple(
        sum(r.scores[team] for r in state.deal_results) for team in (0, 1)
    )
    assert len(DECK) == 32


def belote(settings: BeloteSettings) -> GameUnderTest:
    return GameUnderTest(
        name="belote",
        make=lambda seed: BeloteState(settings, seed),
        visible_cards=visible_cards,
        revealed_by=revealed_by,
        check_invariants=check_invariants,
    )


#: The one-deal battery's 2,000 playouts in four parts of their own seeds, so that the suite's
#: workers share them (as one test it was the suite's longest, a minute and more under load).
ONE_DEAL_PARTS = 4
#: The shapes whose playouts take seconds each: out of the fast lane (``make check``), which
#: keeps the duplicate shape.
VOLUME = pytest.mark.volume


@pytest.mark.parametrize(
    ("settings", "playouts", "seed"),
    [
        *(
            pytest.param(
                BeloteSettings(deals=1),
                2000 // ONE_DEAL_PARTS,
                2000 + part,
                marks=VOLUME,
                id=f"one-deal-{part + 1}",
            )
            for part in range(ONE_DEAL_PARTS)
        ),
        pytest.param(
            BeloteSettings(deals=4, first_dealer=3), 100, 100, marks=VOLUME, id="four-deals"
        ),
        pytest.param(BeloteSettings(deals=2, duplicate=True), 100, 100, id="duplicate"),
        pytest.param(
            BeloteSettings(target_score=400, max_deals=8), 60, 60, marks=VOLUME, id="target-score"
        ),
    ],
)
def test_battery(settings: BeloteSettings, playouts: int, seed: int) -> None:
    run_battery(belote(settings), playouts=playouts, seed=seed)
