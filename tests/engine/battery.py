"""The generic battery every game of the engine must pass.

Random playouts, with the interface's invariants checked after every action:

* a seat to act always has a non-empty legal list, each legal action is accepted, the default
  action is legal, and an action that is not legal is refused without changing the state;
* no observation contains a card the seat may not see, and no event reaches a seat that carries
  a card the seat may not have seen (the game's own oracle decides, from the true state);
* the game's own invariants (each card exactly once, chip conservation, ...);
* a copy continues independently of its original;
* replaying the same settings, seed and actions reproduces every legal list, observation, event
  and the result.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pytest

from bisca.engine import Card, GameState, IllegalActionError, MalformedActionError, Outcome

State = GameState[Any, Any, Any]


@dataclass(frozen=True)
class GameUnderTest:
    name: str
    #: A fresh match for this seed.
    make: Callable[[int], State]
    #: The cards ``seat`` may see now, computed from the true state (independent of
    #: ``observation``): its own cards when it may look at them, public cards, ...
    visible_cards: Callable[[State, int], set[Card]]
    #: The cards an action (about to be applied to this state) shows to every seat.
    revealed_by: Callable[[State, Any], set[Card]]
    #: Game-specific invariants; raise AssertionError when one fails.
    check_invariants: Callable[[State], None]


_ATOMS = (str, int, float, Enum, type(None))


class _Walk(Enum):
    """What the walk does with a value of a type: keep it, skip it, or open it."""

    CARD = "card"
    ATOM = "atom"
    ITEMS = "items"
    MAPPING = "mapping"


#: How the walk treats each type it met: a :class:`_Walk`, or the field names of a dataclass.
#: One dict lookup per value: a chain of ``isinstance`` calls per value was most of the
#: batteries' time.
_HOW: dict[type, _Walk | tuple[str, ...]] = {}


def _how_to_walk(kind: type) -> _Walk | tuple[str, ...]:
    if issubclass(kind, Card):
        return _Walk.CARD
    if issubclass(kind, _ATOMS):
        return _Walk.ATOM
    if issubclass(kind, list | tuple | set | frozenset):
        return _Walk.ITEMS
    if issubclass(kind, dict):
        return _Walk.MAPPING
    if not dataclasses.is_dataclass(kind):
        raise AssertionError(f"unexpected value of type {kind.__name__} in a game value")
    return tuple(f.name for f in dataclasses.fields(kind))


def cards_in(value: Any) -> list[Card]:
    """Every card mentioned anywhere inside a value (dataclasses, tuples, lists, dicts).

    A walk with a stack of its own, not recursive generators: the batteries call it on every
    observation and event of thousands of matches, and a chain of ``yield from`` per level was
    two thirds of their time."""
    found: list[Card] = []
    pending = [value]
    how_of = _HOW
    card, atom, items, mapping = _Walk.CARD, _Walk.ATOM, _Walk.ITEMS, _Walk.MAPPING
    while pending:
        value = pending.pop()
        kind = type(value)
        how = how_of.get(kind)
        if how is None:
            how = how_of[kind] = _how_to_walk(kind)
        if how is card:
            found.append(value)
        elif how is atom:
            continue
        elif how is items:
            pending.extend(value)
        elif how is mapping:
            pending.extend(value.keys())
            pending.extend(value.values())
        else:
            assert isinstance(how, tuple)
            for name in how:
                pending.append(getattr(value, name))
    return found


def play_random(game: GameUnderTest, seed: int, rng: random.Random) -> list[Any]:
    """One checked random playout; returns the actions played."""
    state = game.make(seed)
    seats = state.num_seats
    seen: list[set[Card]] = [game.visible_cards(state, seat) for seat in range(seats)]
    _check_views(game, state, seen, 0)
    game.check_invariants(state)
    actions: list[Any] = []
    branch_at = rng.randrange(1, 60)
    while not state.is_over:
        seat = state.to_act
        assert seat is not None and 0 <= seat < seats
        legal = state.legal_actions()
        assert legal, f"seat {seat} must act but has no legal action"
        assert len(set(legal)) == len(legal), "duplicate legal actions"
        assert state.default_action() in legal
        assert state.outcome is None
        for action in legal:
            assert state.why_illegal(action) is None, action
        _check_refusals(state, rng)
        action = rng.choice(legal)
        if len(actions) == branch_at:
            _check_copy(state, rng)
        for viewer in range(seats):
            seen[viewer] |= game.visible_cards(state, viewer)
        revealed = game.revealed_by(state, action)
        events_before = state.event_count
        state.apply(action)
        actions.append(action)
        for viewer in range(seats):
            seen[viewer] |= revealed | game.visible_cards(state, viewer)
        _check_views(game, state, seen, events_before)
        game.check_invariants(state)
    outcome = state.outcome
    assert isinstance(outcome, Outcome)
    assert len(outcome.scores) == len(outcome.ranks) == seats
    assert outcome.ranks == Outcome.from_scores(outcome.scores).ranks
    assert state.legal_actions() == []
    with pytest.raises(IllegalActionError):
        state.apply(actions[-1])
    return actions


def _check_views(game: GameUnderTest, state: State, seen: list[set[Card]], since: int) -> None:
    for seat in range(state.num_seats):
        allowed = game.visible_cards(state, seat)
        leaked = set(cards_in(state.observation(seat))) - allowed
        assert not leaked, f"seat {seat}'s observation shows {sorted(map(str, leaked))}"
        for event in state.events_for(seat, since):
            leaked = set(cards_in(event)) - seen[seat]
            assert not leaked, f"seat {seat} was sent {event!r} showing {sorted(map(str, leaked))}"
    everyone = (1 << state.num_seats) - 1
    public = [event for mask, event in state.all_events(since) if mask == everyone]
    assert state.public_events(since) == public


def _check_refusals(state: State, rng: random.Random) -> None:
    """Malformed and illegal actions are refused and leave the state as it was."""
    before = (state.event_count, state.to_act, list(state.legal_actions()))
    with pytest.raises(MalformedActionError):
        state.apply(object())
    foreign = _an_illegal_action(state, rng)
    if foreign is not None:
        assert state.why_illegal(foreign), f"{foreign!r} is illegal but has no reason"
        with pytest.raises(IllegalActionError) as refused:
            state.apply(foreign)
        assert str(refused.value)
    assert (state.event_count, state.to_act, state.legal_actions()) == before


def _an_illegal_action(state: State, rng: random.Random) -> Any:
    """An action of this game that is not legal now, found by looking ahead in a copy."""
    probe = state.copy()
    legal = set(probe.legal_actions())
    for _ in range(8):
        if probe.is_over:
            return None
        candidates = [action for action in probe.legal_actions() if action not in legal]
        if candidates:
            return rng.choice(candidates)
        probe.apply(rng.choice(probe.legal_actions()))
    return None


def _check_copy(state: State, rng: random.Random) -> None:
    """Playing on a copy leaves the original untouched, and vice versa."""
    snapshot = _fingerprint(state)
    branch = state.copy()
    assert _fingerprint(branch) == snapshot
    for _ in range(20):
        if branch.is_over:
            break
        branch.apply(rng.choice(branch.legal_actions()))
    assert _fingerprint(state) == snapshot


def _fingerprint(state: State) -> tuple[Any, ...]:
    return (
        state.to_act,
        tuple(state.legal_actions()),
        tuple(state.all_events()),
        tuple(state.observation(seat) for seat in range(state.num_seats)),
    )


def replay_matches(game: GameUnderTest, seed: int, actions: list[Any]) -> None:
    """Two replays of the same seed and actions agree on everything, step by step."""
    first, second = game.make(seed), game.make(seed)
    for action in actions:
        assert first.legal_actions() == second.legal_actions()
        assert _fingerprint(first) == _fingerprint(second)
        first.apply(action)
        second.apply(action)
    assert first.is_over and second.is_over
    assert first.outcome == second.outcome
    assert first.all_events() == second.all_events()


def run_battery(game: GameUnderTest, playouts: int, seed: int) -> None:
    rng = random.Random(seed)
    for playout in range(playouts):
        match_seed = rng.randrange(2**63)
        actions = play_random(game, match_seed, rng)
        if playout % 4 == 0:
            replay_matches(game, match_seed, actions)
