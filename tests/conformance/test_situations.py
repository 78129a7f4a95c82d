"""The situations ``bisca check-bot`` sends are real engine states in the phase they name."""

from __future__ import annotations

import pytest

from bisca import wire
from bisca.engine import belote, bestia
from bisca.server.conformance import script
from bisca.v1 import arena_pb2 as pb

LABELS = [(game, label) for game, labels in script.PHASES.items() for label in labels]


@pytest.mark.parametrize(("game", "label"), LABELS)
def test_every_phase_is_reached(game: str, label: str) -> None:
    found = script.situation(game, label)
    state = found.state()
    assert state.to_act is not None
    observation = state.observation(state.to_act)
    assert script.phase_name(state).startswith(label.split(",")[0].removeprefix("card "))
    assert state.legal_actions()
    # The referee's bytes, as the bot gets them.
    request = pb.ServerMessage.FromString(
        script.action_request("r1", "m1", game, state, 300)
    ).action_request
    assert request.seat == state.to_act
    assert len(request.legal_actions) == len(state.legal_actions())
    _, decoded = wire.decode_game_observation(request.observation)
    assert decoded == observation


def test_every_bestia_phase_but_the_end_is_checked() -> None:
    labels = {phase.value.replace("_", " ") for phase in bestia.Phase}
    assert labels - set(script.PHASES["bestia"]) == {"match over"}


def test_belote_card_play_leading_and_following() -> None:
    leading = script.situation("belote", "card play, leading").state()
    following = script.situation("belote", "card play, following").state()
    for state, in_progress in ((leading, False), (following, True)):
        assert state.to_act is not None
        observation = state.observation(state.to_act)
        assert observation.phase is belote.Phase.PLAYING
        current = observation.tricks[-1] if observation.tricks else None
        assert (current is not None and current.winner is None) == in_progress


def test_the_rejection_has_choices_to_correct_to() -> None:
    for game in ("belote", "bestia"):
        assert len(script.situation(game, "a choice of cards").state().legal_actions()) >= 3


def test_situations_are_deterministic() -> None:
    script.situation.cache_clear()
    first = script.situation("bestia", "dealer discard")
    script.situation.cache_clear()
    assert script.situation("bestia", "dealer discard") == first
