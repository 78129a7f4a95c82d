"""The metrics page: ``GET /metrics`` in Prometheus's text format, on its own address.

Served by prometheus-client's own WSGI application on the standard library's threading WSGI
server (what its ``start_http_server`` does), not by the browser app's aiohttp: the metrics
room is imported by every process that plays a match, and aiohttp costs each of them 0.15 s of
CPU at start (it builds TLS contexts as it is imported).  The page is small and read-only; a
connection that sends nothing for :data:`IDLE_S` is closed, so idle clients hold no thread.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import AsyncIterator
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import make_wsgi_app

from ._metrics import REGISTRY

#: Seconds a connection of the metrics page may stay silent before it is closed.
IDLE_S = 15.0


def parse_metrics_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (port 0: any free port); ``ValueError`` naming the expected form."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--metrics {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9464")
    return host, int(port)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _IPv6Server(_Server):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    timeout = IDLE_S

    def log_message(self, format: str, *args: object) -> None:
        del format, args  # a scrape every few seconds is not worth a log line


@contextlib.asynccontextmanager
async def serving_metrics(host: str, port: int) -> AsyncIterator[str]:
    """Serve ``/metrics`` on ``host:port`` (a thread of its own) until the block ends; yields
    its URL."""
    server_class = _IPv6Server if ":" in host else _Server
    try:
        server = make_server(
            host, port, make_wsgi_app(REGISTRY), server_class, handler_class=_QuietHandler
        )
    except OSError as problem:  # which of a server's addresses, said (review 53)
        raise OSError(f"--metrics {host}:{port}: {problem.strerror or problem}") from None
    serving = threading.Thread(target=server.serve_forever, name="metrics page", daemon=True)
    serving.start()
    try:
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{server.server_port}/metrics"
    finally:
        server.shutdown()
        server.server_close()
        serving.join(timeout=5)
