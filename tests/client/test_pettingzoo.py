"""The PettingZoo AEC environment over the engine: PettingZoo's own API and seed tests, masks
that are exactly the legal actions, and the arena's deals and results."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from pettingzoo.test import api_test, seed_test

from bisca.client.local import play_match
from bisca.client.local.pettingzoo import ACTIONS, BiscaEnv, action_index

GAMES = [("belote", {"deals": 1}), ("bestia", {"seats": 4, "rounds": 1})]


@pytest.mark.parametrize(("game", "settings"), GAMES)
def test_pettingzoo_s_own_api_and_seed_tests_pass(game: str, settings: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        # Its warnings that a dict observation (vector + action mask) is not a Box: the shape
        # PettingZoo's own classic games use.
        warnings.simplefilter("ignore", UserWarning)
        api_test(BiscaEnv(game, settings), num_cycles=200)
        seed_test(lambda: BiscaEnv(game, settings), num_cycles=50)


def first_legal(observation: dict[str, Any]) -> int:
    return int(observation["action_mask"].nonzero()[0][0])


@pytest.mark.parametrize(("game", "settings"), GAMES)
def test_masks_are_the_legal_actions_and_the_match_is_the_arena_s(
    game: str, settings: dict[str, Any]
) -> None:
    env = BiscaEnv(game, settings)
    env.reset(seed=9)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        state = env.state_of_match
        hand = env.engine_observation(agent).hand
        legal = {action_index(game, a, hand) for a in state.legal_actions()}
        assert set(observation["action_mask"].nonzero()[0]) == legal
        assert all(0 <= index < ACTIONS[game] for index in legal)
        for other in env.possible_agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        env.step(first_legal(observation))
    # The same seed and the same choices in the local runner: the same result.
    firsts = [lambda request: request.legal_actions[0]] * len(totals)
    result = play_match(game, firsts, settings=settings, seed=9)
    scores = result.scores
    if game == "belote":
        assert totals["seat_0"] == scores[0] - scores[1] == -totals["seat_1"]
    else:
        assert [totals[a] for a in env.possible_agents] == list(scores)


def test_an_illegal_index_is_refused_naming_the_legal_ones() -> None:
    env = BiscaEnv("belote", {"deals": 1})
    env.reset(seed=1)
    with pytest.raises(ValueError, match=r"action 36 is not legal for seat_\d now \(legal: \["):
        env.step(36)
    with pytest.raises(ValueError, match="unknown game"):
        BiscaEnv("poker")
