"""The metrics page: ``GET /metrics`` in Prometheus's text format, on its own address."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ._metrics import REGISTRY


def parse_metrics_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (port 0: any free port); ``ValueError`` naming the expected form."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--metrics {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9464")
    return host, int(port)


async def _metrics(request: web.Request) -> web.Response:
    del request
    page = generate_latest(REGISTRY)
    return web.Response(body=page, headers={"Content-Type": CONTENT_TYPE_LATEST})


@contextlib.asynccontextmanager
async def serving_metrics(host: str, port: int) -> AsyncIterator[str]:
    """Serve ``/metrics`` on ``host:port`` (asyncio) until the block ends; yields its URL.
    The page is small and read-only: aiohttp's keep-alive timer closes idle connections."""
    app = web.Application()
    app.router.add_get("/metrics", _metrics)
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=15)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = runner.addresses[0][1]  # the port, when port 0 let the system choose
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{bound}/metrics"
    finally:
        await runner.cleanup()
