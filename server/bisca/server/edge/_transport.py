"""The gRPC edge (grpc.aio): it only moves messages between sockets and the referee.

Bot streams: every inbound message is handed to the referee through the trio token; every
outbound message is put on the stream's asyncio queue by the referee, already serialized, and
written here as it is.  The
``Play`` method is registered with a deserializer that never fails, so bytes that are not a
``BotMessage`` (or are over the size limit) reach the referee as values it answers with an
error instead of killing the stream.

Operator calls check the admin token, then run the operator functions in trio.  A call that
finds the store lost ends with UNAVAILABLE (``operator.StoreCalls``), not with gRPC's UNKNOWN
and a traceback in the log.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import hmac
import itertools
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import NoReturn, Protocol, TypeVar

import grpc
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from bisca.server.errors import OperatorError
from bisca.server.referee import (
    DOOR_PEER,
    MAX_BOT_MESSAGE_BYTES,
    Inbound,
    Malformed,
    Referee,
    TooLarge,
    counted_peer,
    peer_address,
)
from bisca.v1 import arena_pb2 as pb

from . import _operator as operator
from . import _spectator as spectator
from ._bridge import Mailbox, TrioGuest
from ._spectator import LogView, opened_watch, stop_watching

log = logging.getLogger("bisca.server.transport")

SERVICE = "bisca.v1.Arena"
#: Messages above this size are refused by gRPC itself (the stream ends with
#: RESOURCE_EXHAUSTED); between MAX_BOT_MESSAGE_BYTES and this, the referee answers an error.
TRANSPORT_MAX_MESSAGE_BYTES = 1024 * 1024
#: A bot stream holding this many messages, or bytes, the bot has not read is cut: a bot that
#: sends but never reads (every message it sends may be answered) would otherwise grow the
#: server's memory without bound.  A bot in 64 matches at once stays far below both.
MAX_UNSENT_MESSAGES = 10_000
MAX_UNSENT_BYTES = 16 * 1024 * 1024
#: A stream the referee ends is closed after its last messages are written, or this long
#: after it was ended if its bot does not read them.
CLOSE_GRACE_S = 10.0
#: Bot streams one address may hold cut off and unread: ended by the referee (or cut for their
#: backlog) while gRPC still writes to them, which gRPC keeps until their bot reads that write
#: or its connection goes (``play``: grpc.aio cannot end a call under a pending write), ~47 KB
#: each.  An honest bot reads, so it holds none; past this many the address's new bot streams
#: are refused with RESOURCE_EXHAUSTED (review 44: one client parked 4,703, 178 MB).
MAX_PARKED_PER_PEER = 64
#: Bot streams one address may have open that the referee has not answered yet (its Welcome
#: or its refusal): a stream costs the server its call, its tasks and its wait for a Hello
#: (~13 KB) before anything says whose it is, and one connection can open thousands.  Right
#: tokens are answered within a store lookup, so a burst of bots connecting at once from one
#: address (a machine's many bots over loopback) stays far below it.  A sandboxed bot's address
#: is its door (``_doors.py``), whose connections and calls are capped besides.
MAX_UNANSWERED_PER_PEER = 1024
#: Bot streams the referee has not answered yet from all addresses together: the per-address
#: cap alone does not bound what many addresses cost (an IPv6 client may hold a whole /64).
#: Over it a stream is ended with UNAVAILABLE, which the SDKs retry with backoff, so a bot
#: refused during a flood connects again once the flood's streams are answered or gone.
MAX_UNANSWERED_STREAMS = 4096
#: ... and one sandboxed bot's door (``_doors.py``): a bot needs one stream, two while it
#: connects again; at this many a thousand doors would be needed to fill the total above.
DOOR_UNANSWERED_STREAMS = 4

#: A connection with no call open for this long is closed: what a connection holds before
#: its first stream is a descriptor (``_descriptors.py``); a bot keeps its Play stream open,
#: and a client whose idle channel is closed connects again at its next call.
CONNECTION_IDLE_S = 30.0

SERVER_OPTIONS = [
    # grpc sets SO_REUSEPORT by default: a second server on a port in use was bound beside the
    # first, and the kernel split the clients between the two (review s59b, H1).
    ("grpc.so_reuseport", 0),
    ("grpc.max_receive_message_length", TRANSPORT_MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", 4 * 1024 * 1024),
    # A frozen peer (alive, not answering) is found by keepalive pings; without the ping
    # timeout it held its stream for 60 s (architecture notes).
    ("grpc.keepalive_time_ms", 2_000),
    ("grpc.keepalive_timeout_ms", 1_000),
    ("grpc.http2.ping_timeout_ms", 1_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 1_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 1_000),
    # No bandwidth-delay probing: it grows a stream's receive window to megabytes, and the
    # window is what a stream still being authenticated may make the server hold (a bot's
    # messages are a few hundred bytes; the default 64 KiB window never limits them).
    ("grpc.http2.bdp_probe", 0),
]

Request = TypeVar("Request", bound=Message)
Response = TypeVar("Response", bound=Message)
T = TypeVar("T")


class ServedDoor(Protocol):
    """One sandboxed bot's door as its server sees it (``_doors.py``)."""

    @property
    def path(self) -> Path: ...

    def admit_call(self) -> str:
        """Empty if one more call may be served; else why not (the door is closing by then)."""

    def message_sent(self) -> None:
        """The server wrote the bot a message (which the bot's client answers, with its flow
        control's frames at least)."""


def parse_bot_message(data: bytes) -> Inbound:
    if len(data) > MAX_BOT_MESSAGE_BYTES:
        return TooLarge(len(data))
    try:
        return pb.BotMessage.FromString(data)
    except DecodeError as problem:
        return Malformed(len(data), str(problem) or "undecodable")


class ArenaTransport:
    """The ``bisca.v1.Arena`` service on a grpc.aio server."""

    def __init__(
        self,
        guest: TrioGuest,
        referee: Referee,
        admin_token: str,
        spectator_token: str,
        *,
        max_unsent: int = MAX_UNSENT_MESSAGES,
        max_unsent_bytes: int = MAX_UNSENT_BYTES,
        close_grace: float = CLOSE_GRACE_S,
        max_unanswered_per_peer: int = MAX_UNANSWERED_PER_PEER,
        max_unanswered: int = MAX_UNANSWERED_STREAMS,
        max_parked_per_peer: int = MAX_PARKED_PER_PEER,
    ) -> None:
        self.guest = guest
        self.referee = referee
        self.admin_token = admin_token
        self.spectator_token = spectator_token
        self.max_unsent = max_unsent
        self.max_unsent_bytes = max_unsent_bytes
        self.close_grace = close_grace
        self.max_unanswered_per_peer = max_unanswered_per_peer
        self.max_unanswered = max_unanswered
        self.max_parked_per_peer = max_parked_per_peer
        #: Per peer address, its streams cut off with a write in flight (``play``).
        self._parked: collections.Counter[str] = collections.Counter()
        #: Per peer address, its streams the referee has not answered yet (the total apart).
        self._unanswered: collections.Counter[str] = collections.Counter()
        self._unanswered_total = 0
        self._ids = itertools.count(1)
        self._store_calls = operator.StoreCalls(referee.store, log, "the gRPC service")
        # What every stream hands the referee crosses into trio through one mailbox, in order:
        # what arrives in one turn of the loop crosses at once.
        self._to_referee = Mailbox(guest)

    def handler(self, door: ServedDoor | None = None) -> grpc.GenericRpcHandler:
        """The service's methods; ``door``: served on the bot's door (``_doors.py``), whose
        streams count as that one peer's, ``door:PATH`` (gRPC names a unix socket's peer by
        the path its client chose, or none), held to :data:`DOOR_UNANSWERED_STREAMS`, and
        each message written to them told to the door."""
        return grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "Play": grpc.stream_stream_rpc_method_handler(
                    self.play if door is None else partial(self.play, door=door),
                    request_deserializer=parse_bot_message,
                    # The referee hands serialized ServerMessages (_outgoing.py): no serializer.
                    response_serializer=None,
                ),
                "CreateMatch": self._unary(
                    operator.create_match, pb.CreateMatchRequest, pb.MatchInfo
                ),
                "GetMatch": self._unary(operator.get_match, pb.GetMatchRequest, pb.MatchInfo),
                "ListMatches": self._unary(
                    operator.list_matches, pb.ListMatchesRequest, pb.ListMatchesResponse
                ),
                "GetLeaderboard": self._unary(
                    operator.get_leaderboard, pb.GetLeaderboardRequest, pb.GetLeaderboardResponse
                ),
                "WatchMatch": grpc.unary_stream_rpc_method_handler(
                    self.watch_match,
                    request_deserializer=pb.WatchMatchRequest.FromString,
                    response_serializer=pb.WatchUpdate.SerializeToString,
                ),
            },
        )

    # ---- bots -------------------------------------------------------------------------------

    async def play(
        self,
        request_iterator: object,
        context: grpc.aio.ServicerContext,
        door: ServedDoor | None = None,
    ) -> None:
        if door is None:
            peer = context.peer() or ""
            max_unanswered_per_peer = self.max_unanswered_per_peer
        else:
            peer = f"{DOOR_PEER}:{door.path}"
            max_unanswered_per_peer = min(self.max_unanswered_per_peer, DOOR_UNANSWERED_STREAMS)
        address = peer_address(peer)
        unanswered = self._unanswered
        if unanswered[address] >= max_unanswered_per_peer:
            # Refused before the referee hears of it: nothing of the stream is kept.
            await abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{address} has {unanswered[address]} streams the server has not answered yet "
                f"(at most {max_unanswered_per_peer}); connect again once they are",
            )
        parked = self._parked
        if parked[address] >= self.max_parked_per_peer:
            await abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{address} holds {parked[address]} streams the server ended that their bot "
                "has not read; read them or close their connection before opening more",
            )
        if self._unanswered_total >= self.max_unanswered:
            await abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                f"the server has {self._unanswered_total} bot streams it has not answered yet "
                f"(at most {self.max_unanswered} from all addresses); connect again shortly",
            )
        unanswered[address] += 1
        self._unanswered_total += 1
        connection_id = f"c{next(self._ids)}"
        outbox: asyncio.Queue[bytes | None] = asyncio.Queue()  # None: the stream ends
        referee = self.referee
        max_unsent, max_unsent_bytes = self.max_unsent, self.max_unsent_bytes
        unsent_bytes = 0
        backlog = asyncio.Event()  # too many messages the bot does not read
        ended = asyncio.Event()  # the referee ended the stream, and its grace is over
        # The referee ended the stream: nothing more is read from it (review 43: a bot kept its
        # stream for the close grace by reading nothing, and sent thousands of messages a
        # DATA frame meanwhile, each read and parsed for nothing).
        closing = asyncio.Event()
        # The referee's first word (its Welcome, or the refusal of the Hello).  Until it comes
        # nothing more is read: what a bot pipelines after its Hello stays in gRPC's flow-control
        # window, so a stream whose token is still being judged (a wrong one waits seconds in the
        # throttle) costs the server that window and no more, whatever it sends.
        answered = asyncio.Event()

        def answer() -> None:
            """The referee's first word came, or the stream ended without one: it no longer
            counts against its address."""
            if not answered.is_set():
                answered.set()
                self._unanswered_total -= 1
                _count_down(unanswered, address)

        def send(message: bytes) -> None:
            nonlocal unsent_bytes
            answer()
            if outbox.qsize() < max_unsent and unsent_bytes + len(message) <= max_unsent_bytes:
                unsent_bytes += len(message)
                outbox.put_nowait(message)
            elif not backlog.is_set():
                log.warning(
                    "%s: %d messages (%d bytes) the bot does not read; its stream is cut",
                    connection_id,
                    outbox.qsize(),
                    unsent_bytes,
                )
                backlog.set()

        def close() -> None:
            answer()
            closing.set()
            outbox.put_nowait(None)
            # Its last words wait behind what the bot has not read: one that reads nothing
            # more does not keep the stream past the grace.
            asyncio.get_running_loop().call_later(self.close_grace, ended.set)

        to_referee = self._to_referee
        to_referee.call(
            referee.connection_opened,
            connection_id,
            send,
            close,
            peer,
        )

        async def pump_in() -> None:
            try:
                while not closing.is_set():
                    message = await context.read()
                    if message is grpc.aio.EOF or closing.is_set():
                        break
                    if to_referee.idle and referee.takes_replies_from(connection_id):
                        # The hot path: a welcomed bot's reply is judged, applied, logged and
                        # answered here, in this turn of the loop (no crossing into trio).
                        referee.reply_received(connection_id, message)
                    else:
                        to_referee.call(referee.message_received, connection_id, message)
                    if not answered.is_set():
                        await answered.wait()
            except (asyncio.CancelledError, grpc.aio.AioRpcError, grpc.RpcError):
                pass
            finally:
                outbox.put_nowait(None)

        async def pump_out() -> None:
            nonlocal unsent_bytes
            while (message := await outbox.get()) is not None:
                unsent_bytes -= len(message)
                await context.write(message)
                if door is not None:
                    door.message_sent()

        reader = asyncio.ensure_future(pump_in())
        writer = asyncio.ensure_future(pump_out())
        cut = asyncio.ensure_future(backlog.wait())
        late = asyncio.ensure_future(ended.wait())
        dropped = 0  # messages that waited for the bot when its stream was cut off
        cancelled = False
        try:
            await asyncio.wait((writer, cut, late), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the call ended under us (its bot went, the server stops)
            cancelled = True
            writer.cancel()
            raise
        finally:
            for task in (reader, cut, late):
                task.cancel()
            answer()
            to_referee.call(referee.connection_closed, connection_id)
            # Cut off (the backlog, or the grace ran out): what waits for the bot is dropped,
            # but not the write gRPC has in flight.  grpc.aio cannot cancel its own call, and
            # ends it only once no write is pending: ended under one, its status cannot be sent
            # (gRPC logs two ERRORs, TOO_MANY_OPERATIONS, and the bot never hears the end:
            # review 43's G2).  So the call ends when the bot reads that write, or its
            # connection goes (the call is cancelled then, this task with it); the referee has
            # forgotten the stream already.
            parking = not writer.done() and not cancelled
            if parking:
                while not outbox.empty():
                    dropped += outbox.get_nowait() is not None
                outbox.put_nowait(None)
                parked[address] += 1
            try:
                await asyncio.gather(reader, writer, cut, late, return_exceptions=True)
            finally:
                if parking:
                    _count_down(parked, address)
        if not writer.cancelled() and writer.exception() is not None:
            # A write failed: the call is gone (its bot reset it, its connection dropped).  A
            # status now (abort, or returning) would start a batch gRPC refuses, and it may log
            # that as an ERROR (review 44's F1): the call ends cancelled, as gRPC ended it.
            raise asyncio.CancelledError
        if backlog.is_set():  # ABORTED: the SDKs connect again, and the seats resume
            await abort(
                context,
                grpc.StatusCode.ABORTED,
                f"more than {max_unsent} messages or {max_unsent_bytes} bytes were waiting "
                "for this bot to read them; the stream was cut (connect again to resume)",
            )
        if dropped:
            await abort(
                context,
                grpc.StatusCode.ABORTED,
                f"the server ended this stream; {dropped} messages that waited "
                f"{self.close_grace:g} s for this bot to read them were dropped "
                "(connect again to resume)",
            )

    # ---- operators --------------------------------------------------------------------------

    def _unary(
        self,
        function: Callable[[Referee, Request], Awaitable[Response]],
        request_type: type[Request],
        response_type: type[Response],
    ) -> grpc.RpcMethodHandler:
        async def handle(request: Request, context: grpc.aio.ServicerContext) -> Response:
            self._authorize(context)
            try:
                with self._store_calls.answering():
                    return await self.guest.call(function, self.referee, request)
            except OperatorError as problem:
                await abort(context, getattr(grpc.StatusCode, problem.status), problem.message)

        return grpc.unary_unary_rpc_method_handler(
            handle,
            request_deserializer=request_type.FromString,
            response_serializer=response_type.SerializeToString,
        )

    def _authorize(self, context: grpc.aio.ServicerContext) -> None:
        if not _token_is(context, self.admin_token):
            raise _Unauthenticated()

    # ---- spectators -------------------------------------------------------------------------

    async def watch_match(
        self, request: pb.WatchMatchRequest, context: grpc.aio.ServicerContext
    ) -> None:
        admin = _token_is(context, self.admin_token)
        if not admin and not _token_is(context, self.spectator_token):
            await abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                "watching needs 'authorization: Bearer <spectator or admin token>'",
            )
        if (request.omniscient or request.delay_steps) and not admin:
            await abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "the omniscient view needs the admin token; spectators see the public view",
            )
        updates: asyncio.Queue[pb.WatchUpdate | None] = asyncio.Queue()
        # Counted as the web counts its clients: one client, one count on both fronts.
        peer = counted_peer(context.peer() or "")
        try:
            with self._store_calls.answering():
                watch = await opened_watch(
                    self.guest, self.referee, request, updates.put_nowait, peer
                )
        except OperatorError as problem:
            await abort(context, getattr(grpc.StatusCode, problem.status), problem.message)
        try:
            # Written by hand (not yielded), so that a log view's write can be waited for
            # with a limit: a finished match's watcher that reads nothing is cut.
            if isinstance(watch, LogView):
                cut = await _write_log_view(context, watch)
            else:
                cut = False
                while (update := await updates.get()) is not None:
                    await _write_or_end(context.write(update))
        finally:
            self.guest.run_sync_soon(stop_watching, self.referee, request.match_id, watch)
        if cut:
            await abort(
                context,
                grpc.StatusCode.ABORTED,
                f"this watcher read nothing for {spectator.WATCH_STALL_S:g} s; the rest of "
                f"match {request.match_id} was dropped (watch it again to resume)",
            )


async def _write_log_view(context: grpc.aio.ServicerContext, view: LogView) -> bool:
    """Write a finished match's view update by update, each once the one before is written;
    ``True``: cut, its client reading nothing (``LogView.written``).  A cut call ends when
    the write under way does: gRPC cannot end a call under a pending write (``play``)."""
    while (update := await view.next()) is not None:
        stalled = await _write_or_end(view.written(context.write(update)))
        if stalled is not None:
            await _write_or_end(stalled)
            return True
    return False


async def _write_or_end(write: Awaitable[T]) -> T:
    """``write`` awaited; one that fails means the call is gone (its client reset it, its
    connection dropped): the call ends cancelled, as gRPC ended it, with no status sent (a
    status now starts a batch gRPC refuses, and may log as an ERROR: review 44's F1)."""
    try:
        return await write
    except Exception:
        raise asyncio.CancelledError from None


def _count_down(counts: collections.Counter[str], address: str) -> None:
    """One less for ``address``, which leaves ``counts`` at none (a peer that has gone holds no
    entry)."""
    counts[address] -= 1
    if not counts[address]:
        del counts[address]


#: The most of a call's status details sent: they go back in its trailing metadata, which the
#: client refuses past its limit (8 KiB), and they may quote what the caller sent (a 100 kB
#: match id came back as RESOURCE_EXHAUSTED instead of NOT_FOUND: review 53).
MAX_STATUS_DETAILS = 1_000


async def abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, details: str) -> NoReturn:
    """End the call with ``code`` (grpc's ``abort`` raises; its stubs do not say so)."""
    if len(details) > MAX_STATUS_DETAILS:
        details = details[: MAX_STATUS_DETAILS - 1] + "…"
    await context.abort(code, details)
    raise AssertionError("grpc.aio's abort returned")


def _token_is(context: grpc.aio.ServicerContext, expected: str) -> bool:
    metadata = dict(context.invocation_metadata() or ())
    token = str(metadata.get("authorization", "")).removeprefix("Bearer ").strip()
    return bool(token) and hmac.compare_digest(token.encode(), expected.encode())


class _Unauthenticated(Exception):
    pass


class _DoorCalls(grpc.aio.ServerInterceptor):
    """Every call on a bot's door, whatever its method, is let in by the door first
    (``BotDoor.admit_call``): one refused ends with RESOURCE_EXHAUSTED and the door's reason,
    before its handler reads anything."""

    def __init__(self, door: ServedDoor) -> None:
        self._door = door

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        refused = self._door.admit_call()
        handler = await continuation(handler_call_details)
        if not refused or handler is None:
            return handler

        async def refuse(_request: object, context: grpc.aio.ServicerContext) -> NoReturn:
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, refused)

        # A handler of the call's own kind, so that grpc reads no request it does not need.
        if handler.request_streaming and handler.response_streaming:
            make = grpc.stream_stream_rpc_method_handler
        elif handler.request_streaming:
            make = grpc.stream_unary_rpc_method_handler
        elif handler.response_streaming:
            make = grpc.unary_stream_rpc_method_handler
        else:
            make = grpc.unary_unary_rpc_method_handler
        return make(
            refuse,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class _AuthInterceptor(grpc.aio.ServerInterceptor):
    """Turns a missing or wrong admin token into UNAUTHENTICATED."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner = handler.unary_unary

        async def guarded(request: Message, context: grpc.aio.ServicerContext) -> Message:
            try:
                result: Message = await inner(request, context)
                return result
            except _Unauthenticated:
                await abort(
                    context,
                    grpc.StatusCode.UNAUTHENTICATED,
                    "operator calls need the metadata 'authorization: Bearer <admin token>'",
                )

        return grpc.unary_unary_rpc_method_handler(
            guarded,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


#: The longest path of a unix socket (``sun_path`` holds 108 bytes with its final NUL).
_MAX_SOCKET_PATH = 107


def listen_address_problem(address: str) -> str | None:
    """What is wrong with how ``address`` is written, before grpc reads it: grpc takes a port
    above 65535 modulo 65536 and a missing one as 443, without a word (review 53)."""
    if address.startswith("unix:"):
        path = address.removeprefix("unix:")
        if not path:
            return "a unix socket needs a path (unix:PATH)"
        if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
            return f"a unix socket's path is at most {_MAX_SOCKET_PATH} bytes"
        return None
    host, _, port = address.rpartition(":")
    if not host.strip("[]") or not port.isdigit() or int(port) > 65535:
        return "expected HOST:PORT with a port from 0 to 65535 (e.g. 127.0.0.1:50051) or unix:PATH"
    return None


def cannot_listen_now(address: str) -> str | None:
    """Why ``address`` (``HOST:PORT`` or ``unix:PATH``, well formed) cannot be listened on
    now, as a probe finds it; ``None`` when it can (or its port is 0, any free one).  Asked
    before a server makes its data directory: a server that could not bind had made one,
    with a new key and tokens, for an address it never served (review s59b, M7)."""
    if address.startswith("unix:"):
        path = address.removeprefix("unix:")
        if not Path(path).parent.is_dir():
            return f"no directory {Path(path).parent}"
        return "a server answers on it already" if _answered_on(path) else None
    host, _, port = address.rpartition(":")
    if int(port) == 0:
        return None
    host = host.strip("[]")
    try:
        # Every address the name stands for, as grpc binds each (``localhost`` is 127.0.0.1
        # and ::1: another process on [::1]:P took the clients that resolve it so, review
        # s59d, F4).
        found = [
            (family, where, True)
            for family, _, _, _, where in socket.getaddrinfo(
                host, int(port), type=socket.SOCK_STREAM
            )
        ]
        if host.lower() == "localhost" and socket.has_ipv6:
            # grpc binds ::1 for it too, whatever the hosts file says (if the machine has it).
            found.append((socket.AF_INET6, ("::1", int(port), 0, 0), False))
        for family, where, needed in found:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                # As servers bind (a port left in TIME_WAIT is free), never beside a listener.
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                try:
                    probe.bind(where)
                except OSError as problem:
                    if needed or problem.errno != errno.EADDRNOTAVAIL:
                        raise
    except OSError as problem:
        why = problem.strerror or str(problem)
        return why[:1].lower() + why[1:]  # (as the rest of the sentence it ends)
    return None


def _answered_on(path: str) -> bool:
    """Whether a process accepts connections on the unix socket at ``path``."""
    if not Path(path).is_socket():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


def _listen_problem(address: str) -> str:
    """Why grpc could not listen on ``address``, as far as a probe tells (grpc does not say)."""
    if (found := cannot_listen_now(address)) is not None:
        return found
    if address.startswith("unix:"):
        return "the socket file cannot be created there"
    return "grpc could not bind it"


def arena_grpc_server(
    transport: ArenaTransport,
    connections: int,
    connection_idle_s: float,
    *,
    door: ServedDoor | None = None,
    streams_per_connection: int | None = None,
) -> grpc.aio.Server:
    """A grpc.aio server of the arena's service, not started, holding at most ``connections``
    at once (the rest are closed as they are accepted), each with at most
    ``streams_per_connection`` calls open (``None``: gRPC's default), and closing a connection
    idle for ``connection_idle_s``; ``door``: the bot's door it serves (``_doors.py``), which
    lets each call in first."""
    options: list[tuple[str, int]] = [
        *SERVER_OPTIONS,
        ("grpc.max_allowed_incoming_connections", connections),
        ("grpc.max_connection_idle_ms", round(connection_idle_s * 1000)),
    ]
    if streams_per_connection is not None:
        options.append(("grpc.max_concurrent_streams", streams_per_connection))
    interceptors: list[grpc.aio.ServerInterceptor] = [_AuthInterceptor()]
    if door is not None:
        interceptors.insert(0, _DoorCalls(door))
    server = grpc.aio.server(options=options, interceptors=interceptors)
    server.add_generic_rpc_handlers((transport.handler(door),))
    return server


async def start_grpc_server(
    transport: ArenaTransport,
    addresses: list[str],
    tls: grpc.ServerCredentials | None = None,
    *,
    connections: int,
    connection_idle_s: float = CONNECTION_IDLE_S,
) -> tuple[grpc.aio.Server, list[str]]:
    """A started grpc.aio server listening on ``addresses``; returns it with the bound
    addresses (a TCP port 0 replaced by the port chosen).

    With ``tls``, TCP addresses are served with it and reported as ``grpcs://HOST:PORT`` (what
    the SDKs take to connect with TLS); unix sockets stay plaintext: they are local.  It
    holds at most ``connections`` at once (counted by the caller from the process's raised
    open-files limit: ``_descriptors.py``)."""
    server = arena_grpc_server(transport, connections, connection_idle_s)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (
            SERVICE,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    bound = []
    for address in addresses:
        if (problem := listen_address_problem(address)) is not None:
            raise OSError(f"cannot listen on {address}: {problem}")
        local = address.startswith("unix:")
        if local and _answered_on(address.removeprefix("unix:")):
            # grpc replaces a socket file that is there: another server's clients reached
            # this one, and its stop removed the file from under the other (review s59b, H2).
            raise OSError(
                f"cannot listen on {address}: a server answers on it already (a stale socket "
                "file, nobody answering, is replaced)"
            )
        secure = tls is not None and not local
        try:
            if secure:
                port = server.add_secure_port(address, tls)
            else:
                port = server.add_insecure_port(address)
        except RuntimeError:  # grpc says only "Failed to bind to address ..."
            port = 0
        if port == 0:
            raise OSError(f"cannot listen on {address}: {_listen_problem(address)}")
        if local:
            bound.append(address)
        else:
            host = address.rsplit(":", 1)[0]
            bound.append(f"{'grpcs://' if secure else ''}{host}:{port}")
    await server.start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await health_servicer.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
    log.info("listening on %s", ", ".join(bound))
    return server, bound
