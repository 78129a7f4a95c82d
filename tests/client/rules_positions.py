"""Positions of seeded random matches, and the engine's answers to the SDKs' rule helpers.

The Node and C++ SDKs' rule helpers (``clients/node/lib/rules.js``, ``bisca/client/rules.h``) are
checked against the engine the same way: :func:`write_positions` writes the observations of
the seat to act, as the ``GameObservation`` bytes a bot receives (hex, one JSON object a line),
one program of each SDK reads them all and prints its helpers' answers, one JSON object a line,
and they must equal :func:`engine_answers`.  What each answer holds, for the seat's
observation (the same keys in every SDK's checker):

``trick``
    the seats of the current trick's plays (``current_trick``), in order;
``winning``
    the seat winning it so far (``winning_play``), ``null`` when no trick is under way;
``winners``
    each complete trick's winner by ``winning_play`` over its plays (the engine's own
    ``Trick.winner`` is the answer);
``strengths``
    for each card of the hand, its ``trick_strength`` in a trick led in each suit in turn;
``points``
    (Belote) each card of the hand's card points; ``team`` and ``partner`` of the seat;
``example``
    (Belote, in card play, when the checker is given the guide's example of its language) the
    index in the legal actions of the example's choice: the guide's Python example's is the
    answer, so the examples of the guide's "Rule helpers" agree.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bisca import wire
from bisca.client import Clock, Request
from bisca.engine import GameState, new_match
from bisca.engine import belote as belote_rules
from bisca.engine import bestia as bestia_rules

State = GameState[Any, Any, Any]
Answer = dict[str, object]
Position = tuple[str, Any, list[Any]]  # the game, the seat's observation, its legal actions
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "bot-guide.md"

#: The first match seeds; every match gives the positions of each of its decisions (Bestia's
#: matches give fewer card-play positions each, so they play more matches).
MATCHES = {"belote": 4, "bestia": 8}
#: Keep every n-th decision that is not card play (bidding, declaring...): enough to cover an
#: observation without a trump or a trick, without filling the file with them.
OTHER_DECISIONS_KEPT = 8


def positions(game: str, seed: int) -> list[Position]:
    """The observations of the seat to act and its legal actions at the decisions of seeded
    random matches."""
    found: list[Position] = []
    rng = random.Random(seed)
    for match in range(MATCHES[game]):
        state: State = new_match(game, None, seed=seed * 1000 + match)
        decisions = 0
        while not state.is_over:
            seat = state.to_act
            assert seat is not None
            observation = state.observation(seat)
            playing = observation.phase.name == "PLAYING"
            legal = state.legal_actions()
            if playing or decisions % OTHER_DECISIONS_KEPT == 0:
                found.append((game, observation, legal))
            decisions += 1
            state.apply(rng.choice(legal))
        # The end of the match too: every trick complete, none on the table.
        found.append((game, state.observation(0), []))
    return found


def guide_example(language: str) -> str:
    """The guide's rule helpers example in ``language`` (``python``, ``js``, ``cpp``)."""
    blocks = re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), re.DOTALL)
    marker = {"python": "# ", "js": "// ", "cpp": "// "}[language]
    extension = {"python": "py", "js": "js", "cpp": "cpp"}[language]
    [block] = [b for b in blocks if b.startswith(f"{marker}rules_example.{extension}:")]
    return str(block)


def python_example() -> Callable[[Request[Any, Any]], object]:
    """The guide's Python example's ``play``."""
    namespace: dict[str, Any] = {}
    exec(compile(guide_example("python"), str(GUIDE), "exec"), namespace)
    play: Callable[[Request[Any, Any]], object] = namespace["play"]
    return play


def example_choice(
    play: Callable[[Request[Any, Any]], object], observation: Any, legal: list[Any]
) -> int:
    """The index in ``legal`` of what the example plays."""
    request = Request(
        request_id="r",
        match_id="m",
        game="belote",
        seat=observation.seat,
        observation=observation,
        legal_actions=tuple(legal),
        clock=Clock(move_ms=1000, bank_ms=5000),
    )
    return legal.index(play(request))


#: The suit number that is no suit: the trump of a position before the trump is known.
NO_TRUMP = -1


def engine_answers(
    game: str,
    observation: Any,
    legal: list[Any],
    example: Callable[[Request[Any, Any]], object] | None = None,
) -> Answer:
    """What the rule helpers must answer for ``observation`` (see the module's docstring)."""
    rules: Any = belote_rules if game == "belote" else bestia_rules
    # No trump yet (Belote's bidding) is "no suit is trump": the engine's helpers take a suit
    # number (the compiled engine refuses None), and -1 is none of them.
    trump = NO_TRUMP if observation.trump is None else observation.trump
    trick = rules.current_trick(observation)
    answer: Answer = {
        "trick": [play.seat for play in trick],
        "winning": rules.winning_play(trick, trump).seat if trick else None,
        "winners": [trick.winner for trick in observation.tricks if trick.winner is not None],
        "strengths": [
            [rules.trick_strength(card, led, trump) for led in rules.Suit]
            for card in observation.hand
        ],
    }
    if game == "belote":
        seat = observation.seat
        partner = next(s for s in range(4) if s != seat and rules.team_of(s) == rules.team_of(seat))
        answer |= {
            "points": [card.points(trump) for card in observation.hand],
            "team": rules.team_of(seat),
            "partner": partner,
        }
        if example is not None and observation.phase.name == "PLAYING":
            answer["example"] = example_choice(example, observation, legal)
    return answer


def write_positions(path: Path, seed: int = 24, *, with_example: bool = False) -> list[Answer]:
    """Write the positions of both games to ``path`` (the observation, the legal actions);
    returns the engine's answers, in order, with the guide's Python example's choices if
    ``with_example``."""
    everything = positions("belote", seed) + positions("bestia", seed)
    with path.open("w") as out:
        for game, observation, legal in everything:
            message = wire.encode_game_observation(game, observation)
            line = {
                "game": game,
                "observation": message.SerializeToString().hex(),
                "legal": [
                    wire.encode_game_action(game, action).SerializeToString().hex()
                    for action in legal
                ],
            }
            out.write(json.dumps(line) + "\n")
    example = python_example() if with_example else None
    return [engine_answers(game, obs, legal, example) for game, obs, legal in everything]


def assert_same_answers(output: str, expected: list[Answer], positions_file: Path) -> None:
    """A checker's output (one JSON object a line) is the engine's answers, position by position."""
    answers = [json.loads(line) for line in output.splitlines() if line.strip()]
    assert len(answers) == len(expected), (len(answers), len(expected))
    for number, (answer, engine) in enumerate(zip(answers, expected, strict=True)):
        assert answer == engine, (
            f"position {number} (line {number + 1} of {positions_file}): the SDK answered "
            f"{answer}, the engine {engine}"
        )
