"""A bot that thinks: it waits a tenth of a second before each action (its first legal one),
so a match of it lasts long enough to be cut off in the middle.

Usage: ``slow.py [GAME]`` (default belote), run by the arena like any bot.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from bisca.client import Request, run


def main() -> None:
    game = sys.argv[1] if len(sys.argv) > 1 else "belote"

    def bot(request: Request[Any, Any]) -> Any:
        time.sleep(0.1)
        return request.legal_actions[0]

    run(bot, name="slow", games=[game])


if __name__ == "__main__":
    main()
