"""A bot on the Python SDK whose code raises on every request; ``--keep-going`` lets the SDK
play a fallback instead of ending the bot (how it passed every check before); ``--linger``
keeps its process a while after the SDK ended it (as one slow to exit on a loaded machine)."""

from __future__ import annotations

import sys
import time
from typing import Any

from bisca.client import Request, run


def choose(request: Request[Any, Any]) -> Any:
    raise ValueError(f"raises.py cannot choose among {len(request.legal_actions)} actions")


try:
    run(choose, name="raises", games=["belote"], keep_going="--keep-going" in sys.argv)
finally:
    if "--linger" in sys.argv:
        time.sleep(2)
