"""Properties of Belote checked with hypothesis."""

from hypothesis import given, settings
from hypothesis import strategies as st

from bisca.engine.belote import BeloteSettings, BeloteState
from bisca.engine.belote._state import score_deal

choices = st.lists(st.integers(min_value=0, max_value=1_000), max_size=80)


def _play(seed: int, picks: list[int]) -> BeloteState:
    state = BeloteState(BeloteSettings(deals=2), seed)
    for pick in picks:
        if state.is_over:
            break
        legal = state.legal_actions()
        state.apply(legal[pick % len(legal)])
    return state


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**64 - 1), picks=choices)
def test_same_seed_and_actions_reproduce_everything(seed: int, picks: list[int]) -> None:
    first, second = _play(seed, picks), _play(seed, picks)
    assert first.all_events() == second.all_events()
    assert [first.observation(s) for s in range(4)] == [second.observation(s) for s in range(4)]
    assert first.legal_actions() == second.legal_actions()


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), picks=choices, more=choices)
def test_a_copy_plays_on_like_the_original(seed: int, picks: list[int], more: list[int]) -> None:
    state = _play(seed, picks)
    twin = state.copy()
    for pick in more:
        if state.is_over:
            break
        legal = state.legal_actions()
        assert twin.legal_actions() == legal
        state.apply(legal[pick % len(legal)])
        twin.apply(legal[pick % len(legal)])
    assert twin.all_events() == state.all_events()


@given(
    taking=st.integers(0, 1),
    taker_points=st.integers(0, 162),
    belote=st.sampled_from([None, 0, 1]),
)
def test_deal_scores_follow_the_rules(taking: int, taker_points: int, belote: int | None) -> None:
    points = [0, 0]
    points[taking] = taker_points
    points[1 - taking] = 162 - taker_points
    _, belote_points, capot, made, scores = score_deal(taking, points, (4, 4), belote)
    assert not capot
    totals = [points[t] + belote_points[t] for t in (0, 1)]
    assert made == (totals[taking] >= totals[1 - taking])
    if made:
        assert list(scores) == totals
    else:
        assert scores[taking] == 0 and scores[1 - taking] == 162 + sum(belote_points)
