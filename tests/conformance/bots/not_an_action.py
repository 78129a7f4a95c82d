"""A bot on the Python SDK that never answers an action of the game: it returns ``None`` (a
``choose()`` with a path that has no ``return``); ``--keep-going`` lets the SDK send the first
legal action in its place, which passed every check of ``bisca check-bot`` before."""

from __future__ import annotations

import sys
from typing import Any

from bisca.client import Request, run


def choose(request: Request[Any, Any]) -> Any:
    if request.attempt > 99:  # never: the path with a return is not the one taken
        return request.legal_actions[0]


run(choose, name="not-an-action", games=["belote"], keep_going="--keep-going" in sys.argv)
