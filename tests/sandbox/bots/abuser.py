"""A bot that goes past one sandbox limit as soon as it is asked to act.

Usage: ``abuser.py KIND`` with KIND one of ``cpu``, ``memory``, ``processes``, ``open_files``,
``file_size``, ``tmp``; it connects and plays like the random bot until its first action
request, then spins, allocates, opens or writes until the limit stops it (``processes`` forks
at once, before it connects).  ``connections`` goes past the arena's limits, not its own: at
its first request five child processes open 200 connections each to its socket into the arena
and hold them, each with a call open; it prints how many were accepted and how many are still
open two seconds later, and plays on.  ``connections-first`` does the same before it
connects, holding the flood five seconds, so that the bots of its match that connect meanwhile
find it in place; then it connects and plays.  ``calls``, at its first request, has a child
process open a connection with a call on it and close it, again and again, for a minute, and
holds that first answer four seconds (under the test's 5 s move clock) before it plays on: a
one-deal match of quick bots could otherwise end before the child, started late on a loaded
machine, has opened calls enough to pass its door's bound.
"""

from __future__ import annotations

import contextlib
import os
import selectors
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


def hpack_literal(name: bytes, value: bytes) -> bytes:
    """An HPACK header field, literal, not indexed (RFC 7541 6.2.2; short strings only)."""
    return bytes([0, len(name)]) + name + bytes([len(value)]) + value


def http2_frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return (
        len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload
    )


#: The headers of a ``Play`` call (HPACK literals: no table to keep).
PLAY_HEADERS = b"".join(
    hpack_literal(name, value)
    for name, value in (
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":path", b"/bisca.v1.Arena/Play"),
        (b":authority", b"localhost"),
        (b"content-type", b"application/grpc"),
        (b"te", b"trailers"),
    )
)
#: What an HTTP/2 client says first: the preface and its (empty) SETTINGS.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + http2_frame(0x4, 0, 0, b"")


def silent_calls(count: int) -> bytes:
    """``count`` ``Play`` calls opened on a fresh connection (streams 1, 3, ...), none of which
    ever sends its Hello (the arena ends each after its Hello timeout, 10 s)."""
    return b"".join(http2_frame(0x1, 0x4, 1 + 2 * n, PLAY_HEADERS) for n in range(count))


#: What a connection sends to keep a call open, so that gRPC sees a connection in use, not
#: idle.
A_CALL_OPEN = PREFACE + silent_calls(1)


def flood_the_arena(count: int = 1000, per_child: int = 200, hold_s: float = 600.0) -> None:
    """Hold ``count`` connections to the arena, through this bot's socket into it, for
    ``hold_s`` (or until the sandbox ends)."""
    arena = os.environ["BISCA_ADDRESS"].removeprefix("unix:")
    reports = []
    for _ in range(count // per_child):
        reader, writer = os.pipe()
        if os.fork() == 0:
            os.close(reader)
            held = []
            for _ in range(per_child):
                connection = socket.socket(socket.AF_UNIX)
                try:
                    connection.connect(arena)
                except OSError:  # the door is closed: nothing gets in any more
                    connection.close()
                    break
                try:
                    connection.sendall(A_CALL_OPEN)
                except OSError:
                    # Closed as soon as it was taken (a door holds a few at a time): on a
                    # loaded machine its guard may get there before these bytes do.  A flood
                    # goes on; stopping at the first would leave its door's bound unreached.
                    connection.close()
                    continue
                held.append(connection)
            opened = len(held)
            # The arena closes what it does not take as it accepts it, and a connection that
            # does not answer its keepalive pings within seconds: these answer them.
            held = hold_answering_pings(held, 2.0)
            os.write(writer, f"{opened} {len(held)}\n".encode())
            hold_answering_pings(held, hold_s - 2.0)
            os._exit(0)
        os.close(writer)
        reports.append(reader)
    counts = [os.read(reader, 64).split() for reader in reports]
    opened, still = (sum(int(c[i]) for c in counts) for i in (0, 1))
    print(f"connections: {opened} opened, {still} still open", flush=True)


def hold_answering_pings(connections: list[socket.socket], seconds: float) -> list[socket.socket]:
    """Be a live HTTP/2 client on ``connections`` for ``seconds``: every SETTINGS and PING
    the arena sends is acknowledged.  Returns those the arena has not closed."""
    selector = selectors.DefaultSelector()
    unread: dict[socket.socket, bytes] = {}
    for connection in connections:
        connection.setblocking(False)
        selector.register(connection, selectors.EVENT_READ)
        unread[connection] = b""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        for key, _ in selector.select(left):
            connection = key.fileobj
            assert isinstance(connection, socket.socket)
            try:
                data = connection.recv(65536)
            except OSError:
                data = b""
            if not data:
                selector.unregister(connection)
                del unread[connection]
                continue
            frames = unread[connection] + data
            while len(frames) >= 9 and len(frames) >= 9 + (size := int.from_bytes(frames[:3])):
                kind, flags, payload = frames[3], frames[4], frames[9 : 9 + size]
                frames = frames[9 + size :]
                with contextlib.suppress(OSError):
                    if kind == 0x6 and not flags & 0x1:  # PING: its ACK
                        connection.send(http2_frame(0x6, 0x1, 0, payload))
                    elif kind == 0x4 and not flags & 0x1:  # SETTINGS: its ACK
                        connection.send(http2_frame(0x4, 0x1, 0, b""))
            unread[connection] = frames
    selector.close()
    return list(unread)


def open_calls_in_a_loop(seconds: float = 60.0) -> None:
    """A child process that opens a connection to the arena with a call on it and closes it,
    again and again (each call costs the arena its set-up), while this one plays on."""
    if os.fork() != 0:
        return
    arena = os.environ["BISCA_ADDRESS"].removeprefix("unix:")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as connection:
            connection.connect(arena)
            connection.sendall(A_CALL_OPEN)
    os._exit(0)


def main() -> None:
    kind = sys.argv[1]
    if kind == "connections-first":
        flood_the_arena(hold_s=5.0)
        while True:  # the flood's processes, gone at the end of their hold
            try:
                os.wait()
            except ChildProcessError:
                break
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
        if kind in ("connections", "calls"):
            if not flooded:
                flooded = True
                if kind == "connections":
                    flood_the_arena()
                else:
                    open_calls_in_a_loop()
                    time.sleep(4.0)
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
