"""The bot under check: its process, its stream to the scripted arena, and every wait for it.

:class:`Harness` serves the bare Play endpoint (:mod:`._arena`), starts the bot command as a
subprocess with ``BISCA_ADDRESS`` and ``BISCA_TOKEN``, reads the Hello that must open each
stream and answers Welcome, and brings the bot back between checks: it waits for a new stream
when the old one ended, or starts the command again if it exited (at most :data:`MAX_STARTS`
times).  Every wait has a deadline: :data:`CONNECT_TIMEOUT_S` for the bot to start and say
hello, :data:`RECONNECT_TIMEOUT_S` to come back after a drop.

The harness runs on grpc.aio's asyncio loop, so its waits for the process are asyncio sleeps
(:func:`wait_exit`, :func:`stop_process`), not the league's trio ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from bisca import wire
from bisca.engine import GAMES
from bisca.server.referee import (
    PROTOCOL_VERSIONS,
    SERVER_VERSION,
    Inbound,
    Malformed,
    RefusedMessage,
    TooLarge,
    Verdict,
    messages,
    verify_hello,
    verify_inbound,
)
from bisca.server.sandbox import (
    BotLauncher,
    BotProcess,
    BotStartError,
    SandboxPolicy,
    SharedDoor,
    bot_socket,
)
from bisca.v1 import arena_pb2 as pb

from . import _script as script
from ._arena import Ended, Link, LinkItem, ScriptedArena
from ._crashes import first_error_report, stderr_text
from ._report import CheckFailed, hello_text, inbound_text, message_summary

#: From starting the command to its Hello (interpreters and gRPC take a while to load).
CONNECT_TIMEOUT_S = 15.0
#: From dropping the stream to the Hello on the new one.
RECONNECT_TIMEOUT_S = 10.0
#: How long the bot has to exit once the server closed its stream at the end.
EXIT_GRACE_S = 3.0
MAX_STARTS = 4
#: The ``bisca.v1.Game`` numbers of the arena's games (to name the one a Hello gets wrong).
_GAME_NUMBERS = frozenset(wire.game_enum(game) for game in GAMES)


class Harness:
    """One bot command, its process and its current welcomed stream (:attr:`link`)."""

    def __init__(self, argv: Sequence[str], log_dir: Path, sandbox: SandboxPolicy) -> None:
        self.argv = list(argv)
        self.log_dir = log_dir
        self.sandbox = sandbox
        self._cleanup = contextlib.ExitStack()
        self.token = "bisca_check_" + secrets.token_urlsafe(12)
        self.arena = ScriptedArena()
        self.process: BotProcess | None = None
        self.link: Link | None = None
        self.bot_name = "bot"
        #: How the bot asked for its events (its last Hello): as they happen (protocol 1, or
        #: 2 with live_events), or inside its seats' next request or end (2's default).  The
        #: checks deliver them so, as the referee would.
        self.live_events = True
        #: Why the bot cannot be reached any more; the checks after it are not run.
        self.unreachable = ""
        #: The last messages sent, named in the report when the bot drops its stream.
        self.recent: deque[str] = deque(maxlen=3)

    @property
    def _process(self) -> BotProcess:
        assert self.process is not None, "the bot was never started"
        return self.process

    # ---- the process's life ---------------------------------------------------------------

    async def serve(self) -> BotProcess:
        """Start the scripted arena and make the bot's process, not started yet: the caller
        starts it where it also cleans up (:meth:`close`)."""
        socket = self._cleanup.enter_context(bot_socket()) if self.sandbox.enabled else None
        address = await self.arena.start(socket=socket)
        # One bot in this arena: it may share its socket with nobody but itself.
        door = None if socket is None else SharedDoor(socket)
        launcher = BotLauncher(address, door, self.sandbox, hidden=[])
        self.process = launcher.process(self.argv, self.token, self.log_dir / "bot")
        return self.process

    async def finish(self) -> str:
        """Close the stream and let the bot exit (or stop it); says how its process ended."""
        process = self._process
        if not process.running:
            return f"{process.describe_exit()} before the checks ended"
        if self.link is not None:
            self.link.close()
        return await stop_process(process, EXIT_GRACE_S)

    async def close(self) -> None:
        if self.process is not None:
            self.process.kill()
        await self.arena.stop()
        self._cleanup.close()

    def stderr_lines(self) -> list[str]:
        process = self._process
        shown = first_error_report(stderr_text(process.stderr_path))
        if shown:  # the bot's own error says more than the last lines around it
            return [
                f"stderr ({process.stderr_path}), its first traceback:",
                *(f"  {line}" for line in shown),
            ]
        tail = process.stderr_tail(5)
        if not tail:
            return [f"(nothing on stderr: {self._process.stderr_path})"]
        return [f"stderr ({self._process.stderr_path}), last lines:", *(f"  {t}" for t in tail)]

    # ---- sending --------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Send a serialized ``ServerMessage`` (built by the referee's builders)."""
        if self.link is not None and self.link.open:
            self.link.write(data)
            self.recent.append(message_summary(pb.ServerMessage.FromString(data)))

    def send(self, message: pb.ServerMessage) -> None:
        self.write(message.SerializeToString())

    # ---- connections ----------------------------------------------------------------------

    async def first_connection(self) -> pb.Hello:
        """The bot's first stream, welcomed: its Hello."""
        try:
            link = await self.await_link(CONNECT_TIMEOUT_S, "to BISCA_ADDRESS after it started")
        except CheckFailed:
            if self._process.running:
                self.unreachable = "the bot never connected"
            raise
        hello = await self.handshake(link, CONNECT_TIMEOUT_S)
        self.link = link
        return hello

    async def drop_and_reconnect(self, reason: str) -> float:
        """Drop the stream with ``UNAVAILABLE``, and wait for the bot to come back and say
        hello again; returns the seconds it took."""
        old = self.link
        assert old is not None
        old.drop(reason)
        self.link = None
        dropped = time.monotonic()
        link = await self.await_link(RECONNECT_TIMEOUT_S, "after the server dropped its stream")
        await self.handshake(link, max(0.0, dropped + RECONNECT_TIMEOUT_S - time.monotonic()))
        back = time.monotonic() - dropped
        self.link = link
        return back

    async def ensure_link(self) -> str:
        """A live, welcomed connection for the next check: the current one, or the bot back
        after it dropped or exited; returns a note when the command had to be started again."""
        if self.link is not None and self.link.open:
            return ""
        if self.unreachable:
            raise CheckFailed(f"not run: {self.unreachable}")
        self.link = None
        process = self._process
        note = ""
        if process.running:
            seconds, after = RECONNECT_TIMEOUT_S, "after its stream ended"
        else:
            note = self._start_again()
            seconds, after = CONNECT_TIMEOUT_S, "after it was started again"
        try:
            link = await self.await_link(seconds, after)
        except CheckFailed as failure:
            if process.running:
                self.unreachable = "the bot stopped connecting"
            raise CheckFailed(f"not run: {failure.reason}", *failure.details) from None
        await self.handshake(link, CONNECT_TIMEOUT_S)
        self.link = link
        return note

    def _start_again(self) -> str:
        """Start the exited command again, unless it was started too often or cannot be;
        returns the note for the report."""
        process = self._process
        if process.starts >= MAX_STARTS:
            self.unreachable = (
                f"the bot was started {process.starts} times; its process "
                f"{process.describe_exit()} the last time"
            )
            raise CheckFailed(f"not run: {self.unreachable}")
        note = f"the bot process {process.describe_exit()} and was started again"
        try:
            process.start()
        except BotStartError as problem:
            self.unreachable = f"the command could not be started again: {problem}"
            raise CheckFailed(f"not run: {self.unreachable}") from None
        return note

    async def await_link(self, seconds: float, after: str) -> Link:
        """The next stream the bot opens within ``seconds``; fails when the process exits or
        the time is up (``after`` says since when, for the report)."""
        process = self._process
        deadline = time.monotonic() + seconds
        while True:
            with contextlib.suppress(asyncio.QueueEmpty):
                link = self.arena.links.get_nowait()
                if link.open:
                    return link
                continue
            if not process.running:
                raise CheckFailed(
                    f"the bot process {process.describe_exit()} without connecting {after}",
                    *self.stderr_lines(),
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CheckFailed(f"the bot did not connect within {seconds:g} s {after}")
            with contextlib.suppress(TimeoutError):
                link = await asyncio.wait_for(self.arena.links.get(), min(remaining, 0.05))
                if link.open:
                    return link

    async def handshake(self, link: Link, seconds: float) -> pb.Hello:
        """Read the Hello that must open ``link`` within ``seconds`` and answer Welcome, or
        fail (with the error the referee would send, and the stream closed, when the referee
        would refuse it)."""
        item = await next_item(link, time.monotonic() + seconds)
        if item is None:
            link.close()
            raise CheckFailed(f"the bot opened a stream but sent no Hello within {seconds:.1f} s")
        if isinstance(item, Ended):
            raise CheckFailed(f"the stream ended before a Hello: {item.reason}")
        hello = _hello_in(link, item.message)
        self._vet_hello(link, hello)
        self.bot_name = hello.bot_name or "bot"
        self.live_events = hello.protocol_version == pb.PROTOCOL_VERSION_1 or hello.live_events
        welcome = messages.welcome(
            hello.protocol_version,
            self.bot_name,
            SERVER_VERSION,
            f"check-{link.number}",
            live_events=self.live_events,
        )
        link.write(welcome.SerializeToString())
        return hello

    def _vet_hello(self, link: Link, hello: pb.Hello) -> None:
        """Refuse a Hello the referee would refuse (another protocol, a game the arena does
        not have: its own judgement; another token), with the referee's error, and fail
        saying why in the report's words."""
        got = "got: " + hello_text(hello)
        try:
            verify_hello(hello)
        except RefusedMessage as refused:
            if refused.verdict is Verdict.UNSUPPORTED_PROTOCOL:
                reason = (
                    f"the Hello says protocol_version {hello.protocol_version}; the arena "
                    f"speaks {' and '.join(map(str, PROTOCOL_VERSIONS))} "
                    f"(PROTOCOL_VERSION_CURRENT is {pb.PROTOCOL_VERSION_CURRENT})"
                )
            else:
                unknown = [number for number in hello.games if number not in _GAME_NUMBERS]
                reason = f"the Hello names game {unknown[0]}, which is not a game of the arena"
            _refuse(link, refused.answer, reason, got)
        if hello.token != self.token:
            _refuse(
                link,
                messages.unknown_token_error(),
                "the Hello's token is not the one in BISCA_TOKEN",
                got,
            )

    # ---- losing the bot -------------------------------------------------------------------

    async def lost(self, ended: Ended) -> NoReturn:
        """The stream ended in the middle of a check: fail, saying what was sent last and
        whether the bot's process is still there."""
        self.link = None
        process = self._process
        sent = "last messages sent to the bot: " + "; ".join(self.recent)
        if await wait_exit(process, 0.5) is None:
            # (what it wrote before its stream ended is there: an SDK reports the error that
            # ends a bot before it closes the stream, and a loaded machine may take longer than
            # the wait to let the process end)
            raise CheckFailed(
                f"the stream ended ({ended.reason}); the bot process is still running",
                sent,
                *self.stderr_lines(),
            )
        raise CheckFailed(
            f"the stream ended ({ended.reason}): the bot process {process.describe_exit()}",
            sent,
            *self.stderr_lines(),
        )


def _hello_in(link: Link, message: Inbound) -> pb.Hello:
    """The Hello that opens a stream, or the referee's answer to anything else, and a failure
    (the referee would wait on for a Hello after bytes that are not a message; the check
    ends the stream at once)."""
    try:
        parsed = verify_inbound(message)
    except RefusedMessage as refused:
        assert isinstance(message, Malformed | TooLarge)
        _refuse(link, refused.answer, "the first message is not a Hello: " + inbound_text(message))
    if parsed.WhichOneof("kind") != "hello":
        _refuse(
            link,
            messages.hello_required_error(),
            "the first message is not a Hello",
            "got: " + script.one_line(parsed),
        )
    hello: pb.Hello = parsed.hello
    return hello


def _refuse(link: Link, answer: pb.ServerMessage, reason: str, *details: str) -> NoReturn:
    """Answer as the referee would (its ``Error``), end the stream, and fail with ``reason``."""
    link.write(answer.SerializeToString())
    link.close()
    raise CheckFailed(reason, *details)


async def next_item(link: Link, deadline: float) -> LinkItem | None:
    """The next item from ``link``, or ``None`` once ``deadline`` (monotonic) has passed."""
    with contextlib.suppress(asyncio.QueueEmpty):
        return link.take_nowait()
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return None
    try:
        return await asyncio.wait_for(link.take(), remaining)
    except TimeoutError:
        return None


async def wait_exit(process: BotProcess, seconds: float) -> int | None:
    """Wait up to ``seconds`` for the process to end; its exit code, or ``None``."""
    deadline = time.monotonic() + seconds
    while process.running and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return process.exit_code


async def stop_process(process: BotProcess, grace: float) -> str:
    """Let the process exit on its own for ``grace`` seconds, then terminate it, then kill
    it; says how it ended."""
    if process.popen is None:
        return "never started"
    if await wait_exit(process, grace) is not None:
        return f"{process.describe_exit()} after the server closed its stream"
    process.terminate()
    if await wait_exit(process, 1.0) is None:
        process.kill()
        await wait_exit(process, 1.0)
    return f"still running {grace:g} s after the server closed the stream; stopped"
