"""A bot that goes past one sandbox limit as soon as it is asked to act.

Usage: ``abuser.py KIND`` with KIND one of ``cpu``, ``memory``, ``processes``, ``open_files``,
``file_size``, ``tmp``; it connects and plays like the random bot until its first action
request, then spins, allocates, opens or writes until the limit stops it (``processes`` forks
at once, before it connects).
"""

from __future__ import annotations

import os
import subprocess
import sys
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

    def bot(request: Request[Any, Any]) -> Any:
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
