"""Settlement (rules page, step 10): the worked checks, the remainder, and real play."""

import pytest

from bisca.engine.bestia import (
    BestiaSettings,
    BestiaState,
    HandEnd,
    HandEnded,
    HandStarted,
    Phase,
    settle,
)

from .test_bestia_support import ASSIST, OPEN, PASS, STAND_PAT, apply_all, play, stacked_match

# Seats of the worked checks: 5 seats, the opener OP 1, assistant A 2, assistant B 3.
OP, A, B = 1, 2, 3


def _tricks(opener: int, a: int, b: int) -> tuple[int, ...]:
    return (0, opener, a, b, 0)


def test_worked_check_1_opener_makes_it_and_takes_the_bestia() -> None:
    s = settle(50, OP, (A, B), _tricks(2, 2, 0))
    assert s.per_trick == 12
    assert s.shares == (0, 25, 25, 0, 0)
    assert s.bestia == (0, 0, 0, 50, 0)
    assert s.opener_made and s.to_opener == 50 and s.next_pot == 0
    assert s.net == (0, 75, 25, -50, 0)
    antes = 10
    assert [s.net[seat] - antes for seat in range(5)] == [-10, 65, 15, -60, -10]


def test_worked_check_2_remainder_in_risk_order_and_the_opener_in_bestia() -> None:
    s = settle(50, OP, (A, B), _tricks(1, 2, 1))
    assert s.shares == (0, 13, 25, 12, 0)  # 12 a trick; the 2 left go to the opener, then A
    assert s.bestia == (0, 100, 0, 0, 0)
    assert not s.opener_made and s.to_opener == 0
    assert s.next_pot == 100
    assert s.net == (0, 13 - 100, 25, 12, 0)


def test_worked_check_3_everybody_in_bestia_but_one() -> None:
    s = settle(40, OP, (A, B), _tricks(0, 4, 0))
    assert s.shares == (0, 0, 40, 0, 0)
    assert s.bestia == (0, 80, 0, 40, 0)
    assert s.next_pot == 120
    assert s.net == (0, -80, 40, -40, 0)


def test_remainder_goes_round_again_and_skips_players_without_a_trick() -> None:
    # P = 7: 1 a trick, 3 left.  Risk order: opener 4, then 0, then 2 (the order they assisted).
    s = settle(7, 4, (0, 2), (1, 0, 3, 0, 0))
    # The opener won nothing: the 3 chips go to 0, 2, 0.
    assert s.shares == (1 + 2, 0, 3 + 1, 0, 0)
    assert sum(s.shares) == 7
    # Only one winner takes every remainder chip.
    s = settle(11, 0, (1,), (4, 0, 0, 0))
    assert s.shares == (11, 0, 0, 0)
    assert s.bestia == (0, 11, 0, 0) and s.net == (22, -11, 0, 0)


def test_settle_refuses_impossible_hands() -> None:
    with pytest.raises(ValueError, match="all 4 tricks"):
        settle(40, 0, (1,), (2, 1, 0, 0))
    with pytest.raises(ValueError, match="did not play"):
        settle(40, 0, (1,), (3, 1, 1, 0))
    with pytest.raises(ValueError, match="distinct seats"):
        settle(40, 0, (0,), (4, 0, 0, 0))
    with pytest.raises(ValueError, match="at least one assistant"):
        settle(40, 0, (), (4, 0, 0, 0))
    with pytest.raises(ValueError, match="negative"):
        settle(-1, 0, (1,), (4, 0, 0, 0))


def _worked_check_match(hands: dict[int, str], rounds: int = 2) -> BestiaState:
    """Seat 1 opens, 2 and 3 assist, 4 and 0 pass; trump coins; everybody stands pat."""
    state = stacked_match(BestiaSettings(seats=5, stake=10, rounds=rounds), hands, turned="2D")
    apply_all(state, [PASS, PASS])  # no buio (seat 1), no rubata (dealer 0)
    apply_all(state, [OPEN, ASSIST, ASSIST, PASS, PASS])
    apply_all(state, [STAND_PAT] * 3)
    assert state.phase is Phase.PLAYING and state.to_act == OP
    assert state.pot_at_play == 50
    return state


def test_worked_check_1_through_real_play() -> None:
    state = _worked_check_match({OP: "AD KD 2C 3C", A: "AC KC 4S 5S", B: "2S 3S 4B 5B"})
    # The opener draws both tricks with its top trumps; A must follow cups with the ace; B has
    # neither cups nor trumps, so plays anything.
    apply_all(state, [play("AD"), play("4S"), play("2S")])
    apply_all(state, [play("KD"), play("5S"), play("3S")])
    apply_all(state, [play("2C"), play("AC"), play("4B")])
    apply_all(state, [play("KC"), play("5B"), play("3C")])
    ended = [e for e in state.public_events() if isinstance(e, HandEnded)]
    result = ended[0].result
    assert result.end is HandEnd.PLAYED and result.settlement is not None
    assert result.settlement.tricks == (0, 2, 2, 0, 0)
    assert result.balances == (-10, 65, 15, -60, -10)
    assert result.pot == 0
    # The next hand: the deal passed to seat 1 and, the pot being empty, every seat antes again.
    assert state.hand_number == 1 and state.dealer == 1
    assert state.pot == 50 and state.balances == [-20, 55, 5, -70, -20]


def test_worked_check_2_through_real_play_the_bestia_is_the_next_pot() -> None:
    state = _worked_check_match({OP: "AD 2C 3C 4C", A: "KD QD AS 3B", B: "2S AB 6S 7S"})
    apply_all(state, [play("AD"), play("KD"), play("6S")])  # A follows trump; OP wins
    apply_all(state, [play("2C"), play("QD"), play("7S")])  # A void in cups: trumps and wins
    apply_all(state, [play("AS"), play("2S"), play("3C")])  # OP void in spades, no trump left
    apply_all(state, [play("3B"), play("AB"), play("4C")])  # B wins the last
    result = next(e for e in state.public_events() if isinstance(e, HandEnded)).result
    assert result.settlement is not None
    assert result.settlement.shares == (0, 13, 25, 12, 0)
    assert result.balances == (-10, 13 - 100 - 10, 25 - 10, 12 - 10, -10)
    assert result.pot == 100
    # No ante is paid into a pot that is not empty, and no blind raise on it.
    started = [e for e in state.public_events() if isinstance(e, HandStarted)]
    assert started[-1] == HandStarted(1, 1, False, 1)
    assert state.pot == 100 and state.antes == []
    assert state.phase is Phase.RUBATA and state.to_act == 1
    assert sum(state.balances) + state.pot == 0
