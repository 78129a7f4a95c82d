"""The compiled serializers write, for every engine value, exactly the bytes protobuf writes for
the message the reflective codec builds of it — and those bytes parse back to that message."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest
from google.protobuf.message import Message

from bisca import wire
from bisca.engine import GAMES, MalformedActionError, MatchState, Observation
from bisca.engine import bestia as bestia_engine
from bisca.server.referee import outgoing
from bisca.v1 import arena_pb2 as pb

#: (game, settings, seed): Belote, and Bestia at every table size.
POSITIONS = [
    ("belote", {"deals": 2}, 1),
    ("belote", {"deals": 2, "duplicate": True}, 2),
    *[("bestia", {"seats": seats, "rounds": 1}, seats) for seats in range(4, 8)],
]


def _assert_same(serialized: bytes, message: Message) -> None:
    assert serialized == message.SerializeToString()
    assert type(message).FromString(serialized) == message


def _positions(game: str, settings: dict[str, object], seed: int) -> Iterator[MatchState]:
    """Every position of a match played by seeded random choices."""
    rng = random.Random(seed)
    state = GAMES[game].new_match(GAMES[game].settings(settings), seed)
    while not state.is_over:
        yield state
        state.apply(rng.choice(state.legal_actions()))
    yield state


@pytest.mark.parametrize(("game", "settings", "seed"), POSITIONS)
def test_every_message_of_random_matches_is_protobufs_own(
    game: str, settings: dict[str, object], seed: int
) -> None:
    codec = wire.codec(game)
    rng = random.Random(seed)
    for state in _positions(game, settings, seed):
        # The seat to act, and another (what a seat sees of the others' hands differs).
        seats = {state.to_act or 0, rng.randrange(state.num_seats)}
        for seat in seats:
            observation = state.observation(seat)
            _assert_same(
                codec.serialize_observation(observation), codec.encode_observation(observation)
            )
        if not state.is_over:
            for action in state.legal_actions():
                _assert_same(codec.serialize_action(action), codec.encode_action(action))
    for _, event in state.all_events():
        _assert_same(codec.serialize_event(event), codec.encode_event(event))


def _plain_int(value: object) -> bool:
    """An int that is not a bool nor an enum member (whose values the engine fixes)."""
    return type(value) is int


def _with_extremes(observation: Observation) -> Iterator[Observation]:
    """The observation with each integer field at values a real match rarely reaches: 0 (an
    optional field set to 0 is written, a plain one is not), multi-byte varints, negatives for
    the signed fields."""
    for field in dataclasses.fields(observation):  # type: ignore[arg-type]
        value = getattr(observation, field.name)
        if isinstance(value, bool):
            yield dataclasses.replace(observation, **{field.name: not value})  # type: ignore[type-var]
        elif _plain_int(value) or (value is None and "int" in str(field.type)):
            for extreme in (0, 127, 128, 300, 2**31 - 1):
                yield dataclasses.replace(observation, **{field.name: extreme})  # type: ignore[type-var]
        elif isinstance(value, tuple) and value and _plain_int(value[0]):
            for extreme in (0, 128, 2**20):
                changed = (extreme, *value[1:])
                yield dataclasses.replace(observation, **{field.name: changed})  # type: ignore[type-var]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_extreme_and_absent_values_are_protobufs_own(game: str) -> None:
    codec = wire.codec(game)
    state = GAMES[game].new_match(GAMES[game].settings({}), 3)
    for _ in range(12):
        state.apply(state.legal_actions()[-1])
    for observation in _with_extremes(state.observation(0)):
        _assert_same(
            codec.serialize_observation(observation), codec.encode_observation(observation)
        )


def test_negative_zigzag_fields_are_protobufs_own() -> None:
    codec = wire.codec("bestia")
    state = GAMES["bestia"].new_match(GAMES["bestia"].settings({"seats": 5}), 8)
    observation = state.observation(2)
    assert isinstance(observation, bestia_engine.BestiaObservation)
    for amount in (-1, -64, -65, -(2**40), 2**40):
        changed = dataclasses.replace(
            observation,
            pot=amount,
            stake=-amount,
            balances=tuple(amount * (seat + 1) for seat in range(5)),
        )
        _assert_same(codec.serialize_observation(changed), codec.encode_observation(changed))


def test_a_value_of_another_game_is_refused() -> None:
    belote_action = GAMES["belote"].new_match(GAMES["belote"].settings({}), 1).legal_actions()[0]
    with pytest.raises(MalformedActionError, match=r"is not a bisca\.v1\.bestia\.Action"):
        wire.codec("bestia").serialize_action(belote_action)  # type: ignore[arg-type]


def test_the_serializers_are_compiled_once_per_type() -> None:
    codec = wire.codec("belote")
    source: str = codec.serialize_observation.source  # type: ignore[attr-defined]
    assert "getattr" not in source and "DESCRIPTOR" not in source
    assert source.index("value.seat") < source.index("value.deal_results")  # field-number order


@pytest.mark.parametrize(
    ("request_id", "match_id", "seat"), [("r1", "m-1", 0), ("", "", 3), ("r" * 200, "é", 6)]
)
def test_a_request_head_is_protobufs_own(request_id: str, match_id: str, seat: int) -> None:
    message = pb.ActionRequest(request_id=request_id, match_id=match_id, seat=seat)
    _assert_same(outgoing.request_head(request_id, match_id, seat), message)
