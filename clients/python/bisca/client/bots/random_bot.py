"""The ``random`` bot of every game: a uniformly random legal action.

It needs nothing but the request's legal actions, so it plays any game the SDK can decode.

Seeded, it is reproducible whatever the schedule: each choice is drawn from a generator seeded
by the bot's seed and the request itself (the seat, the attempt, the seat's whole view and the
legal actions), never from a generator shared along the connection.  One process plays many
matches at once in a tournament, and the order in which their requests arrive changes from
run to run; a shared generator would hand the same draws to other moves.  The view of a seat
never repeats within a match (every move changes it), so the draws of one match are as
independent as a shared generator's.  The engine's values are frozen dataclasses of tuples,
enums and numbers, whose ``repr`` is the same in every process; ``random.Random`` seeds from a
string through SHA-512, not through Python's per-process string hash.
"""

from __future__ import annotations

import random
from typing import Any

from .._types import Bot, Request


def random_bot(seed: int | None = None) -> Bot:
    """A bot choosing uniformly among the legal actions: from the system's randomness, or,
    with a seed, from a generator seeded by the seed and the request (see the module)."""
    if seed is None:
        rng = random.Random()

        def unseeded(request: Request[Any, Any]) -> Any:
            return rng.choice(request.legal_actions)

        return unseeded

    def seeded(request: Request[Any, Any]) -> Any:
        position = (
            f"{seed}|{request.game}|{request.seat}|{request.attempt}|"
            f"{request.observation!r}|{request.legal_actions!r}"
        )
        return random.Random(position).choice(request.legal_actions)

    return seeded
