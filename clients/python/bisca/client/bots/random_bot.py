"""The ``random`` bot of every game: a uniformly random legal action.

It needs nothing but the request's legal actions, so it plays any game the SDK can decode.  A
seed makes a whole match reproducible when the server's seed and the order of requests are the
same (one generator serves every match of the connection).
"""

from __future__ import annotations

import random
from typing import Any

from .._types import Bot, Request


def random_bot(seed: int | None = None) -> Bot:
    """A bot choosing uniformly among the legal actions, from ``random.Random(seed)``."""
    rng = random.Random(seed)

    def choose(request: Request[Any, Any]) -> Any:
        return rng.choice(request.legal_actions)

    return choose
