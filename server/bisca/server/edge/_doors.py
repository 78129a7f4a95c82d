"""A door of its own for each sandboxed bot: a unix socket into a small grpc.aio server of the
arena's service, capped at :data:`DOOR_CONNECTIONS`, and guarded.

gRPC caps connections per server, and cannot tell one unix socket's peers apart: with one
socket shared by every sandbox, one bot's processes held connections up to the arena's cap and
the honest bots of its match never got in (review 38b, "G2").  A server per bot is what gRPC
allows (a running server takes no new port), and it is cheap: about 0.1 ms to make and start,
no thread of its own (the process's event engine serves them all).  A bot process opens its
door as it starts and closes it once it has ended (``bisca.server.sandbox``'s ``_doors.py``):
what it holds it holds on its own door, and its streams count as its own peer's in the
transport's per-address limits.

The socket the bot is given is its door's guard's (``_guard.py``), not gRPC's: the guard
accepts its connections and relays them to the door's server on a private socket beside it,
counting what gRPC would serve without telling Python — connections, and HTTP/2 frames — so
that the door can bound them as it bounds calls (review 40).  A bot past any of the door's
bounds loses its door and is stopped.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
from collections.abc import Callable, Coroutine
from pathlib import Path

import grpc

from bisca.server.errors import ConfigError

from ._guard import DoorGuard
from ._transport import ArenaTransport, arena_grpc_server

log = logging.getLogger("bisca.server.transport")

#: Connections one bot may hold on its door: the SDKs hold one, and a second while they
#: connect again.
DOOR_CONNECTIONS = 4
#: Calls open at once on one connection of a door: a bot plays every seat it has on one Play
#: stream.  So a door holds at most 4 × 4 streams, all counted as its bot's (and at most
#: ``DOOR_UNANSWERED_STREAMS`` of them not answered yet: ``_transport.py``).
DOOR_STREAMS_PER_CONNECTION = 4
#: Calls a door lets in at once, and then per second: a bot opens one Play stream, and one
#: more each time it connects again, backing off (the SDKs wait 0.1 s, then twice as long each
#: time).  A bot past them opens calls in a loop, each costing the arena a call's set-up and
#: its bot's Hello wait: one such bot slowed every match of its arena (review 39b: a 40-deal
#: match from 4.2 s to 11.2 s).  Its door is closed and the bot stopped with
#: :data:`CALLS_LIMIT_REASON`.
DOOR_CALL_BURST = 32
DOOR_CALLS_PER_S = 2.0
CALLS_LIMIT_REASON = "calls limit: calls opened on its socket faster than a bot needs"
#: Connections a door lets in at once, and then per second: an SDK connects once, and again
#: after a drop, backing off as above.  Each costs the arena an accept and a relay even with
#: nothing on it (review 40: a bot connecting and closing in a loop took a core of its arena).
DOOR_CONNECTION_BURST = 32
DOOR_CONNECTIONS_PER_S = 2.0
#: What a door lets in of what gRPC's C core reads without a Python handler (``_frames.py``),
#: in two budgets, each a burst, a few a second, and more for each message the arena writes the
#: bot (a client answers what it reads: its reply, and its flow control's WINDOW_UPDATEs;
#: measured, gRPC's C core sends two of those for each message it reads).  Counted on the arena's
#: messages, not its frames: a bot shrinking its window to a few bytes splits each message in
#: many DATA frames, and would earn more for each (review 42).
#: Control: every frame but DATA (SETTINGS, PING, WINDOW_UPDATE, HEADERS, RST_STREAM...) and
#: every read of the bot's bytes (a bot sending a byte at a time costs a read, a callback and
#: a write each: review 42).  A flood costs the arena's C code and its loop work no handler
#: sees (review 40: 14,000 PINGs a second took 92% of a core, 800,000 WINDOW_UPDATEs a second
#: 38%).
DOOR_CONTROL_BURST = 1024
DOOR_CONTROL_PER_S = 64.0
DOOR_CONTROL_PER_MESSAGE_SENT = 8
#: DATA frames with a message's bytes: the bot's own messages (one a request it answers).
DOOR_DATA_FRAME_BURST = 1024
DOOR_DATA_FRAMES_PER_S = 64.0
DOOR_DATA_FRAMES_PER_MESSAGE_SENT = 2
TRAFFIC_LIMIT_REASON = (
    "traffic limit: connections or HTTP/2 frames sent on its socket faster than a bot needs"
)
#: The descriptors a door holds at most: its two sockets (the guard's and its server's), and
#: two for each connection (the bot's end, accepted by the guard, and the relay's to the
#: server; the server's end of it is the server's own).
DOOR_DESCRIPTORS = 2 + 3 * DOOR_CONNECTIONS
#: Connections a door's socket queues before its guard accepts them (then it closes those past
#: :data:`DOOR_CONNECTIONS`): a client connecting past the queue waits, or is refused.
DOOR_BACKLOG = 64
#: How long a closed door's server lets its calls end (the bot's processes are gone by then).
CLOSE_GRACE_S = 0.5
#: The longest path a unix socket may have (``sun_path`` less its final NUL).
MAX_SOCKET_PATH_BYTES = 107


class CallBudget:
    """Calls (or a door's connections, reads and frames) let in: ``burst`` at once, then one
    each ``1 / per_s`` seconds, and what :meth:`give` adds (a token bucket; ``now`` in seconds
    of any one clock)."""

    def __init__(self, burst: int, per_s: float, now: float) -> None:
        self.burst, self.per_s = burst, per_s
        self._left = float(burst)
        self._counted_at = now

    def give(self, count: float) -> None:
        """``count`` more calls let in (never past the burst)."""
        self._left = min(self.burst, self._left + count)

    def take(self, now: float, count: int = 1) -> bool:
        """``count`` calls let in at ``now``, or ``False`` if fewer are left."""
        elapsed, self._counted_at = now - self._counted_at, now
        self._left = min(self.burst, self._left + elapsed * self.per_s)
        if self._left < count:
            return False
        self._left -= count
        return True


class BotDoor:
    """One bot process's socket into the arena, served until :meth:`close`, letting calls in
    at most :data:`DOOR_CALL_BURST` at once and then :data:`DOOR_CALLS_PER_S`, and connections
    and frames as its guard counts them (``DOOR_CONNECTION_BURST``... above)."""

    def __init__(self, doors: BotDoors, path: Path, server_path: Path) -> None:
        self.path = path
        #: The door's gRPC server's socket, which only its guard connects to.
        self.server_path = server_path
        self._doors = doors
        self._clock = doors._loop.time
        now = self._clock()
        self._calls = CallBudget(DOOR_CALL_BURST, DOOR_CALLS_PER_S, now)
        self._connections = CallBudget(DOOR_CONNECTION_BURST, DOOR_CONNECTIONS_PER_S, now)
        self._control = CallBudget(DOOR_CONTROL_BURST, DOOR_CONTROL_PER_S, now)
        self._data_frames = CallBudget(DOOR_DATA_FRAME_BURST, DOOR_DATA_FRAMES_PER_S, now)
        self._refusal = ""  # why it lets no more in
        self._stop_bot: Callable[[str], None] | None = None
        self._serving: tuple[grpc.aio.Server, asyncio.Task[None]] | None = None
        self.guard = DoorGuard(self, server_path)

    def _serve(self, server: grpc.aio.Server, started: asyncio.Task[None]) -> None:
        self._serving = (server, started)

    def on_flood(self, stop_bot: Callable[[str], None]) -> None:
        """``stop_bot(reason)`` is called, once, if its bot opens calls past the door's
        limits (the door is closed by then)."""
        self._stop_bot = stop_bot

    def admit_call(self) -> str:
        """Empty if one more call may be served; else why not.  The first call past the limits
        closes the door and stops its bot."""
        if self._refusal:
            return self._refusal
        if self._calls.take(self._clock()):
            return ""
        return self._refuse(
            CALLS_LIMIT_REASON,
            f"at most {DOOR_CALL_BURST} at once, then {DOOR_CALLS_PER_S:g} a second",
        )

    def admit_connection(self, open_now: int) -> bool:
        """Whether a connection its guard accepted, with ``open_now`` others held, is let in:
        not past :data:`DOOR_CONNECTIONS` at once (one more is closed, nothing worse: an SDK
        connecting again may find its old connection still open), and the first past the
        connections' budget closes the door and stops its bot."""
        if self._refusal:
            return False
        if not self._connections.take(self._clock()):
            self._refuse(
                TRAFFIC_LIMIT_REASON,
                f"connections: at most {DOOR_CONNECTION_BURST} at once, then "
                f"{DOOR_CONNECTIONS_PER_S:g} a second",
            )
            return False
        return open_now < DOOR_CONNECTIONS

    def admit_read(self, control: int, data: int) -> bool:
        """Whether one read of a connection's bytes, beginning ``control`` control frames and
        ``data`` DATA frames, is let in; the first past either budget closes the door and
        stops its bot."""
        if self._refusal:
            return False
        now = self._clock()
        if not self._control.take(now, control + 1):
            bound = (
                f"control frames and reads: at most {DOOR_CONTROL_BURST} at once, then "
                f"{DOOR_CONTROL_PER_S:g} a second and {DOOR_CONTROL_PER_MESSAGE_SENT} for each "
                "message it is sent"
            )
        elif data and not self._data_frames.take(now, data):
            bound = (
                f"DATA frames: at most {DOOR_DATA_FRAME_BURST} at once, then "
                f"{DOOR_DATA_FRAMES_PER_S:g} a second and {DOOR_DATA_FRAMES_PER_MESSAGE_SENT} "
                "for each message it is sent"
            )
        else:
            return True
        self._refuse(TRAFFIC_LIMIT_REASON, bound)
        return False

    def message_sent(self) -> None:
        """The door's server wrote the bot a message, which its client answers."""
        self._control.give(DOOR_CONTROL_PER_MESSAGE_SENT)
        self._data_frames.give(DOOR_DATA_FRAMES_PER_MESSAGE_SENT)

    def _refuse(self, reason: str, bound: str) -> str:
        """Let nothing in from now on: the door is closed and its bot stopped, once."""
        self._refusal = f"{reason} ({bound}): its socket is closed"
        log.warning("%s: %s", self.path, self._refusal)
        self.close()
        if self._stop_bot is not None:
            self._stop_bot(reason)
        return self._refusal

    def close(self) -> None:
        self._doors._closed(self)

    async def _stop(self) -> None:
        assert self._serving is not None, "a door is served from the moment it is open"
        server, started = self._serving
        # Stopped only once its start is done: a grpc.aio server stopped while it starts
        # crashed the process (SIGSEGV, grpcio 1.85: a door closed in the turn it was opened
        # in, as when the sandbox refuses its bot; review 39).
        await asyncio.gather(started, return_exceptions=True)
        await server.stop(CLOSE_GRACE_S)


class BotDoors:
    """The doors of one arena's sandboxed bots, in ``folder`` (private: mode 0700); made and
    closed on the loop that runs the arena's grpc server (the trio run of a served arena is a
    guest on it, in the same thread)."""

    def __init__(
        self,
        transport: ArenaTransport,
        folder: Path,
        *,
        connection_idle_s: float,
        connections: int,
    ) -> None:
        """``connections``: what all the doors may hold together, the process's descriptors
        kept for them (``ServerConfig.bot_doors``): a door more is refused.
        :class:`ConfigError` for a folder whose doors' paths would be too long for a unix
        socket (a TMPDIR too long: the folder is made under it)."""
        self._transport = transport
        self._folder = folder
        self._idle_s = connection_idle_s
        #: Doors open at once at most (each its descriptors).
        self.most = max(1, connections // DOOR_DESCRIPTORS)
        self._loop = asyncio.get_running_loop()
        self._numbers = itertools.count(1)
        self._open: set[BotDoor] = set()
        #: Servers starting or stopping: kept until done (the loop holds its tasks weakly).
        self._tasks: set[asyncio.Task[None]] = set()
        longest = len(bytes(self._path(0xFFFF_FFFF)))
        if longest > MAX_SOCKET_PATH_BYTES:
            raise ConfigError(
                f"cannot make the bots' sockets in {folder}: their paths would be {longest} "
                f"bytes, and a unix socket's path is at most {MAX_SOCKET_PATH_BYTES}; set TMPDIR "
                "to a shorter folder"
            )

    def _path(self, number: int, suffix: str = ".sock") -> Path:
        return self._folder / f"{number:08x}{suffix}"  # (all of one length)

    def open(self) -> BotDoor:
        """A new door, listening at once (the socket exists and takes connections; the server
        serves them from its start, a turn of the loop later).  :class:`OSError` when it
        cannot be made (its folder is gone, the doors hold all the connections kept for
        them)."""
        if len(self._open) >= self.most:
            raise OSError(
                f"the arena has {len(self._open)} bots running, each with a socket of its own "
                f"holding up to {DOOR_CONNECTIONS} connections: no descriptors are left for "
                "another (raise the open files limit, ulimit -n, to run more at once)"
            )
        number = next(self._numbers)
        path, server_path = self._path(number), self._path(number, ".grpc")
        door = BotDoor(self, path, server_path)
        server = arena_grpc_server(
            self._transport,
            DOOR_CONNECTIONS,
            self._idle_s,
            door=door,
            streams_per_connection=DOOR_STREAMS_PER_CONNECTION,
        )
        try:
            bound = server.add_insecure_port(f"unix:{server_path}")
        except RuntimeError:  # grpc says only "Failed to bind to address ..."
            bound = 0
        if not bound:
            raise OSError(f"cannot listen on unix:{server_path} (is its folder still there?)")
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listening.bind(str(path))
            # the bot's uid is another; the folder (0700) keeps everyone else out
            path.chmod(0o666)
            listening.listen(DOOR_BACKLOG)
            listening.setblocking(False)
        except OSError as problem:
            listening.close()
            server_path.unlink(missing_ok=True)
            raise OSError(f"cannot listen on unix:{path}: {problem.strerror}") from problem
        door._serve(server, self._run(server.start()))
        self._run(door.guard.serve(listening))
        self._open.add(door)
        return door

    def _closed(self, door: BotDoor) -> None:
        if door in self._open:
            self._open.discard(door)
            door.guard.close()
            door.path.unlink(missing_ok=True)
            door.server_path.unlink(missing_ok=True)
            self._run(door._stop())

    def _run(self, work: Coroutine[object, object, None]) -> asyncio.Task[None]:
        task = self._loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a bot's door failed", exc_info=task.exception())

    @property
    def open_doors(self) -> int:
        return len(self._open)

    async def close(self) -> None:
        """Every door closed (the arena ends), and what was starting or stopping done."""
        for door in list(self._open):
            door.close()
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
