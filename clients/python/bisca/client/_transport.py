"""The gRPC plumbing of :func:`bisca.client.run`: one Play stream, reconnects, nothing else.

Sync grpcio, because a bot is a plain function and a thread blocked in it is exactly what a bot
process wants.  The stream's request side is fed from a queue (:class:`_Outbox`): grpcio pulls
from the iterator on its own thread while this thread reads server messages, hands each to the
:class:`~bisca.client._session.Session` and queues the replies.

Transport failures (the server killed, a reset connection, a peer that stopped answering the
keepalive pings) reconnect with exponential backoff and say hello again with the same token;
the server gives the seats back.  The budget (30 s by default) counts from the first failure
since the last connection that proved itself (stayed up ``Backoff.stable`` seconds after its
Welcome), so a bot that reconnected once has the whole budget again next time, but a server
that welcomes and drops the stream at once, again and again, does not get the bot to reconnect
ten times a second forever.

A server that accepts the stream and never says Welcome (or a listener that never speaks
HTTP/2) would hold the bot forever, silently: a connection with no Welcome within
``welcome_timeout`` (:data:`WELCOME_TIMEOUT`) is logged and failed, and reconnected as any
other failure, within the same budget.

TLS (``grpcs://`` addresses, a CA file, a client certificate: :mod:`bisca.client._tls`) only
changes the channel's credentials; a TLS handshake that cannot succeed is not retried.

What a bot process shows
    A connected bot that prints nothing cannot be told from one that never connected, so
    :func:`run` logs the ``bisca.client`` lines at INFO on stderr ("welcomed ...", "match ...
    started") when the application configured no logging at all (no handler on the way to the
    root logger): the Node and C++ SDKs log them by default too.  An application that set up
    logging gets them its way, once.  A bot that crashed (:class:`BotCrashed` out of ``run``)
    already has its report on stderr (the traceback or the answer): when nothing catches it,
    the process exits with status 1 after one line that says so, not a second copy of the
    traceback (Python's own, through the chained cause), as the Node and C++ starters do.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import grpc

from bisca.v1 import arena_pb2, arena_pb2_grpc

from ._session import Session
from ._text import printable
from ._tls import PathLike, Target, target_for
from ._types import (
    Bot,
    BotCrashed,
    ConnectionLost,
    OnEvent,
    OnMatchEnd,
    OnMatchStart,
    OnRejected,
)

logger = logging.getLogger("bisca.client")

ADDRESS_VARIABLE = "BISCA_ADDRESS"
TOKEN_VARIABLE = "BISCA_TOKEN"

CHANNEL_OPTIONS: tuple[tuple[str, Any], ...] = (
    # Notice a dead or frozen server: ping every 10 s, give up on a ping after 5 s.  Without
    # ping_timeout a frozen peer held its stream for 60 s in the architecture's measurements.
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.http2.ping_timeout_ms", 5_000),
    # A bot waiting for its turn sends no data for a long time: keep pinging anyway.
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 1),
    # Several bots in one process each get their own connection, not one shared subchannel.
    ("grpc.use_local_subchannel_pool", 1),
)
"""The channel options of every bot connection (the server must accept pings every 10 s)."""

WELCOME_TIMEOUT = 30.0
"""Seconds a new connection may take to answer the Hello with a Welcome (the real server
welcomes at once; pairing a bot with a match comes after the Welcome)."""

# Transport-level failures, worth a reconnect.  Anything else (UNIMPLEMENTED, INVALID_ARGUMENT,
# UNAUTHENTICATED, ...) means this server will not talk to this bot, and retrying cannot help.
RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    }
)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Reconnect delays: ``initial`` seconds, doubling up to ``maximum``, for at most ``budget``
    seconds in all since the connection was lost.

    A connection that stayed up ``stable`` seconds after its Welcome has proved itself: when it
    fails, the delays start again from ``initial`` and the budget counts from that failure.
    One that failed sooner has not: the delays go on doubling and the budget keeps counting
    from the earlier failure, so a server that welcomes and drops at once runs it out."""

    initial: float = 0.1
    maximum: float = 2.0
    budget: float = 30.0
    # Why time up, and not "the server sent a match start or a request": a bot waiting to be
    # paired legitimately hears nothing after its Welcome for minutes, and deserves the whole
    # budget when that connection fails; and a server that crashes while resuming a match
    # (welcome, resumed start, request, crash) loops as fast as one that only welcomes, so
    # messages served prove nothing.  10 s is far longer than a welcome-and-drop cycle and far
    # shorter than the time a bot spends in a queue or a match.
    stable: float = 10.0

    def delays(self) -> Iterator[float]:
        delay = self.initial
        while True:
            yield delay
            delay = min(delay * 2, self.maximum)


class _Outbox:
    """The request iterator of one Play call: yields queued messages until closed."""

    _CLOSED = object()

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def put(self, message: arena_pb2.BotMessage) -> None:
        self._queue.put(message)

    def close(self) -> None:
        self._queue.put(self._CLOSED)

    def __iter__(self) -> Iterator[arena_pb2.BotMessage]:
        while True:
            message = self._queue.get()
            if message is self._CLOSED:
                return
            yield message


def resolve(value: str | None, variable: str, what: str) -> str:
    """An explicit value, else the environment variable, else a ``ValueError`` naming both."""
    if value:
        return value
    value = os.environ.get(variable)
    if value:
        return value
    raise ValueError(f"no server {what} given: pass {what}= or set the {variable} variable")


def run(
    bot: Bot,
    *,
    address: str | None = None,
    token: str | None = None,
    name: str,
    version: str = "0",
    games: Iterable[str] = ("belote",),
    on_match_start: OnMatchStart | None = None,
    on_event: OnEvent | None = None,
    on_match_end: OnMatchEnd | None = None,
    on_rejected: OnRejected | None = None,
    live_events: bool = False,
    keep_going: bool = False,
    reconnect: bool = True,
    backoff: Backoff = Backoff(),
    channel_options: Sequence[tuple[str, Any]] = (),
    ca: PathLike | None = None,
    client_cert: PathLike | None = None,
    client_key: PathLike | None = None,
    welcome_timeout: float = WELCOME_TIMEOUT,
) -> None:
    """Connect ``bot`` to a Bisca server and play until the server ends the stream.

    ``address`` is ``"host:port"``, ``"grpcs://host:port"`` (TLS) or ``"unix:/path"``; it and
    ``token`` default to the ``BISCA_ADDRESS`` and ``BISCA_TOKEN`` environment variables (set
    by ``bisca match`` for the bots it launches).  ``name`` and ``version`` are the bot's,
    ``games`` the games it plays.  ``on_event`` sees every event the seat may see, in order,
    before the request that follows it; ``live_events`` asks the server to send each step's
    events as they happen (for a bot that thinks on others' time or draws the table) rather
    than inside the seat's next request, which costs about one more message per decision.

    TLS: ``ca`` (default ``$BISCA_CA``) is the PEM file of the CA that signed the server's
    certificate; giving it, or a ``grpcs://`` address, connects with TLS (verified against the
    system's root certificates when there is no CA file).  ``client_cert`` and ``client_key``
    (``$BISCA_CLIENT_CERT``, ``$BISCA_CLIENT_KEY``) are the bot's certificate and key for a
    server that requires them (mutual TLS).  A file that is missing or not PEM raises
    ``ValueError`` naming it.

    An exception in the bot or a hook is printed with its traceback on stderr and ends the bot
    (:class:`BotCrashed` is raised from here): a bug shows as a crash, which the arena counts
    and ``bisca check-bot`` fails.  An answer that is not an action of the game (``None``, a
    string, ...) is such a bug too, said on stderr.  ``keep_going=True`` plays the first legal
    action instead (a hook's exception is skipped), saying so on stderr each time.  Uncaught,
    :class:`BotCrashed` ends the process with status 1 and one line, not a second traceback.

    Logging goes to the ``bisca.client`` logger; with no logging configured at all, its INFO
    lines are shown on stderr while this runs.

    The bot and the hooks are called on this thread, one message at a time, in the order the
    server sent them (several matches on one connection are answered in turn).

    Returns when the server closes the stream cleanly (how a local match tells its bots to
    exit).  Raises :class:`BotRejected` on a fatal error from the server (unknown token,
    unsupported protocol, ...) and :class:`ConnectionLost` when the connection fails and
    ``reconnect`` is off or the ``backoff`` budget runs out, or at once when a TLS handshake
    fails (a server certificate that cannot be verified, a client certificate refused).
    ``channel_options`` are added to (and override) :data:`CHANNEL_OPTIONS`.  A connection
    whose Welcome does not come within ``welcome_timeout`` seconds is a failed connection
    (logged, then reconnected with the backoff).
    """
    address = resolve(address, ADDRESS_VARIABLE, "address")
    token = resolve(token, TOKEN_VARIABLE, "token")
    target = target_for(address, ca=ca, client_cert=client_cert, client_key=client_key)
    session = Session(  # refuses unknown games before connecting
        bot,
        token=token,
        name=name,
        version=version,
        games=games,
        on_match_start=on_match_start,
        on_event=on_event,
        on_match_end=on_match_end,
        on_rejected=on_rejected,
        live_events=live_events,
        keep_going=keep_going,
    )
    options = list({**dict(CHANNEL_OPTIONS), **dict(channel_options)}.items())
    _exit_quietly_when_crashed()
    with _logging_to_stderr():
        _keep_playing(target, session, options, reconnect, backoff, welcome_timeout)


def _keep_playing(
    target: Target,
    session: Session,
    options: list[tuple[str, Any]],
    reconnect: bool,
    backoff: Backoff,
    welcome_timeout: float,
) -> None:
    """:func:`run`'s loop: play, and reconnect after each failure worth it, within the
    budget."""
    address = target.address
    lost_at: float | None = None
    ever_welcomed = False
    dropped = 0  # connections welcomed, then lost before they proved themselves
    delays = backoff.delays()
    while True:
        attempt = _Attempt()
        try:
            _play(target, session, options, attempt, welcome_timeout)
            return
        except (grpc.RpcError, _NoWelcome) as error:
            if isinstance(error, _NoWelcome):  # a failure worth a reconnect, as a deadline is
                code, detail = grpc.StatusCode.DEADLINE_EXCEEDED, str(error)
            else:
                code = error.code() if isinstance(error, grpc.Call) else None
                detail = error.details() if isinstance(error, grpc.Call) else str(error)
            ever_welcomed = ever_welcomed or session.welcomed
            refusal = target.refusal(str(detail), ever_welcomed=ever_welcomed)
            if refusal is not None:
                raise ConnectionLost(printable(refusal)) from error
            now = time.monotonic()
            proved = attempt.welcomed_at is not None and now - attempt.welcomed_at >= backoff.stable
            if proved or lost_at is None:
                lost_at = now
                delays = backoff.delays()
                dropped = 0
            if attempt.welcomed_at is not None and not proved:
                dropped += 1
            hint = target.hint(str(detail))
            if not reconnect or code not in RETRYABLE:
                raise ConnectionLost(
                    printable(f"connection to {address} failed: {code}: {detail}{hint}")
                ) from error
            delay = next(delays)
            if time.monotonic() - lost_at + delay > backoff.budget:
                raise ConnectionLost(
                    printable(
                        f"could not reconnect to {address} within {backoff.budget:g} s: "
                        f"{code}: {detail}{hint}"
                        + (
                            f" (the server welcomed the bot and then dropped the connection "
                            f"within {backoff.stable:g} s, {dropped} time(s))"
                            if dropped
                            else ""
                        )
                    )
                ) from error
            logger.warning(
                "connection to %s failed (%s: %s); reconnecting in %.2f s",
                address,
                code,
                detail,
                delay,
            )
            time.sleep(delay)


@contextlib.contextmanager
def _logging_to_stderr() -> Iterator[None]:
    """The ``bisca.client`` lines at INFO on stderr for as long as :func:`run` runs, when no
    handler would get them (the application configured no logging); else nothing changes.
    A level the application gave ``bisca.client`` stays."""
    if logger.hasHandlers():
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    if level == logging.NOTSET:  # (the root's WARNING would hide the INFO lines)
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _exit_quietly_when_crashed() -> None:
    """A :class:`BotCrashed` that nothing catches ends the process (status 1) with one line,
    not the traceback again; only while Python's own hook is in place (an application's hook
    is left alone)."""
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _crash_hook


def _crash_hook(
    kind: type[BaseException], error: BaseException, trace: TracebackType | None
) -> None:
    if isinstance(error, BotCrashed):
        print(printable(f"bisca.client: {error}"), file=sys.stderr, flush=True)
        return
    sys.__excepthook__(kind, error, trace)


def _channel(target: Target, options: list[tuple[str, Any]]) -> grpc.Channel:
    if target.credentials is None:
        return grpc.insecure_channel(target.dial, options=options)
    return grpc.secure_channel(target.dial, target.credentials, options=options)


@dataclass(slots=True)
class _Attempt:
    """What one connection attempt got to: when (``time.monotonic()``) its Welcome came, and
    whether it was given up for want of one."""

    welcomed_at: float | None = None
    timed_out: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


class _NoWelcome(Exception):
    """The server did not say Welcome in time (a failed connection, worth a reconnect)."""


def _play(
    target: Target,
    session: Session,
    options: list[tuple[str, Any]],
    attempt: _Attempt,
    welcome_timeout: float = WELCOME_TIMEOUT,
) -> None:
    """One connection: hello, then every server message until the stream ends (raises
    :class:`_NoWelcome` when no Welcome came within ``welcome_timeout`` seconds)."""
    address = target.address
    outbox = _Outbox()
    outbox.put(session.hello())
    with _channel(target, options) as channel:
        stub_type: Any = arena_pb2_grpc.ArenaStub  # generated code carries no annotations
        stub = stub_type(channel)
        responses = stub.Play(iter(outbox))

        def give_up() -> None:  # on the timer's thread: unblocks the loop below
            with attempt.lock:
                if attempt.welcomed_at is not None:
                    return
                attempt.timed_out = True
            logger.warning(
                "no welcome from the server at %s within %g s of connecting; "
                "treating it as a failed connection",
                address,
                welcome_timeout,
            )
            responses.cancel()

        timer = threading.Timer(welcome_timeout, give_up)
        timer.daemon = True
        timer.start()
        try:
            for message in responses:
                for reply in session.handle(message):
                    outbox.put(reply)
                if attempt.welcomed_at is None and session.welcomed:
                    with attempt.lock:
                        attempt.welcomed_at = time.monotonic()
                    timer.cancel()
        except grpc.RpcError as error:
            if attempt.timed_out:
                raise _NoWelcome(
                    f"no welcome from the server within {welcome_timeout:g} s"
                ) from error
            raise
        finally:
            timer.cancel()
            outbox.close()
            responses.cancel()
    if attempt.timed_out:
        raise _NoWelcome(f"no welcome from the server within {welcome_timeout:g} s")
    if not session.welcomed:
        logger.warning("the server closed the stream to %s without a welcome", address)
    else:
        logger.info("the server closed the stream; done")
