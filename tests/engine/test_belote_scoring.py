"""The worked checks of the Belote rules page, "Scoring a deal", and scoring through play."""

import random

import pytest

from bisca.engine.belote import BeloteSettings, BeloteState, PlayCard, card
from bisca.engine.belote._state import score_deal

TAKERS = 0  # the taking team in these checks
DEFENDERS = 1


@pytest.mark.parametrize(
    ("card_points", "belote_team", "made", "scores"),
    [
        # Taking team 82 card points, defenders 80, no Belote: made; 82 / 80.
        ((82, 80), None, True, (82, 80)),
        # 81 / 81: made (tie).
        ((81, 81), None, True, (81, 81)),
        # Taking team 71 + Belote 20 = 91, defenders 91: made; 91 / 91.
        ((71, 91), TAKERS, True, (91, 91)),
        # Taking team 70, defenders 92 + Belote 20: failed; 0 / 182.
        ((70, 92), DEFENDERS, False, (0, 182)),
        # Taking team 60 + Belote 20, defenders 102: failed; 0 / 182 (162 + the takers' 20).
        ((60, 102), TAKERS, False, (0, 182)),
    ],
)
def test_worked_checks(
    card_points: tuple[int, int], belote_team: int | None, made: bool, scores: tuple[int, int]
) -> None:
    _, _, capot, was_made, got = score_deal(TAKERS, card_points, (4, 4), belote_team)
    assert not capot
    assert was_made is made
    assert got == scores


@pytest.mark.parametrize(("belote_team", "expected"), [(None, (252, 0)), (TAKERS, (272, 0))])
def test_takers_capot(belote_team: int | None, expected: tuple[int, int]) -> None:
    # "Taking team wins all tricks: 252 (+20 if it has Belote) / 0."
    points, _, capot, made, scores = score_deal(TAKERS, (162, 0), (8, 0), belote_team)
    assert capot and made
    assert points == (252, 0)
    assert scores == expected


def test_takers_capot_with_the_defenders_belote() -> None:
    # The worked check's "/ 0" does not cover a Belote of the defenders; by "each team scores
    # its own total" they keep their 20 (docs/rules-decisions.md, "Capot and the defenders'
    # Belote").
    points, belote, capot, made, scores = score_deal(TAKERS, (162, 0), (8, 0), DEFENDERS)
    assert capot and made
    assert points == (252, 0) and belote == (0, 20)
    assert scores == (252, 20)


@pytest.mark.parametrize(
    ("belote_team", "expected"), [(None, (0, 252)), (TAKERS, (0, 272)), (DEFENDERS, (0, 272))]
)
def test_defenders_capot(belote_team: int | None, expected: tuple[int, int]) -> None:
    # "Defenders win all tricks: 0 / 252 (+ any Belote of either team)."
    points, _, capot, made, scores = score_deal(TAKERS, (0, 162), (0, 8), belote_team)
    assert capot and not made
    assert points == (0, 252)
    assert scores == expected


def test_taking_team_one_is_scored_symmetrically() -> None:
    assert score_deal(1, (80, 82), (4, 4), None)[3:] == (True, (80, 82))
    assert score_deal(1, (92, 70), (4, 4), 0)[3:] == (False, (182, 0))


def test_card_points_of_a_played_deal_add_up() -> None:
    rng = random.Random(0)
    scored = 0
    for seed in range(40):
        state = BeloteState(BeloteSettings(deals=1), seed)
        while not state.is_over:
            state.apply(rng.choice(state.legal_actions()))
        result = state.deal_results[0]
        if result.void:
            continue
        scored += 1
        if result.capot:
            assert sorted(result.card_points) == [0, 252]
        else:
            assert sum(result.card_points) == 162
        assert sum(trick.points for trick in state.tricks) == 162
        total = sum(result.card_points) + sum(result.belote_points)
        if result.contract_made:
            assert result.scores == tuple(
                p + b for p, b in zip(result.card_points, result.belote_points, strict=True)
            )
        else:
            assert sum(result.scores) == total
            assert result.scores[(result.taker or 0) % 2] == 0
    assert scored >= 30


def test_belote_and_rebelote_are_announced_when_played_and_score_20() -> None:
    k, q = card("KH"), card("QH")
    hands = [
        [k, q, card("7S")],
        [card("8S"), card("9S"), card("10S")],
        [card("JS"), card("QS"), card("KS")],
        [card("AS"), card("7C"), card("8C")],
    ]
    state = BeloteState.from_position(hands=hands, trump=card("7H").suit, taker=0, leader=0)
    state.apply(PlayCard(q))
    announced = [
        event for event in state.public_events() if type(event).__name__ == "BeloteAnnounced"
    ]
    assert [a.announcement.value for a in announced] == ["belote"]
    for _ in range(3):
        state.apply(state.legal_actions()[0])
    state.apply(PlayCard(k))
    announced = [
        event for event in state.public_events() if type(event).__name__ == "BeloteAnnounced"
    ]
    assert [a.announcement.value for a in announced] == ["belote", "rebelote"]


def test_a_position_counts_the_trump_king_or_queen_already_in_the_trick() -> None:
    # Seat 0 led the K of trump and still holds the Q: it held both, so the K announced
    # Belote and the Q will announce Rebelote and score 20.
    hands = [
        [card("QH"), card("7S")],
        [card("8S"), card("9S")],
        [card("JS"), card("QS")],
        [card("AS"), card("7C")],
    ]
    state = BeloteState.from_position(
        hands=hands, trump=card("7H").suit, taker=0, leader=0, trick=[card("KH")]
    )
    assert [(a.seat, a.announcement.value) for a in state.announcements] == [(0, "belote")]
    for _ in range(3):
        state.apply(state.legal_actions()[0])
    assert state.to_act == 0  # the K of trump won the trick
    state.apply(PlayCard(card("QH")))
    assert [a.announcement.value for a in state.announcements] == ["belote", "rebelote"]


def test_a_position_with_equal_hands_plays_to_the_end_of_the_deal() -> None:
    # The last two tricks of a deal: 2 cards each, trump hearts, seat 0 leads.
    hands = [
        [card("JH"), card("AS")],
        [card("7S"), card("8S")],
        [card("9S"), card("10S")],
        [card("7C"), card("8C")],
    ]
    state = BeloteState.from_position(
        hands=hands, trump=card("7H").suit, taker=0, leader=0, settings=BeloteSettings(deals=1)
    )
    while not state.is_over:
        state.apply(state.legal_actions()[0])
    assert [trick.trick_number for trick in state.tricks] == [6, 7]
    result = state.deal_results[-1]
    # J♥ (20) + the spades of the first trick, then A♠ + 10♠ + 10 for the last trick.
    assert sum(result.card_points) == sum(t.points for t in state.tricks)
    assert state.tricks[-1].points >= 10


def test_an_uneven_position_is_for_analysis_only() -> None:
    state = BeloteState.from_position(
        hands=[[card("JH"), card("AS")], [card("7S")], [], []],
        trump=card("7H").suit,
        taker=0,
        leader=0,
    )
    assert state.observation(0).tricks == ()
    state.apply(PlayCard(card("AS")))
    assert state.observation(1).tricks[0].trick_number == 0
