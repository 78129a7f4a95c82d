"""Bestia's settings, deal, determinism, actions, refusals and the shape of its values."""

from __future__ import annotations

import dataclasses
import random
import types
from enum import Enum
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest

from bisca.engine import (
    GAMES,
    Card,
    DealRng,
    IllegalActionError,
    InvalidSettingsError,
    MalformedActionError,
    new_match,
)
from bisca.engine.bestia import (
    DECK,
    BestiaAction,
    BestiaCard,
    BestiaEvent,
    BestiaObservation,
    BestiaSettings,
    BestiaState,
    Exchange,
    HandDealt,
    Phase,
    PlayCard,
    Rank,
    Suit,
    TrumpTurned,
    card,
)

from .test_bestia_support import (
    ASSIST,
    CALL,
    FOLD,
    OPEN,
    PASS,
    RAISE,
    STAND_PAT,
    STEAL,
    apply_all,
    cards,
    stacked_deck,
)

# ---- cards and settings ---------------------------------------------------------------------


def test_forty_cards_ace_high_then_king_queen_jack_seven_down_to_two() -> None:
    assert len(DECK) == 40 and len(set(DECK)) == 40
    assert [c.label for c in DECK[:10]] == [f"{rank}D" for rank in "234567JQKA"]
    assert {c.suit for c in DECK} == set(Suit)
    assert card("ab") is BestiaCard.from_index(39) and card("AB").rank is Rank.ACE
    assert Rank.ACE > Rank.KING > Rank.QUEEN > Rank.JACK > Rank.SEVEN > Rank.TWO


def test_default_settings_are_the_rules_page_defaults() -> None:
    settings = BestiaSettings()
    assert (settings.seats, settings.stake, settings.ante_mode, settings.rounds) == (
        5,
        10,
        "all",
        2,
    )
    assert settings.blind_raises and settings.giro_max_hands == 10 and settings.first_dealer == 0


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"seats": 3}, "seats must be 4..7, got 3"),
        ({"seats": 8}, "seats must be 4..7, got 8"),
        ({"seats": True}, "seats must be an int"),
        ({"stake": 0}, "stake must be 1..1000000"),
        ({"ante_mode": "everyone"}, "ante_mode must be 'all' or 'dealer'"),
        ({"rounds": 0}, "rounds must be 1..100"),
        ({"blind_raises": 1}, "blind_raises must be a bool"),
        ({"giro_max_hands": 0}, "giro_max_hands must be 1..1000"),
        ({"seats": 4, "first_dealer": 4}, "first_dealer must be 0..3, got 4"),
        ({"first_dealer": -1}, "first_dealer must be 0..4"),
    ],
)
def test_invalid_settings_are_refused_with_the_setting_named(
    values: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidSettingsError, match=message.replace(".", r"\.")):
        BestiaSettings(**values)


def test_the_registry_starts_bestia_matches_from_plain_settings() -> None:
    spec = GAMES["bestia"]
    settings = spec.settings({"seats": 7, "ante_mode": "dealer"})
    assert spec.seats(settings) == 7
    state = new_match("bestia", {"seats": 6, "stake": 5}, seed=3)
    assert isinstance(state, BestiaState) and state.num_seats == 6 and state.pot == 30
    with pytest.raises(InvalidSettingsError, match="unknown setting"):
        spec.settings({"players": 5})
    with pytest.raises(InvalidSettingsError, match="stake must be int"):
        spec.settings({"stake": "10"})


# ---- the deal ---------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [4, 5, 6, 7])
def test_deal_two_then_the_trump_then_two_from_the_seat_after_the_dealer(seats: int) -> None:
    """The deck is the hand's DealRng Fisher-Yates shuffle of the deck, dealt from its end."""
    dealer = seats - 2
    settings = BestiaSettings(seats=seats, first_dealer=dealer)
    seed = 99
    deck = list(DECK)
    DealRng.for_deal(seed, 0).shuffle(deck)
    order = deck[::-1]  # first card dealt first
    state = BestiaState(settings, seed)
    for i in range(seats):
        seat = (dealer + 1 + i) % seats
        first_two = order[2 * i : 2 * i + 2]
        last_two = order[2 * seats + 1 + 2 * i : 2 * seats + 3 + 2 * i]
        assert set(state.hands[seat]) == {*first_two, *last_two}
    assert state.turned == [order[2 * seats]]
    assert state.trump is order[2 * seats].suit
    assert set(state.stock) == set(order[4 * seats + 1 :])
    assert TrumpTurned(order[2 * seats], 1) in state.public_events()
    # The trump changes take the next cards of the same shuffle.
    state.apply(PASS)  # no buio
    state.apply(PASS)  # no rubata
    apply_all(state, [PASS] * seats)
    assert state.turned == [order[2 * seats], order[4 * seats + 1]]


def test_stacked_decks_are_validated() -> None:
    with pytest.raises(ValueError, match="exactly once"):
        BestiaState.stacked(None, [list(DECK[:39])])
    with pytest.raises(ValueError, match="exactly once"):
        BestiaState.stacked(None, [[DECK[0], *DECK[:39]]])
    with pytest.raises(ValueError, match="Bestia cards only"):
        BestiaState.stacked(None, [[*DECK[:39], "AB"]])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="non-negative"):
        BestiaState(None, seed=-1)


def test_stacked_decks_apply_to_their_hands_only() -> None:
    settings = BestiaSettings(seats=4)
    first = stacked_deck(4, 0, {1: "AD KD QD JD"}, turned="7S")
    second = stacked_deck(4, 1, {2: "AB KB QB JB"}, turned="7C")
    state = BestiaState.stacked(settings, [first, second], seed=5)
    assert state.hands[1] == cards("JD QD KD AD") and state.turned == cards("7S")
    apply_all(state, [RAISE, FOLD, FOLD, FOLD])  # a lone survivor ends hand 0
    assert state.hand_number == 1
    assert state.hands[2] == cards("JB QB KB AB") and state.turned == cards("7C")
    apply_all(state, [RAISE, FOLD, FOLD, FOLD])
    plain = BestiaState(settings, seed=5)
    apply_all(plain, [RAISE, FOLD, FOLD, FOLD, RAISE, FOLD, FOLD, FOLD])
    assert state.hands == plain.hands  # hand 2 is the seed's own shuffle


# ---- determinism, copies --------------------------------------------------------------------


def _random_match(seed: int, settings: BestiaSettings) -> tuple[BestiaState, list[BestiaAction]]:
    state = BestiaState(settings, seed)
    rng = random.Random(seed)
    actions = []
    while not state.is_over:
        action = rng.choice(state.legal_actions())
        actions.append(action)
        state.apply(action)
    return state, actions


@pytest.mark.parametrize("seats", [5, 7])
def test_same_seed_and_actions_replay_every_event(seats: int) -> None:
    settings = BestiaSettings(seats=seats, rounds=1, giro_max_hands=4)
    first, actions = _random_match(21, settings)
    second = BestiaState(settings, 21)
    apply_all(second, actions)
    assert second.all_events() == first.all_events()
    assert second.outcome == first.outcome
    assert [second.observation(s) for s in range(seats)] == [
        first.observation(s) for s in range(seats)
    ]
    assert sum(first.balances) == 0 and first.pot == 0


def test_a_copy_continues_on_its_own() -> None:
    state = BestiaState(BestiaSettings(seats=6), seed=22)
    rng = random.Random(0)
    for _ in range(60):
        state.apply(rng.choice(state.legal_actions()))
    twin = state.copy()
    events = state.all_events()
    observations = [state.observation(seat) for seat in range(6)]
    for _ in range(80):
        if twin.is_over:
            break
        twin.apply(rng.choice(twin.legal_actions()))
    assert state.all_events() == events
    assert [state.observation(seat) for seat in range(6)] == observations


# ---- actions and refusals ---------------------------------------------------------------


def test_exchange_discards_are_kept_in_deck_order() -> None:
    assert Exchange((card("AB"), card("2D"))) == Exchange((card("2D"), card("AB")))
    assert Exchange((card("AB"), card("2D"))).discards == (card("2D"), card("AB"))
    with pytest.raises(MalformedActionError):
        Exchange(("AB",))  # type: ignore[arg-type]


def test_default_actions_are_the_cautious_ones() -> None:
    state = BestiaState(BestiaSettings(seats=5), seed=23)
    assert state.default_action() == PASS  # no buio
    state.apply(RAISE)
    assert state.default_action() == FOLD
    apply_all(state, [CALL, CALL, CALL, CALL])
    assert state.default_action() == PASS  # no controbuio
    state.apply(PASS)
    assert state.phase is Phase.RUBATA and state.default_action() == PASS  # no steal
    state.apply(PASS)
    assert state.default_action() == PASS  # no open
    state.apply(OPEN)
    assert state.default_action() == PASS  # no assist
    apply_all(state, [ASSIST, PASS, PASS, PASS])
    assert state.default_action() == STAND_PAT
    apply_all(state, [STAND_PAT, STAND_PAT])
    seat = state.to_act
    assert seat is not None
    assert state.default_action() == PlayCard(min(state.hands[seat], key=lambda c: c.index))
    _, actions = _random_match(1, BestiaSettings(seats=4, rounds=1, giro_max_hands=1))
    finished = BestiaState(BestiaSettings(seats=4, rounds=1, giro_max_hands=1), 1)
    apply_all(finished, actions)
    with pytest.raises(IllegalActionError, match="over"):
        finished.default_action()


def test_refusals_name_the_rule() -> None:
    state = BestiaState(BestiaSettings(seats=5), seed=24)
    with pytest.raises(MalformedActionError, match="not a bestia action"):
        state.apply("raise")  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError, match="steals") as refused:
        state.apply(STEAL)
    assert "seat 1 decides blind whether to raise a buio" in refused.value.reason
    with pytest.raises(IllegalActionError, match="answers a buio"):
        state.apply(CALL)
    state.apply(RAISE)
    with pytest.raises(IllegalActionError, match="nothing to decline"):
        state.apply(PASS)
    apply_all(state, [CALL, CALL, CALL, CALL, PASS, PASS])
    assert state.phase is Phase.OPENING
    with pytest.raises(IllegalActionError, match="nobody has opened yet"):
        state.apply(ASSIST)
    with pytest.raises(IllegalActionError, match="buio is raised only"):
        state.apply(RAISE)
    state.apply(OPEN)
    with pytest.raises(IllegalActionError, match="seat 1 has already opened"):
        state.apply(OPEN)
    apply_all(state, [ASSIST, PASS, PASS, PASS])
    seat = state.to_act
    assert seat == 1 and state.phase is Phase.EXCHANGE
    foreign = next(c for c in DECK if c not in state.hands[1])
    with pytest.raises(IllegalActionError, match=f"does not hold {foreign}"):
        state.apply(Exchange((foreign,)))
    with pytest.raises(IllegalActionError, match="at most 4"):
        state.apply(Exchange(tuple(DECK[:5])))
    with pytest.raises(IllegalActionError, match="only once"):
        state.apply(Exchange((state.hands[1][0], state.hands[1][0])))
    with pytest.raises(IllegalActionError, match="accomodo"):
        state.apply(PlayCard(state.hands[1][0]))
    apply_all(state, [STAND_PAT, STAND_PAT])
    with pytest.raises(IllegalActionError, match=f"does not hold {foreign}"):
        state.apply(PlayCard(foreign))
    with pytest.raises(IllegalActionError, match="before card play"):
        state.apply(Exchange(()))


# ---- what a seat sees -------------------------------------------------------------------


def test_hidden_events_reach_no_seat_and_private_ones_only_their_seat() -> None:
    state = BestiaState(BestiaSettings(seats=5), seed=25)
    audiences = {type(event).__name__: mask for mask, event in state.all_events()}
    assert audiences["HandDealt"] == 0
    deal = next(e for _, e in state.all_events() if isinstance(e, HandDealt))
    assert len(deal.cards) == 20 and set(deal.cards[4:8]) == set(state.hands[1])
    apply_all(state, [PASS, PASS])  # no buio, no rubata: everyone looks
    for mask, event in state.all_events():
        if type(event).__name__ == "HandLooked":
            assert mask == 1 << event.seat  # type: ignore[union-attr]


def _walk_types(annotation: Any, seen: set[Any]) -> None:
    """Fails on a type without a flat protobuf mapping (see ``server/codec.py``)."""
    arms = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else None
    if arms is not None:
        present = [arm for arm in arms if arm is not type(None)]
        assert len(present) == 1, f"no protobuf mapping for {annotation}"
        _walk_types(present[0], seen)
    elif get_origin(annotation) is tuple:
        item, ellipsis = get_args(annotation)
        assert ellipsis is Ellipsis and get_origin(item) is not tuple, annotation
        _walk_types(item, seen)
    elif dataclasses.is_dataclass(annotation):
        if annotation not in seen:
            seen.add(annotation)
            for hint in get_type_hints(annotation).values():
                _walk_types(hint, seen)
    else:
        assert annotation in (int, bool, str) or (
            isinstance(annotation, type) and issubclass(annotation, Enum | Card)
        ), annotation


def test_every_value_maps_onto_flat_protobuf_messages() -> None:
    seen: set[Any] = set()
    for union in (BestiaAction, BestiaEvent):
        for arm in get_args(union):
            _walk_types(arm, seen)
    _walk_types(BestiaObservation, seen)
    assert len(seen) > 25
    for kind in seen:
        params = kind.__dataclass_params__
        assert params.frozen and hasattr(kind, "__slots__"), kind
