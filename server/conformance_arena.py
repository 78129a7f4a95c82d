"""The plumbing of ``bisca check-bot``: a scripted Play endpoint, and the bot's process.

The checker drives one bot through a script, one step at a time, and must see every byte the
bot sends, garbage included, at the moment it arrives.  The referee would get in the way: it
runs matches it decides itself, in trio behind the guest-mode bridge, and answers mistakes on
its own.  So this module serves ``bisca.v1.Arena/Play`` on a bare grpc.aio server whose handler
only moves messages, like the arena's transport edge: each stream the bot opens becomes a
:class:`Link` with an inbox the checker reads under its own deadlines, and a ``send`` that never
blocks.  The request deserializer is the arena's tolerant one, so bytes that are not a
``BotMessage`` (or are over the size limit) arrive as a value to report, not a dead stream.

The bot runs as a subprocess (spawned, never forked from this process, which has imported grpc:
a forked child's channels fail) with ``BISCA_ADDRESS`` and ``BISCA_TOKEN`` in its environment,
its stdout and stderr appended to files that the report names.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from bisca.v1 import arena_pb2 as pb

from ._transport import SERVER_OPTIONS, SERVICE, parse_bot_message
from .referee import Inbound


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


@dataclass(frozen=True)
class _Drop:
    reason: str


_CLOSE = object()


class Link:
    """One Play stream opened by the bot."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.inbox: asyncio.Queue[LinkItem] = asyncio.Queue()
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self.open = True

    def send(self, message: pb.ServerMessage) -> None:
        """Queue a message for the bot (dropped once the stream is over)."""
        if self.open:
            self._outbox.put_nowait(message)

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
        self.inbox.put_nowait(Ended(reason, time.monotonic()))
        self._outbox.put_nowait(_CLOSE)


class ScriptedArena:
    """A grpc.aio server with only the Play method; new streams arrive on :attr:`links`."""

    def __init__(self) -> None:
        self.links: asyncio.Queue[Link] = asyncio.Queue()
        self.address = ""
        self._numbers = itertools.count(1)
        self._server: grpc.aio.Server | None = None

    async def start(self, host: str = "127.0.0.1") -> str:
        server = grpc.aio.server(options=SERVER_OPTIONS)
        server.add_generic_rpc_handlers((self._handler(),))
        port = server.add_insecure_port(f"{host}:0")
        if port == 0:
            raise OSError(f"could not listen on {host}")
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
                    response_serializer=pb.ServerMessage.SerializeToString,
                )
            },
        )

    async def _play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        link = Link(next(self._numbers))
        self.links.put_nowait(link)

        async def pump_in() -> None:
            try:
                while True:
                    message = await context.read()
                    if message is grpc.aio.EOF:
                        link.ended("the bot closed its side of the stream")
                        return
                    link.inbox.put_nowait(Received(message, time.monotonic()))
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


class BotProcess:
    """The bot command, started (and restarted) as a subprocess with its output in files."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], log_dir: Path) -> None:
        self.argv = list(argv)
        self.env = env
        self.stdout_path = log_dir / "bot.stdout.log"
        self.stderr_path = log_dir / "bot.stderr.log"
        self.starts = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def start(self) -> None:
        """Start the command (``OSError`` when it cannot be run)."""
        self.starts += 1
        with open(self.stdout_path, "ab") as stdout, open(self.stderr_path, "ab") as stderr:
            if self.starts > 1:
                stderr.write(f"\n--- bisca check-bot: start {self.starts} ---\n".encode())
                stderr.flush()
            self._process = subprocess.Popen(
                self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr
            )

    @property
    def exit_code(self) -> int | None:
        """The exit code once the process is over, else ``None``."""
        return None if self._process is None else self._process.poll()

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def describe_exit(self) -> str:
        code = self.exit_code
        if code is None:
            return "still running"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return f"exited with code {code}"

    async def wait_exit(self, seconds: float) -> int | None:
        """Wait up to ``seconds`` for the process to end; its exit code, or ``None``."""
        deadline = time.monotonic() + seconds
        while self.running and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.exit_code

    async def stop(self, grace: float) -> str:
        """Let the process exit on its own for ``grace`` seconds, then terminate it, then kill
        it; says how it ended."""
        if self._process is None:
            return "never started"
        if await self.wait_exit(grace) is not None:
            return f"{self.describe_exit()} after the server closed its stream"
        self._process.terminate()
        if await self.wait_exit(1.0) is None:
            self._process.kill()
            await self.wait_exit(1.0)
        return f"still running {grace:g} s after the server closed the stream; stopped"

    def kill(self) -> None:
        """Kill at once (cleanup after an interrupted run)."""
        if self.running and self._process is not None:
            self._process.kill()

    def stderr_tail(self, lines: int = 5) -> list[str]:
        """The last lines the bot wrote on stderr, for a report on why it stopped."""
        try:
            with open(self.stderr_path, "rb") as file:
                file.seek(0, os.SEEK_END)
                size = file.tell()
                file.seek(max(0, size - 4096))
                text = file.read().decode("utf-8", "replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if line.strip()][-lines:]
