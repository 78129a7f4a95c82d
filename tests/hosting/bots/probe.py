"""A stranger's probe of the league server, run wherever a hosted version's code runs: by CMake
at its build (``python3 probe.py``), and at the start of every run of a Python bot that imports
it (check-bot, the validation match, the ladder).

It reads what to try from ``targets.json`` beside it (the test writes the league's real
paths and ports: the worst case, the attacker knows them):

* ``read``: files to read (the league's SQLite store, its signing key, another account's
  submission files);
* ``list``: folders to list (the data directory, its ``submissions``): reached when they show
  an entry (a folder the sandbox covers is an empty one);
* ``find``: glob patterns to look for (another version's copy of its files under ``/tmp``);
* ``connect``: ``[host, port]`` to open a TCP connection to (a listener of the test, the
  arena's own TCP port).

Each attempt is one line on stderr, ``probe: KIND TARGET: refused (WHY)`` or
``probe: KIND TARGET: REACHED (WHAT)``, then ``probe: N attempts, M reached``.  Run as a
program it exits with the number reached; :func:`main` returns it.
"""

from __future__ import annotations

import glob
import json
import os
import socket
import sys
from pathlib import Path


def _read(path: str) -> str:
    with open(path, "rb") as file:
        return f"{len(file.read(4096))} bytes"


def _list(path: str) -> str:
    entries = os.listdir(path)
    if not entries:  # what covers a folder (an empty tmpfs) shows nothing of it
        raise LookupError(f"{path} shows nothing (an empty folder)")
    return f"{len(entries)} entries: {', '.join(sorted(entries)[:5])}"


def _find(pattern: str) -> str:
    found = glob.glob(pattern)
    if not found:
        raise FileNotFoundError(f"nothing matches {pattern}")
    return ", ".join(found)


def _connect(address: list[object]) -> str:
    host, port = str(address[0]), int(str(address[1]))
    with socket.create_connection((host, port), timeout=3):
        return "connected"


def main() -> int:
    targets = json.loads((Path(__file__).resolve().parent / "targets.json").read_text())
    tries = [
        *(("read", path, _read, path) for path in targets.get("read", [])),
        *(("list", path, _list, path) for path in targets.get("list", [])),
        *(("find", pattern, _find, pattern) for pattern in targets.get("find", [])),
        *(("connect", f"{a[0]}:{a[1]}", _connect, a) for a in targets.get("connect", [])),
    ]
    reached = 0
    for kind, shown, attempt, argument in tries:
        try:
            what = attempt(argument)  # type: ignore[operator]
        except Exception as problem:  # every refusal is an answer: say which
            line = f"refused ({type(problem).__name__}: {problem})"
        else:
            reached += 1
            line = f"REACHED ({what})"
        print(f"probe: {kind} {shown}: {line}", file=sys.stderr, flush=True)
    print(f"probe: {len(tries)} attempts, {reached} reached", file=sys.stderr, flush=True)
    return reached


if __name__ == "__main__":
    sys.exit(min(main(), 100))
