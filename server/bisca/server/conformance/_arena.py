"""The plumbing of ``bisca check-bot``: a scripted Play endpoint.

The checker drives one bot through a script, one step at a time, and must see every byte the
bot sends, garbage included, at the moment it arrives.  The referee would get in the way: it
runs matches it decides itself, in trio behind the guest-mode bridge, and answers mistakes on
its own.  So this module serves ``bisca.v1.Arena/Play`` on a bare grpc.aio server whose handler
only moves messages, like the arena's transport edge: each stream the bot opens becomes a
:class:`Link` with an inbox the checker reads under its own deadlines, and a ``write`` that never
blocks.  The request deserializer is the arena's tolerant one, so bytes that are not a
``BotMessage`` (or are over the size limit) arrive as a value to report, not a dead stream.

What a bot sends costs the server no more than the checker reads: a stream reads on only
while fewer than :data:`MAX_UNREAD` of its messages wait in its inbox (then gRPC's flow control
holds the bot back), and a run holds at most :data:`MAX_OPEN_LINKS` streams at once (more are
refused).  A bot that sent 600 MB on a stream the checker never read grew the gate's process,
the league server's, by 615 MB (review 38d).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from bisca.server.edge import SERVER_OPTIONS, SERVICE, parse_bot_message
from bisca.server.referee import Inbound


@dataclass(frozen=True)
class Received:
    """One message from the bot: a ``pb.BotMessage``, or the arena's ``Malformed`` /
    ``TooLarge`` for bytes that are not one; ``at`` is ``time.monotonic()`` on arrival."""

    message: Inbound
    at: float


@dataclass(frozen=True)
class Ended:
    """The stream is over: the bot closed it, cancelled it, or the server dropped it."""

    reason: str
    at: float


LinkItem = Received | Ended

#: Messages of one stream read and not yet taken by the checker: past them the stream is not
#: read (a bot's answer is one message; a check reads every one as it comes).
MAX_UNREAD = 32
#: Streams a run holds open at once (a check opens one, the reconnection checks two).
MAX_OPEN_LINKS = 8


@dataclass(frozen=True)
class _Drop:
    reason: str


_CLOSE = object()


class Link:
    """One Play stream opened by the bot."""

    def __init__(self, number: int) -> None:
        self.number = number
        self._inbox: asyncio.Queue[LinkItem] = asyncio.Queue()
        self._taken = asyncio.Event()
        self._outbox: asyncio.Queue[bytes | object] = asyncio.Queue()
        self.open = True

    def take_nowait(self) -> LinkItem:
        """The next item the bot sent, or ``asyncio.QueueEmpty``."""
        item = self._inbox.get_nowait()
        self._taken.set()
        return item

    async def take(self) -> LinkItem:
        """The next item the bot sent, once it comes."""
        item = await self._inbox.get()
        self._taken.set()
        return item

    async def room(self) -> None:
        """Wait until fewer than :data:`MAX_UNREAD` messages wait to be taken."""
        while self._inbox.qsize() >= MAX_UNREAD:
            self._taken.clear()
            await self._taken.wait()

    def received(self, message: Inbound) -> None:
        self._inbox.put_nowait(Received(message, time.monotonic()))

    def write(self, data: bytes) -> None:
        """Queue a serialized ``ServerMessage`` for the bot (dropped once the stream is over)."""
        if self.open:
            self._outbox.put_nowait(data)

    def close(self) -> None:
        """End the stream cleanly (status OK): the SDK's signal that the server is done."""
        if self.open:
            self.open = False
            self._outbox.put_nowait(_CLOSE)

    def drop(self, reason: str) -> None:
        """Abort the stream with ``UNAVAILABLE``, as a server that went away would."""
        if self.open:
            self.open = False
            self._outbox.put_nowait(_Drop(reason))

    def ended(self, reason: str) -> None:
        """The stream is over for the checker: say so in the inbox, and let the handler
        return if it still waits to write (a bot that only closed its side)."""
        self.open = False
        self._inbox.put_nowait(Ended(reason, time.monotonic()))
        self._outbox.put_nowait(_CLOSE)


class ScriptedArena:
    """A grpc.aio server with only the Play method; new streams arrive on :attr:`links`."""

    def __init__(self) -> None:
        self.links: asyncio.Queue[Link] = asyncio.Queue()
        self.address = ""
        self._numbers = itertools.count(1)
        self._server: grpc.aio.Server | None = None
        self._open_links = 0

    async def start(self, host: str = "127.0.0.1", socket: Path | None = None) -> str:
        """Listen on ``host`` (a free port) and, for a sandboxed bot, on ``socket``; returns
        the TCP address."""
        server = grpc.aio.server(options=SERVER_OPTIONS)
        server.add_generic_rpc_handlers((self._handler(),))
        port = server.add_insecure_port(f"{host}:0")
        if port == 0:
            raise OSError(f"could not listen on {host}")
        if socket is not None:
            if not server.add_insecure_port(f"unix:{socket}"):
                raise OSError(f"could not listen on {socket}")
            socket.chmod(0o666)  # the bot's uid is another; the folder (0700) keeps others out
        await server.start()
        self._server = server
        self.address = f"{host}:{port}"
        return self.address

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(0.5)
            self._server = None

    def _handler(self) -> grpc.GenericRpcHandler:
        return grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "Play": grpc.stream_stream_rpc_method_handler(
                    self._play,
                    request_deserializer=parse_bot_message,
                    # The messages are serialized by the referee's builders, as the arena's are.
                    response_serializer=None,
                )
            },
        )

    async def _play(self, request_iterator: object, context: grpc.aio.ServicerContext) -> None:
        if self._open_links >= MAX_OPEN_LINKS:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"the bot has {self._open_links} streams open, the most check-bot takes",
            )
        self._open_links += 1
        try:
            await self._serve(context)
        finally:
            self._open_links -= 1

    async def _serve(self, context: grpc.aio.ServicerContext) -> None:
        link = Link(next(self._numbers))
        self.links.put_nowait(link)

        async def pump_in() -> None:
            try:
                while True:
                    await link.room()  # (unread: gRPC's window holds the bot back)
                    message = await context.read()
                    if message is grpc.aio.EOF:
                        link.ended("the bot closed its side of the stream")
                        return
                    link.received(message)
            except asyncio.CancelledError:
                raise
            except Exception as problem:  # any transport failure ends this stream only
                link.ended(f"the stream broke: {problem!r}")

        reader = asyncio.ensure_future(pump_in())
        try:
            while True:
                item = await link._outbox.get()
                if item is _CLOSE:
                    return
                if isinstance(item, _Drop):
                    await context.abort(grpc.StatusCode.UNAVAILABLE, item.reason)
                await context.write(item)
        finally:
            reader.cancel()
            if link.open:
                link.ended("the stream was cancelled")
