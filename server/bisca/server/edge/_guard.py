"""A door's guard: the bot's connections accepted, counted and relayed to the door's server.

gRPC's C core serves much of what a client sends without ever handing it to Python:
connections opened and closed with nothing on them, streams it refuses in its core (a wrong
method, no ``te``), PING, SETTINGS and WINDOW_UPDATE frames.  Each costs the arena CPU, and
none reached the door's call budget (review 40: one sandboxed bot's connections opened and
closed in a loop took 123% of a core of its arena and slowed every match in it; its PINGs
92%).  gRPC Python has no hook on accept and cannot adopt a socket, so the door's socket is
the guard's: it accepts the bot's connections, asks the door to let each in (and each read
of its bytes, with the frames it begins: :class:`FrameCounter`), and relays the bytes both
ways to the door's gRPC server,
which listens on a private socket beside it that no sandbox is given.  A connection reaches
gRPC only once its client preface has come whole, so a connection that sends nothing, or
anything but HTTP/2, costs gRPC nothing.

The relay is asyncio's protocols, on the loop that runs the arena's gRPC server: each chunk
read is counted and written on in the same callback, and each side's writing pauses the other
side's reading when its buffer is full, so the guard holds at most a chunk or two of a
connection's bytes.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path
from typing import Protocol

from ._frames import FrameCounter, NotHttp2

log = logging.getLogger("bisca.server.transport")

#: How long a connection may take to send its preface before it is closed: a bot's SDK sends
#: it as it connects.
PREFACE_TIMEOUT_S = 10.0
#: The bytes a connection may send while its relay to the server is being opened (its preface
#: and first frames); past them it is not read until the relay is open.
PENDING_BYTES = 64 * 1024
#: How long a closed door's relays may carry what its server still writes (its server stops
#: with a grace of half a second: ``_doors.py``).
CUT_AFTER_S = 2.0


class GuardedDoor(Protocol):
    """What the guard asks its door (``_doors.py``'s ``BotDoor``)."""

    def admit_connection(self, open_now: int) -> bool:
        """Whether a connection accepted now, with ``open_now`` others held, is let in."""

    def admit_read(self, control: int, data: int) -> bool:
        """Whether one read of a connection's bytes, beginning ``control`` control frames and
        ``data`` DATA frames, is let in (``False``: the door is closed)."""


class DoorGuard:
    """Accepts a door's connections on ``listening`` (a bound, listening unix socket) and
    relays each, once the door lets it in, to the door's server at ``upstream``."""

    def __init__(self, door: GuardedDoor, upstream: Path) -> None:
        self._door = door
        self._upstream = str(upstream)
        self._loop = asyncio.get_running_loop()
        self._connections: set[_BotSide] = set()
        self._server: asyncio.AbstractServer | None = None
        self._closed = False

    async def serve(self, listening: socket.socket) -> None:
        """Accept on ``listening`` until :meth:`close`."""
        server = await self._loop.create_unix_server(lambda: _BotSide(self), sock=listening)
        if self._closed:  # closed while it started
            server.close()
        else:
            self._server = server

    def close(self) -> None:
        """Stop accepting, and reading what the bot sends: the door is closed.  What its
        server still writes (the answer that refuses a call past the door's budget) reaches
        the bot until the server ends each relay, :data:`CUT_AFTER_S` at most."""
        self._closed = True
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections):
            connection.stop_reading()

    # ---- what the connections ask ------------------------------------------------------

    def _accepted(self, connection: _BotSide) -> bool:
        if self._closed or not self._door.admit_connection(len(self._connections)):
            return False
        self._connections.add(connection)
        return True

    def _forget(self, connection: _BotSide) -> None:
        self._connections.discard(connection)

    async def _open_relay(self, connection: _BotSide) -> None:
        try:
            await self._loop.create_unix_connection(lambda: _ServerSide(connection), self._upstream)
        except OSError as problem:  # the door's server is stopping
            log.debug("a door's server did not take a connection: %s", problem)
            connection.cut()


class _BotSide(asyncio.Protocol):
    """One connection of the bot, accepted on its door's socket."""

    def __init__(self, guard: DoorGuard) -> None:
        self._guard = guard
        self._frames = FrameCounter()
        self._bot: asyncio.Transport | None = None
        self._server: asyncio.Transport | None = None
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._relaying: asyncio.Task[None] | None = None
        self._no_preface: asyncio.TimerHandle | None = None
        self._ended = False
        self._ended_reading = False
        #: The relay's writing to the server is paused (its buffer is full).
        self._server_full = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._bot = transport
        if not self._guard._accepted(self):
            self._ended = True
            transport.abort()
            return
        self._no_preface = self._guard._loop.call_later(PREFACE_TIMEOUT_S, self.cut)

    def stop_reading(self) -> None:
        """Take nothing more from the bot; cut the connection once its server has ended it,
        or at once if it has no relay yet."""
        if self._server is None:
            self.cut()
            return
        self._ended_reading = True
        self.pause_bot_reading()
        self._guard._loop.call_later(CUT_AFTER_S, self.cut)

    def data_received(self, data: bytes) -> None:
        if self._ended or self._ended_reading:
            return
        try:
            control, messages = self._frames.feed(data)
        except NotHttp2:
            self.cut()
            return
        if not self._guard._door.admit_read(control, messages):
            return  # (the door is closed by then, and reads nothing more)
        if self._server is not None:
            self._server.write(data)
            return
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes > PENDING_BYTES:
            self.pause_bot_reading()
        if self._frames.preface_done and self._relaying is None:
            if self._no_preface is not None:
                self._no_preface.cancel()
            self._relaying = self._guard._loop.create_task(self._guard._open_relay(self))

    def relay_opened(self, server: asyncio.Transport) -> None:
        if self._ended:
            server.abort()
            return
        self._server = server
        server.write(b"".join(self._pending))  # (may pause the bot's reading: pause_writing)
        self._pending.clear()
        if not self._server_full:
            self.resume_bot_reading()

    def pause_bot_reading(self) -> None:
        if self._bot is not None and not self._ended:
            self._bot.pause_reading()

    def resume_bot_reading(self) -> None:
        if self._bot is not None and not (self._ended or self._ended_reading or self._server_full):
            self._bot.resume_reading()

    def server_full(self, full: bool) -> None:
        self._server_full = full
        if full:
            self.pause_bot_reading()
        else:
            self.resume_bot_reading()

    def from_server(self, data: bytes) -> None:
        if self._bot is not None and not self._ended:
            self._bot.write(data)

    def eof_received(self) -> bool:
        if self._server is not None and self._server.can_write_eof():
            self._server.write_eof()
            return True  # (the server's own end closes the bot's)
        return False

    def pause_writing(self) -> None:
        if self._server is not None:
            self._server.pause_reading()

    def resume_writing(self) -> None:
        if self._server is not None:
            self._server.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.cut()

    def server_ended(self) -> None:
        """The server closed its end: what it wrote last still reaches the bot (the answer
        refusing a call past the door's budget), unless the bot reads nothing for
        :data:`CUT_AFTER_S`."""
        if self._ended:
            return
        self._guard._forget(self)
        self._ended = True
        if self._bot is not None:
            self._bot.close()
            self._guard._loop.call_later(CUT_AFTER_S, self._bot.abort)

    def cut(self) -> None:
        """End both sides of the connection (no grace: the bot left, or is refused)."""
        self._guard._forget(self)
        self._ended = True
        if self._no_preface is not None:
            self._no_preface.cancel()
        if self._relaying is not None and self._server is None:
            self._relaying.cancel()
        for side in (self._bot, self._server):
            if side is not None:
                side.abort()
        self._pending.clear()


class _ServerSide(asyncio.Protocol):
    """The relay's connection to the door's gRPC server, for one connection of the bot."""

    def __init__(self, bot: _BotSide) -> None:
        self._bot = bot

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._bot.relay_opened(transport)

    def data_received(self, data: bytes) -> None:
        self._bot.from_server(data)

    def pause_writing(self) -> None:
        self._bot.server_full(True)

    def resume_writing(self) -> None:
        self._bot.server_full(False)

    def connection_lost(self, exc: Exception | None) -> None:
        self._bot.server_ended()
