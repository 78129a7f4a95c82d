"""A cap of open connections per peer address, counted where a connection is accepted and
where its socket is closed, before any request is read.

aiohttp closes a connection that stays idle (``WebOptions.idle_s``), and a WebSocket that
sends no first message (``FIRST_MESSAGE_S``), but a stranger who keeps opening connections
holds every one it opened meanwhile: each is a file descriptor of the process the referee
runs in (bots' streams, match logs, the store, sandboxed bots' pipes all share its
``RLIMIT_NOFILE``).  With them all taken, a match cannot open its log and fails.  So one peer
address (an IPv6 one by its /64, as every limit per client counts it: ``counted_address``)
holds at most ``per_client`` connections (HTTP and WebSocket alike: a WebSocket is an
upgraded HTTP connection); one more is answered 429 with a sentence naming the address and
the cap, and closed at once, its descriptor freed.

The count sits in a thin protocol around aiohttp's own (each connection's ``RequestHandler``):
it is the one place that sees both a connection's start and its socket's close.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections import Counter
from collections.abc import Callable

from aiohttp import web

from bisca.server.referee import counted_address

#: The option that sets the cap (named in the refusal, so an operator knows what to raise).
OPTION = "--http-connections-per-client"


class ConnectionCap:
    """Connections open per peer address, and the most one address may hold."""

    def __init__(self, per_client: int) -> None:
        if per_client < 1:
            raise ValueError(f"{OPTION} must be 1 or more, not {per_client}")
        self.per_client = per_client
        self._open: Counter[str] = Counter()

    def open_from(self, peer: str) -> int:
        return self._open[peer]

    def admit(self, peer: str) -> bool:
        if self._open[peer] >= self.per_client:
            return False
        self._open[peer] += 1
        return True

    def release(self, peer: str) -> None:
        self._open[peer] -= 1
        if self._open[peer] <= 0:
            del self._open[peer]  # an address gone leaves nothing behind

    def refusal(self, peer: str) -> bytes:
        """The whole answer to a connection over the cap (sent before its request is read)."""
        body = json.dumps(
            {
                "error": f"{peer} already has {self.per_client} connections open to this app, "
                f"the most one address may hold ({OPTION}); this one is closed"
            }
        ).encode()
        head = (
            "HTTP/1.1 429 Too Many Requests\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n"
        )
        return head.encode() + body

    def protocol_factory(self, handlers: Callable[[], asyncio.Protocol]) -> Callable[[], _Counted]:
        """What ``loop.create_server`` takes: ``handlers`` makes aiohttp's protocol of an
        admitted connection (the runner's server)."""
        return lambda: _Counted(self, handlers)


def _peer_address(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    # A TCP peer is (host, port, ...); anything else (none: gone already) shares one count.
    # An IPv6 host is counted by its /64, as every other limit per client counts it (a host
    # is given a whole /64: review s56b held 2,510 descriptors from 80 addresses of one).
    return counted_address(str(peer[0])) if isinstance(peer, tuple) and peer else ""


class _Counted(asyncio.Protocol):
    """One connection: counted while its socket is open, aiohttp's handler inside."""

    def __init__(self, cap: ConnectionCap, handlers: Callable[[], asyncio.Protocol]) -> None:
        self._cap = cap
        self._handlers = handlers
        self._handler: asyncio.Protocol | None = None
        self._peer: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = _peer_address(transport)
        if not self._cap.admit(peer):
            transport.write(self._cap.refusal(peer))
            transport.close()  # after the answer is written: the descriptor goes at once
            return
        self._peer = peer
        self._handler = self._handlers()
        self._handler.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        # asyncio calls this once the socket is closed: its descriptor is free again.
        if self._peer is not None:
            self._cap.release(self._peer)
            self._peer = None
        if self._handler is not None:
            self._handler.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._handler is not None:
            self._handler.data_received(data)

    def eof_received(self) -> bool | None:
        return None if self._handler is None else self._handler.eof_received()

    def pause_writing(self) -> None:
        if self._handler is not None:
            self._handler.pause_writing()

    def resume_writing(self) -> None:
        if self._handler is not None:
            self._handler.resume_writing()


class CappedSite(web.BaseSite):
    """aiohttp's ``TCPSite`` with each connection passed through ``cap`` first.

    A TLS handshake is done before a connection reaches the count, so it is bounded in time
    instead: ``handshake_s``."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        cap: ConnectionCap,
        *,
        tls: ssl.SSLContext | None,
        handshake_s: float,
    ) -> None:
        super().__init__(runner, ssl_context=tls)
        self._host = host
        self._port = port
        self._cap = cap
        self._handshake_s = handshake_s

    @property
    def name(self) -> str:
        scheme = "http" if self._ssl_context is None else "https"
        return f"{scheme}://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        handlers = self._runner.server
        assert handlers is not None, "the runner is set up before its site starts"
        try:
            self._server = await asyncio.get_running_loop().create_server(
                self._cap.protocol_factory(handlers),
                self._host,
                self._port,
                ssl=self._ssl_context,
                backlog=self._backlog,
                ssl_handshake_timeout=self._handshake_s if self._ssl_context else None,
            )
        except OSError as problem:  # which option and address, said (review s57c)
            why = problem.strerror or str(problem)
            raise OSError(f"--http {self._host}:{self._port}: {why}") from None
