"""Every engine value of every game survives the trip through protobuf unchanged, and bad
messages from bots are refused with what was wrong."""

import random

import pytest

from bisca import wire
from bisca.engine import GAMES, MalformedActionError, new_match
from bisca.v1 import arena_pb2, belote_pb2


@pytest.mark.parametrize("game", sorted(GAMES))
def test_random_matches_round_trip(game: str) -> None:
    game_codec = wire.codec(game)
    rng = random.Random(4)
    for seed in range(3):
        state = new_match(game, seed=seed)
        while not state.is_over:
            for seat in range(state.num_seats):
                observation = state.observation(seat)
                message = wire.encode_game_observation(game, observation)
                parsed = arena_pb2.GameObservation.FromString(message.SerializeToString())
                assert wire.decode_game_observation(parsed) == (game, observation)
            for action in state.legal_actions():
                message = wire.encode_game_action(game, action)
                parsed = arena_pb2.GameAction.FromString(message.SerializeToString())
                assert wire.decode_game_action(game, parsed) == action
            state.apply(rng.choice(state.legal_actions()))
        for index, (_, event) in enumerate(state.all_events()):
            message = wire.encode_game_event(game, index, event)
            assert wire.decode_game_event(message) == (game, event)
            assert game_codec.decode_event(game_codec.encode_event(event)) == event


@pytest.mark.parametrize("game", sorted(GAMES))
def test_settings_round_trip_and_absent_fields_take_defaults(game: str) -> None:
    spec = GAMES[game]
    defaults = spec.settings({})
    message = wire.encode_game_settings(game, defaults)
    assert wire.decode_game_settings(game, message) == defaults
    assert wire.decode_game_settings(game, arena_pb2.GameSettings()) == defaults
    assert wire.decode_game_settings(game, None) == defaults


def test_belote_settings_out_of_range_are_refused() -> None:
    message = arena_pb2.GameSettings(belote=belote_pb2.Settings(deals=0))
    with pytest.raises(ValueError, match="deals must be"):
        wire.decode_game_settings("belote", message)


def test_malformed_actions_are_refused_with_the_reason() -> None:
    with pytest.raises(MalformedActionError, match="carries no action"):
        wire.decode_game_action("belote", arena_pb2.GameAction())
    with pytest.raises(MalformedActionError, match=r"empty bisca\.v1\.belote\.Action"):
        wire.decode_game_action("belote", arena_pb2.GameAction(belote=belote_pb2.Action()))
    unspecified = belote_pb2.Action(play_card=belote_pb2.PlayCard(card=belote_pb2.Card()))
    with pytest.raises(MalformedActionError, match="is not a belote Suit"):
        wire.decode_game_action("belote", arena_pb2.GameAction(belote=unspecified))
    bad_rank = belote_pb2.Action(
        play_card=belote_pb2.PlayCard(card=belote_pb2.Card(suit=1, rank=77))
    )
    with pytest.raises(MalformedActionError, match="77 is not a belote Rank"):
        wire.decode_game_action("belote", arena_pb2.GameAction(belote=bad_rank))


def test_game_numbers() -> None:
    assert wire.game_name(wire.game_enum("belote")) == "belote"
    with pytest.raises(ValueError):
        wire.game_name(0)
    with pytest.raises(ValueError):
        wire.game_name(99)
