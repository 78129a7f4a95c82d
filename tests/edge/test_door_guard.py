"""A door's guard (``edge/_guard.py``) counts what gRPC's C core would serve without telling
Python: connections, and HTTP/2 frames (``edge/_frames.py``).  Review 40 measured each flood
below on a door with no guard: none reached the door's call budget, and one bot cost its arena
up to a core for as long as it lived."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bisca.server.edge import (
    DOOR_CONTROL_BURST,
    DOOR_CONTROL_PER_MESSAGE_SENT,
    DOOR_DATA_FRAME_BURST,
    DOOR_DATA_FRAMES_PER_MESSAGE_SENT,
    TRAFFIC_LIMIT_REASON,
    BotDoor,
)
from bisca.server.edge._frames import CLIENT_PREFACE, FrameCounter, NotHttp2
from tests.edge.test_bot_doors import arena_with_doors, closed_by_the_server, welcomed
from tests.sandbox.bots.abuser import PLAY_HEADERS, hpack_literal, http2_frame
from tests.support.waiting import loop_until

SETTINGS = http2_frame(0x4, 0, 0, b"")
PING = http2_frame(0x6, 0, 0, b"12345678")
WINDOW_UPDATE = http2_frame(0x8, 0, 0, (1).to_bytes(4, "big"))
#: A call gRPC refuses in its core, before any handler: ``:method GET``.
GET_PLAY = PLAY_HEADERS.replace(
    hpack_literal(b":method", b"POST"), hpack_literal(b":method", b"GET")
)


# ---- the frames, counted from bytes ----------------------------------------------------------


def test_frames_are_counted_whatever_the_bytes_are_cut_into() -> None:
    message = b"\x00" + (20).to_bytes(4, "big") + b"m" * 20  # one gRPC message of 20 bytes
    stream = (
        CLIENT_PREFACE
        + SETTINGS
        + http2_frame(0x1, 0x4, 1, PLAY_HEADERS)
        + http2_frame(0x0, 0, 1, message)
        + PING
        + http2_frame(0x0, 0, 1, b"ab")  # too small to be a message's bytes: counted as control
        + WINDOW_UPDATE
        + http2_frame(0x0, 0x1, 1, b"")  # the stream's end
    )
    expected = (6, 1)
    for size in (1, 2, 7, 9, 10, 24, 25, 64, len(stream)):
        counter = FrameCounter()
        counts = [counter.feed(stream[at : at + size]) for at in range(0, len(stream), size)]
        assert (sum(c for c, _ in counts), sum(d for _, d in counts)) == expected, size
        assert (counter.control_frames, counter.data_frames) == expected
        assert counter.preface_done


def test_a_frame_is_counted_when_its_header_is_whole() -> None:
    counter = FrameCounter()
    assert counter.feed(CLIENT_PREFACE[:10]) == (0, 0) and not counter.preface_done
    assert counter.feed(CLIENT_PREFACE[10:] + PING[:8]) == (0, 0) and counter.preface_done
    assert counter.feed(PING[8:9]) == (1, 0)  # its payload not read yet: counted all the same
    assert counter.feed(PING[9:] + PING) == (1, 0)


@pytest.mark.parametrize(
    "start",
    [b"GET / HTTP/1.1\r\n\r\n", b"PRI * HTTP/1.1", b"\x16\x03\x01", CLIENT_PREFACE[:5] + b"x"],
)
def test_bytes_that_are_not_http2_are_refused_from_their_first_wrong_byte(start: bytes) -> None:
    with pytest.raises(NotHttp2):
        FrameCounter().feed(start)


# ---- a door's guard, flooded ------------------------------------------------------------------


def _drain(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while connection.recv(65536):
            pass


Flood = Callable[[Path, float, list[int]], None]


def flooding(next_batch: Callable[[], bytes]) -> Flood:
    """Sends ``next_batch()`` again and again on connections of the door, for ``seconds``,
    counting the batches in ``sent[0]``."""

    def flood(path: Path, seconds: float, sent: list[int]) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and path.exists():
            with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as connection:
                connection.connect(str(path))
                threading.Thread(target=_drain, args=(connection,), daemon=True).start()
                connection.sendall(CLIENT_PREFACE + SETTINGS)
                while time.monotonic() < end:
                    connection.sendall(next_batch())
                    sent[0] += 1
            time.sleep(0.01)

    return flood


def frames_again(frames: bytes) -> Flood:
    return flooding(lambda: frames * 100)


def get_streams() -> Flood:
    stream = iter(range(1, 2**31, 2))
    return flooding(
        lambda: b"".join(http2_frame(0x1, 0x5, next(stream), GET_PLAY) for _ in range(50))
    )


def a_byte_at_a_time() -> Flood:
    """DATA frames of 16 KiB, each byte sent on its own."""
    byte = itertools.cycle(http2_frame(0x0, 0, 1, b"\x00" * 16384))
    return flooding(lambda: bytes([next(byte)]))


def connections_opened_and_closed(path: Path, seconds: float, sent: list[int]) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and path.exists():
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as connection:
            connection.connect(str(path))
            connection.sendall(CLIENT_PREFACE)
            sent[0] += 1


#: How long a flood goes on at most: it stops when its door is gone.  A bound, not a speed:
#: the guard counts reads, and on a loaded machine a flood a byte at a time is read a few
#: hundred bytes a read (84,705 bytes in 3 s did not reach the bound once, two suites at once).
FLOOD_S = 20.0


def flooded_door(tmp_path: Path, flood: Flood) -> tuple[list[str], int, bool, bool]:
    """A door flooded until it is gone (:data:`FLOOD_S` at most): what its bot was told to stop
    for, what was sent, whether its socket is gone, and whether another door's bot was
    welcomed after."""

    async def scenario() -> tuple[list[str], int, bool, bool]:
        async with arena_with_doors(tmp_path) as (server, doors):
            token = server.store.bots.add("honest")
            door, other = doors.open(), doors.open()
            stopped: list[str] = []
            door.on_flood(stopped.append)
            await asyncio.sleep(0.1)
            sent = [0]
            flooding = asyncio.create_task(asyncio.to_thread(flood, door.path, FLOOD_S, sent))
            await loop_until(
                lambda: bool(stopped) or flooding.done(), "the flood stopped", FLOOD_S + 30
            )
            await flooding
            return stopped, sent[0], door.path.exists(), await welcomed(other.path, token)

    return asyncio.run(scenario())


@pytest.mark.parametrize(
    "flood",
    [
        connections_opened_and_closed,
        frames_again(PING),
        frames_again(WINDOW_UPDATE),
        frames_again(http2_frame(0x0, 0, 1, b"x")),  # a byte of DATA a frame
        get_streams(),
        a_byte_at_a_time(),
    ],
    ids=["connections", "pings", "window-updates", "tiny-data", "get-streams", "byte-at-a-time"],
)
def test_a_bot_flooding_its_door_below_grpcs_handlers_loses_its_door_and_is_stopped(
    tmp_path: Path, flood: Flood
) -> None:
    stopped, sent, still_there, other_welcomed = flooded_door(tmp_path, flood)
    assert stopped == [TRAFFIC_LIMIT_REASON], (
        f"{sent} sent in {FLOOD_S} s and the bot was not stopped"
    )
    assert not still_there, "the door's socket is still there"
    assert other_welcomed, "another door let nobody in"


def test_what_a_door_lets_in_grows_with_the_messages_the_arena_sends_its_bot(
    tmp_path: Path,
) -> None:
    """A bot's replies are DATA frames, and its client answers each message it reads with
    WINDOW_UPDATEs: a fast honest bot sends hundreds a second, more on a faster machine.  Each
    message the arena writes it lets more in; a bot sending on its own is held to a burst and
    a few a second.  Each read of its bytes counts as a control frame (review 42: a frame sent
    a byte at a time cost a read, a callback and a write per byte)."""

    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (_server, doors):
            data, control = doors.open(), doors.open()
            assert isinstance(data, BotDoor) and isinstance(control, BotDoor)
            assert data.admit_read(0, DOOR_DATA_FRAME_BURST)
            for _ in range(100):
                data.message_sent()
            assert data.admit_read(0, 100 * DOOR_DATA_FRAMES_PER_MESSAGE_SENT)
            assert data.path.exists()
            assert not data.admit_read(0, 50)
            assert not data.path.exists()

            assert all(control.admit_read(0, 0) for _ in range(DOOR_CONTROL_BURST // 2))
            assert control.admit_read(DOOR_CONTROL_BURST // 2 - 1, 0)  # (and its read)
            for _ in range(100):
                control.message_sent()
            assert control.admit_read(100 * DOOR_CONTROL_PER_MESSAGE_SENT - 1, 0)
            assert not control.admit_read(49, 0)
            assert not control.path.exists()

    asyncio.run(scenario())


def test_a_connection_that_is_not_http2_or_says_nothing_never_reaches_grpc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bisca.server.edge._guard.PREFACE_TIMEOUT_S", 0.5)

    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (server, doors):
            token = server.store.bots.add("honest")
            door = doors.open()
            await asyncio.sleep(0.1)
            silent, talking = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
            for connection in (silent, talking):
                connection.connect(str(door.path))
            talking.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            await loop_until(lambda: closed_by_the_server(talking), "the HTTP/1 one closed")
            assert not closed_by_the_server(silent)
            await loop_until(lambda: closed_by_the_server(silent), "the silent one closed", 10)
            silent.close()
            talking.close()
            assert await welcomed(door.path, token), "the door is still the bot's"

    asyncio.run(scenario())
