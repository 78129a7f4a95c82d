"""What the app refuses before any handler runs: a foreign Host, a foreign Origin, a
state-changing request that is not JSON, a body sent too slowly.

* **Host** (DNS rebinding): a page of ``evil.example`` whose name is made to resolve to
  127.0.0.1 talks to the app with ``Host: evil.example``; only the server's own names are
  answered (its listen address, ``localhost``/``127.0.0.1``/``[::1]`` with its port, and the
  names the operator gives with ``--http-host``).
* **Origin** (CSRF, cross-site WebSocket): a request that carries an ``Origin`` must carry the
  app's own.  Browsers send ``Origin`` with every request that is not a GET or HEAD and with
  every WebSocket handshake, so a request without one is not a page's: it is allowed (the
  command-line and scripted clients send none).
* **Content-Type**: a state-changing request must be ``application/json``, a type no page of
  another origin may send without a CORS preflight, which the app never grants.
* **Time**: idle and half-sent connections are aiohttp's keep-alive timer (it runs from the
  connection's start until a request is whole); a body must arrive within ``body_s``.
* **Connections**: at most ``connections_per_client`` open from one peer address
  (``_connections.py``, before any request is read).
* **Pace**: one peer address's requests answered at ``requests_per_client`` a second past a
  burst, the others held (``_pace.py``).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from aiohttp import hdrs, web

from ._json import Problem, body_cut_short

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: Methods that change nothing (the rest must be JSON).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: The names a loopback server always answers to (with its port).
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
#: The uploads whose handler reads its own body, streamed, bounded and timed (a league's
#: submissions, ``_submissions.py``), by path, with the one type each takes: like JSON, a type
#: no page of another origin may send without a preflight.
STREAMED_UPLOADS = {"/api/submissions": "application/gzip"}
#: Listen addresses that are no name of the server (every interface).
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


class Scheme(StrEnum):
    HTTP = "http"
    HTTPS = "https"

    @property
    def default_port(self) -> int:
        return 443 if self is Scheme.HTTPS else 80


@dataclass(frozen=True)
class WebOptions:
    """How the app is served: the names it answers to, its time and size limits, its TLS."""

    #: More names the server answers to (``NAME`` with any of the server's ports implied,
    #: or ``NAME:PORT`` exactly): what a reverse proxy or a DNS name sends as Host.
    hosts: tuple[str, ...] = ()
    #: Seconds a connection may stay idle, or take to send a request's headers.
    idle_s: float = 15.0
    #: Seconds a request's body may take to arrive.
    body_s: float = 10.0
    #: The largest body of a request, bytes.
    max_body: int = 64 * 1024
    #: Connections (HTTP and WebSocket) one peer address may hold open at once: each is a
    #: file descriptor of the process the referee runs in (``_connections.py``).  A browser
    #: holds about 6 to a server and one WebSocket a live page; this leaves room for a few
    #: people behind one NAT address, with many tabs.
    connections_per_client: int = 64
    #: Requests a second one peer address is answered at, past a burst of five seconds of it
    #: (``_pace.py``; 0: not paced, for a front that paces them).  A page's load is 10 to 20
    #: requests, a watched list one every 2 s.
    requests_per_client: float = 50.0
    #: Serve HTTPS with this context (``None``: plain HTTP).
    tls: ssl.SSLContext | None = None

    @property
    def scheme(self) -> Scheme:
        return Scheme.HTTP if self.tls is None else Scheme.HTTPS


def tls_context(cert: Path, key: Path, client_ca: Path | None) -> ssl.SSLContext:
    """The web side's TLS: the gRPC side's certificate, and with ``client_ca`` the same
    mutual TLS (only clients with a certificate it signed)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    if client_ca is not None:
        context.load_verify_locations(client_ca)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def _authorities(name: str, port: int, scheme: Scheme) -> set[str]:
    """How a Host header (or an Origin's authority) names ``name`` on ``port``."""
    name = name.lower()
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"  # a bare IPv6 address
    found = {f"{name}:{port}"}
    if port == scheme.default_port:
        found.add(name)
    return found


@dataclass
class Guard:
    """The middleware of the checks above; its names are known once the port is bound."""

    options: WebOptions
    authorities: frozenset[str] = field(default=frozenset())

    def bound(self, host: str, port: int) -> None:
        names: set[str] = set()
        scheme = self.options.scheme
        listen = [] if host in WILDCARD_HOSTS else [host]
        for name in (*listen, *LOOPBACK_NAMES):
            names |= _authorities(name, port, scheme)
        for given in self.options.hosts:
            head, _, tail = given.rpartition(":")
            if tail.isdigit() and head and not given.endswith("]"):
                names.add(given.lower())
            else:
                names |= _authorities(given, port, scheme)
        self.authorities = frozenset(names)

    def origins(self) -> Iterable[str]:
        return (f"{self.options.scheme}://{name}" for name in self.authorities)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get(hdrs.HOST, "")
        if host.lower() not in self.authorities:
            raise Problem(
                421,
                f"Host {host!r} is not a name of this server; it answers to "
                f"{', '.join(sorted(self.authorities))} (more names: --http-host NAME)",
            )
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is not None and origin.lower() not in set(self.origins()):
            raise Problem(
                403,
                f"Origin {origin!r} is not this app's: {request.method} {request.path} is "
                "answered to the app's own pages only",
            )
        if request.method not in SAFE_METHODS:
            if STREAMED_UPLOADS.get(request.path) == request.content_type:
                return await handler(request)
            if request.content_type != "application/json":
                raise Problem(
                    403,
                    f"{request.method} {request.path}: Content-Type must be application/json, "
                    f"not {request.content_type!r}",
                )
            try:
                async with asyncio.timeout(self.options.body_s):
                    await request.read()  # kept: the handler's read answers from it
            except TimeoutError:
                raise Problem(
                    408, f"the request's body did not arrive within {self.options.body_s:g} s"
                ) from None
            except ConnectionError:
                raise body_cut_short() from None
        return await handler(request)
