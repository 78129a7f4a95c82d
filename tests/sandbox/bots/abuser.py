"""A bot that goes past one sandbox limit as soon as it is asked to act.

Usage: ``abuser.py KIND`` with KIND one of ``cpu``, ``memory``, ``processes``, ``open_files``,
``file_size``, ``tmp``; it connects and plays like the random bot until its first action
request, then spins, allocates, opens or writes until the limit stops it (``processes`` forks
at once, before it connects).  ``connections`` goes past the arena's limit, not its own: at
its first request four child processes open 250 connections each to the arena's socket and
hold them; it prints how many were accepted and how many are still open two seconds later,
and plays on.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from bisca.client import Request, run


def abuse(kind: str) -> None:
    if kind == "cpu":
        while True:
            pass
    if kind == "memory":
        hoard = [bytearray(64 << 20) for _ in range(64)]  # 4 GiB
        print(len(hoard))
    if kind == "processes":
        children = [subprocess.Popen(["sleep", "30"]) for _ in range(200)]
        print(len(children))
    if kind == "open_files":
        files = [open("/dev/null") for _ in range(10_000)]  # noqa: SIM115
        print(len(files))
    if kind == "tmp":  # 48 MB files (under file_mb) up to 1.5 GB, all of it RAM (a tmpfs)
        for number in range(32):
            Path(f"/tmp/block{number}").write_bytes(bytes(48 << 20))
    if kind == "file_size":
        with open("/tmp/big", "wb") as big:
            for _ in range(64):
                big.write(bytes(1 << 20))
                big.flush()


def flood_the_arena(count: int = 1000, per_child: int = 250) -> None:
    """Hold ``count`` connections to the arena's socket (every sandboxed bot shares it)."""
    arena = os.environ["BISCA_ADDRESS"].removeprefix("unix:")
    reports = []
    for _ in range(count // per_child):
        reader, writer = os.pipe()
        if os.fork() == 0:
            os.close(reader)
            held = []
            for _ in range(per_child):
                try:
                    connection = socket.socket(socket.AF_UNIX)
                    connection.connect(arena)
                except OSError:
                    break
                held.append(connection)
            time.sleep(2)  # the arena closes what it does not take as it accepts it
            still = sum(_open(connection) for connection in held)
            os.write(writer, f"{len(held)} {still}\n".encode())
            time.sleep(600)  # held until the sandbox ends
            os._exit(0)
        os.close(writer)
        reports.append(reader)
    counts = [os.read(reader, 64).split() for reader in reports]
    opened, still = (sum(int(c[i]) for c in counts) for i in (0, 1))
    print(f"connections: {opened} opened, {still} still open", flush=True)


def _open(connection: socket.socket) -> bool:
    """Whether the arena has not closed this connection (what it sent is left unread)."""
    connection.setblocking(False)
    try:
        while connection.recv(65536):
            pass
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def main() -> None:
    kind = sys.argv[1]
    if kind == "processes":
        # Before connecting: once gRPC's own threads run, a process at its limit may hang in a
        # thread gRPC cannot start instead of failing (a bot that hangs just times out).
        try:
            abuse(kind)
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)

    flooded = False

    def bot(request: Request[Any, Any]) -> Any:
        nonlocal flooded
        if kind == "connections":
            if not flooded:
                flooded = True
                flood_the_arena()
            return request.legal_actions[0]
        try:
            abuse(kind)
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        return request.legal_actions[0]

    run(bot, name="abuser", games=["belote"])


if __name__ == "__main__":
    main()
