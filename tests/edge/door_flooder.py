"""Hold silent ``Play`` calls on bots' doors, as a hostile bot's processes would from inside
their sandboxes: ``door_flooder.py HOLD_S CONNECTIONS CALLS PATH...`` opens CONNECTIONS
connections to each door, each with CALLS calls that never send a Hello, answers the arena's
pings for HOLD_S seconds and prints how many connections it opened and still holds."""

from __future__ import annotations

import socket
import sys

from tests.sandbox.bots.abuser import PREFACE, hold_answering_pings, silent_calls


def main() -> None:
    hold_s, connections, calls = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    held = []
    for path in sys.argv[4:]:
        for _ in range(connections):
            connection = socket.socket(socket.AF_UNIX)
            try:
                connection.connect(path)
                connection.sendall(PREFACE + silent_calls(calls))
            except OSError:
                break
            held.append(connection)
    opened = len(held)
    held = hold_answering_pings(held, hold_s)
    print(f"door flooder: {opened} connections opened, {len(held)} still open", flush=True)


if __name__ == "__main__":
    main()
