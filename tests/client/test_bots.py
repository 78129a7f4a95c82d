"""Every sample bot of every game: registered, always legal, deterministic where it should be,
and the greedy bots play better than random ones."""

from __future__ import annotations

import random
import statistics
from typing import Any

import pytest

from bisca.client import Bot
from bisca.client.bots import BOTS, by_game, make_bot
from bisca.engine import GAMES, new_match

from .support import State, request_for

BOT_NAMES = [(game, name) for game in sorted(BOTS) for name in sorted(BOTS[game])]
#: The searching bot costs milliseconds a decision: test_pimc.py plays it at a low strength.
CHEAP_BOT_NAMES = [(game, name) for game, name in BOT_NAMES if name != "pimc"]


def play(game: str, seed: int, bots: dict[int, Bot], default: Bot, check: bool = True) -> State:
    """A whole match of ``game``; seat ``s`` is played by ``bots.get(s, default)``."""
    state = new_match(game, seed=seed)
    while not state.is_over:
        request = request_for(state, request_id=str(state.event_count))
        action = bots.get(request.seat, default)(request)
        if check:
            assert action in request.legal_actions, (game, request.observation, action)
        state.apply(action)
    return state


def test_every_game_has_a_random_and_a_greedy_bot() -> None:
    assert set(BOTS) == set(GAMES)
    for bots in BOTS.values():
        assert {"random", "greedy"} <= set(bots)


def test_unknown_games_and_bots_are_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"known games: belote, bestia"):
        make_bot("poker", "random")
    known = r"no bot 'clever' for belote; known: greedy, pimc, random"
    with pytest.raises(ValueError, match=known):
        make_bot("belote", "clever")


@pytest.mark.parametrize(("game", "name"), CHEAP_BOT_NAMES)
def test_every_bot_answers_a_legal_action_in_every_state(game: str, name: str) -> None:
    # The bot under test plays against random bots, so it meets states it would not steer into.
    for seed in range(4):
        bot = make_bot(game, name, seed)
        seats = {seat: bot for seat in range(0, 8, 2)}
        play(game, seed, seats, make_bot(game, "random", seed + 100))
        play(game, seed, {}, bot)


@pytest.mark.parametrize("game", sorted(BOTS))
def test_greedy_is_a_pure_function_of_the_request(game: str) -> None:
    rng = random.Random(7)
    state = new_match(game, seed=3)
    greedy = make_bot(game, "greedy")
    while not state.is_over:
        request = request_for(state)
        first = greedy(request)
        assert greedy(request) == first
        assert make_bot(game, "greedy", 99)(request) == first
        state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("game", sorted(BOTS))
def test_a_seeded_random_bot_is_reproducible(game: str) -> None:
    def actions(seed: int) -> list[Any]:
        chosen: list[Any] = []
        bot = make_bot(game, "random", seed)

        def recording(request: Any) -> Any:
            chosen.append(bot(request))
            return chosen[-1]

        play(game, 5, {}, recording)
        return chosen

    assert actions(1) == actions(1)
    assert actions(1) != actions(2)


def test_greedy_belote_beats_random_players() -> None:
    wins = 0
    for seed in range(20):
        greedy = make_bot("belote", "greedy")
        state = play("belote", seed, {0: greedy, 2: greedy}, make_bot("belote", "random", seed))
        outcome = state.outcome
        assert outcome is not None
        wins += outcome.scores[0] > outcome.scores[1]
    assert wins >= 15


def test_greedy_bestia_wins_chips_from_random_players() -> None:
    nets = []
    for seed in range(20):
        greedy = make_bot("bestia", "greedy")
        state = play("bestia", seed, {0: greedy}, make_bot("bestia", "random", seed))
        outcome = state.outcome
        assert outcome is not None
        nets.append(outcome.scores[0])
    assert statistics.median(nets) > 0


def test_by_game_hands_each_request_to_its_games_bot() -> None:
    seen: list[str] = []

    def recorder(name: str) -> Bot:
        def bot(request: Any) -> Any:
            seen.append(name)
            return request.legal_actions[0]

        return bot

    bot = by_game({"belote": recorder("b"), "bestia": recorder("x")})
    bot(request_for(new_match("bestia", seed=1)))
    bot(request_for(new_match("belote", seed=1)))
    assert seen == ["x", "b"]
