"""A bot that reaches for what lies beside it, then plays like the random bot.

Usage: ``neighbour.py ACTION PATH`` with ACTION one of

* ``connect``: send ``escaped`` to the unix socket at PATH (a host program's listener);
* ``read``: print the file at PATH (another user's file, beside the bot in a shared folder);
* ``cpu-children``: start four processes that each spin for 2.5 CPU seconds (under a 3 s
  limit for one process, past it for all four), before connecting; PATH is not used;
* ``memory-children``: start four processes that each hold 450 MB (under a 1536 MB limit for
  one process, past it for all four) and wait, before connecting; PATH is not used.

A PATH may be relative: the bot starts in its own folder.  What it got is printed on stdout
(the arena keeps it in ``seatN.stdout.log``); a failure is printed too, and the bot plays on.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from bisca.client import run
from bisca.client.bots import make_bot

SPIN = "import time\nwhile time.process_time() < 2.5:\n    pass\n"
# Written bytes (not zeros, which calloc may leave unmapped): every page of it is resident.
HOLD = "import time\nheld = b'x' * (450 * 2**20)\nprint(flush=True)\ntime.sleep(120)\n"


def reach(action: str, path: str) -> str:
    if action == "connect":
        with socket.socket(socket.AF_UNIX) as probe:
            probe.connect(path)
            probe.sendall(b"escaped")
        return f"sent to {path}"
    if action == "read":
        return f"read {path}: {Path(path).read_text()}"
    if action == "cpu-children":
        children = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(4)]
        return f"children ended: {[child.wait() for child in children]}"
    if action == "memory-children":
        children = [
            subprocess.Popen([sys.executable, "-c", HOLD], stdout=subprocess.PIPE) for _ in range(4)
        ]
        for child in children:
            assert child.stdout is not None
            child.stdout.readline()  # it holds its memory now
        return "children holding their memory"
    raise ValueError(f"unknown action {action!r}")


def main() -> None:
    action, path = sys.argv[1], sys.argv[2]
    try:
        print(reach(action, path), flush=True)
    except OSError as problem:
        print(f"failed: {type(problem).__name__}: {problem}", flush=True)
    run(make_bot("belote", "random", 1), name="neighbour", games=["belote"])


if __name__ == "__main__":
    main()
