"""A door of its own for each sandboxed bot: a unix socket served by a small grpc.aio server of
the arena's service, capped at :data:`DOOR_CONNECTIONS`.

gRPC caps connections per server, and cannot tell one unix socket's peers apart: with one
socket shared by every sandbox, one bot's processes held connections up to the arena's cap and
the honest bots of its match never got in (review 38b, "G2").  A server per bot is what gRPC
allows (a running server takes no new port), and it is cheap: about 0.1 ms to make and start,
no thread of its own (the process's event engine serves them all).  A bot process opens its
door as it starts and closes it once it has ended (``bisca.server.sandbox``'s ``_doors.py``):
what it holds it holds on its own door, and its streams count as its own peer's in the
transport's per-address limits.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Coroutine
from pathlib import Path

import grpc

from bisca.server.errors import ConfigError

from ._transport import ArenaTransport, arena_grpc_server

log = logging.getLogger("bisca.server.transport")

#: Connections one bot may hold on its door: the SDKs hold one, and a second while they
#: connect again.
DOOR_CONNECTIONS = 4
#: Calls open at once on one connection of a door: a bot plays every seat it has on one Play
#: stream.  So a door holds at most 4 × 4 streams, all counted as its bot's (and at most
#: ``DOOR_UNANSWERED_STREAMS`` of them not answered yet: ``_transport.py``).
DOOR_STREAMS_PER_CONNECTION = 4
#: How long a closed door's server lets its calls end (the bot's processes are gone by then).
CLOSE_GRACE_S = 0.5
#: The longest path a unix socket may have (``sun_path`` less its final NUL).
MAX_SOCKET_PATH_BYTES = 107


class BotDoor:
    """One bot process's socket into the arena, served until :meth:`close`."""

    def __init__(
        self, doors: BotDoors, path: Path, server: grpc.aio.Server, started: asyncio.Task[None]
    ) -> None:
        self.path = path
        self._doors = doors
        self._server = server
        self._started = started

    def close(self) -> None:
        self._doors._closed(self)

    async def _stop(self) -> None:
        # Stopped only once its start is done: a grpc.aio server stopped while it starts
        # crashed the process (SIGSEGV, grpcio 1.85: a door closed in the turn it was opened
        # in, as when the sandbox refuses its bot; review 39).
        await asyncio.gather(self._started, return_exceptions=True)
        await self._server.stop(CLOSE_GRACE_S)


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
        #: Doors open at once at most (each its connections and its listening socket).
        self.most = max(1, connections // (DOOR_CONNECTIONS + 1))
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

    def _path(self, number: int) -> Path:
        return self._folder / f"{number:08x}.sock"  # (all of one length)

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
        path = self._path(next(self._numbers))
        server = arena_grpc_server(
            self._transport,
            DOOR_CONNECTIONS,
            self._idle_s,
            door=path,
            streams_per_connection=DOOR_STREAMS_PER_CONNECTION,
        )
        try:
            bound = server.add_insecure_port(f"unix:{path}")
        except RuntimeError:  # grpc says only "Failed to bind to address ..."
            bound = 0
        if not bound:
            raise OSError(f"cannot listen on unix:{path} (is its folder still there?)")
        path.chmod(0o666)  # the bot's uid is another; the folder (0700) keeps everyone else out
        door = BotDoor(self, path, server, self._run(server.start()))
        self._open.add(door)
        return door

    def _closed(self, door: BotDoor) -> None:
        if door in self._open:
            self._open.discard(door)
            door.path.unlink(missing_ok=True)
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
