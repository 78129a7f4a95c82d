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
    (Belote) each card of the hand's card points; ``team`` and ``partner`` of the seat.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bisca import wire
from bisca.engine import GameState, new_match
from bisca.engine import belote as belote_rules
from bisca.engine import bestia as bestia_rules

State = GameState[Any, Any, Any]
Answer = dict[str, object]

#: The first match seeds; every match gives the positions of each of its decisions (Bestia's
#: matches give fewer card-play positions each, so they play more matches).
MATCHES = {"belote": 4, "bestia": 8}
#: Keep every n-th decision that is not card play (bidding, declaring...): enough to cover an
#: observation without a trump or a trick, without filling the file with them.
OTHER_DECISIONS_KEPT = 8


def positions(game: str, seed: int) -> list[tuple[str, Any]]:
    """``(game, observation of the seat to act)`` at the decisions of seeded random matches."""
    found: list[tuple[str, Any]] = []
    rng = random.Random(seed)
    for match in range(MATCHES[game]):
        state: State = new_match(game, None, seed=seed * 1000 + match)
        decisions = 0
        while not state.is_over:
            seat = state.to_act
            assert seat is not None
            observation = state.observation(seat)
            playing = observation.phase.name == "PLAYING"
            if playing or decisions % OTHER_DECISIONS_KEPT == 0:
                found.append((game, observation))
            decisions += 1
            state.apply(rng.choice(state.legal_actions()))
        # The end of the match too: every trick complete, none on the table.
        found.append((game, state.observation(0)))
    return found


def engine_answers(game: str, observation: Any) -> Answer:
    """What the rule helpers must answer for ``observation`` (see the module's docstring)."""
    rules: Any = belote_rules if game == "belote" else bestia_rules
    trump = observation.trump
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
    return answer


def write_positions(path: Path, seed: int = 24) -> list[Answer]:
    """Write the positions of both games to ``path``; returns the engine's answers, in order."""
    everything = positions("belote", seed) + positions("bestia", seed)
    with path.open("w") as out:
        for game, observation in everything:
            message = wire.encode_game_observation(game, observation)
            line = {"game": game, "observation": message.SerializeToString().hex()}
            out.write(json.dumps(line) + "\n")
    return [engine_answers(game, observation) for game, observation in everything]


def read_answers(output: str) -> list[Answer]:
    """A checker's output: one JSON object a line."""
    return [json.loads(line) for line in output.splitlines() if line.strip()]
