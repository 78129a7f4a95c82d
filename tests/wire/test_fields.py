"""Messages put together from serialized parts (``bisca.wire``'s fields, the referee's
``_outgoing``) are byte for byte what protobuf writes, and parse to the same messages."""

from __future__ import annotations

import pytest

from bisca import wire
from bisca.engine import GAMES
from bisca.server.referee import outgoing
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2


@pytest.mark.parametrize(
    "value", [0, 1, 127, 128, 300, 4095, 4096, 5000, 16383, 16384, 2**21, 2**32 + 5, 2**63 - 1]
)
def test_varint_fields_are_protobufs(value: int) -> None:
    number = wire.field_number(pb.MatchEnded, "seed")  # a uint64
    assert wire.varint_field(number, value) == pb.MatchEnded(seed=value).SerializeToString()


def test_a_negative_varint_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot hold -1"):
        wire.varint(-1)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_whole_match_of_requests_events_and_log_entries(game: str) -> None:
    """Every request, event batch, log step and end of a real match: the bytes built from parts
    are those of the same message built and serialized by protobuf."""
    state = GAMES[game].new_match(GAMES[game].settings({}), 4)
    encoder = outgoing.GameEncoder(game)
    delivered = 0
    for step in range(10_000):
        events = state.all_events(delivered)
        encoded = [
            (delivered + i, audience, encoder.event(delivered + i, event))
            for i, (audience, event) in enumerate(events)
        ]
        messages = [
            wire.encode_game_event(game, delivered + i, event)
            for i, (_, event) in enumerate(events)
        ]
        assert [data for _, _, data in encoded] == [m.SerializeToString() for m in messages]
        batch = log_pb2.LogEvents(
            after_step=step,
            events=[
                log_pb2.LoggedEvent(index=index, audience=audience, event=message)
                for (index, audience, _), message in zip(encoded, messages, strict=True)
            ],
        )
        assert outgoing.log_events(step, encoded) == batch.SerializeToString()
        assert (
            outgoing.event_batch("m", 1, [data for _, _, data in encoded])
            == pb.ServerMessage(
                events=pb.EventBatch(match_id="m", seat=1, events=messages)
            ).SerializeToString()
        )
        delivered += len(events)
        if state.is_over:
            ended = pb.MatchEnded(match_id="m", seat=2, seed=9)
            built = outgoing.match_ended(ended, [data for _, _, data in encoded])
            ended.events.extend(messages)
            assert pb.ServerMessage.FromString(built) == pb.ServerMessage(match_ended=ended)
            break
        seat = state.to_act
        assert seat is not None
        observation, legal = state.observation(seat), state.legal_actions()
        question = encoder.question(observation, legal)
        head = outgoing.request_head("r1", "m", seat)
        built = outgoing.action_request(head, question, 900, 0, 2, [])
        expected = pb.ActionRequest(
            request_id="r1",
            match_id="m",
            seat=seat,
            observation=wire.encode_game_observation(game, observation),
            legal_actions=[wire.encode_game_action(game, a) for a in legal],
            clock=pb.ClockState(move_ms=900, bank_ms=0),
            attempt=2,
        )
        assert pb.ServerMessage.FromString(built) == pb.ServerMessage(action_request=expected)
        action = legal[step % len(legal)]
        logged = log_pb2.LogEntry.FromString(
            outgoing.log_step(
                log_pb2.LogStep(step=step, seat=seat), question, encoder.action(action)
            )
        )
        assert logged.step.observation == expected.observation
        assert list(logged.step.legal_actions) == list(expected.legal_actions)
        assert logged.step.action == wire.encode_game_action(game, action)
        state.apply(action)
    assert state.is_over
