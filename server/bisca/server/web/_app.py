"""The browser app's HTTP server: the JSON API, the static files, and the pages' routes.

One aiohttp application on the running asyncio loop, the loop gRPC and the referee's trio
guest run on (``bisca serve --http``), or on its own over a data directory (``bisca web``).
Every file the app needs is in this package (``static/``): no CDN, no build step.  Any path
that is a page of the app (``/matches/M?step=40&seat=2``) answers the app's one HTML page,
which reads the path itself, so a deep link opens where it points.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from pathlib import Path

from aiohttp import web
from aiohttp.typedefs import Middleware
from aiohttp.web_protocol import RequestPayloadError

from bisca.server.edge import operator
from bisca.server.errors import OperatorError

from ._accounts import AccountsApi
from ._api import Api
from ._backend import Backend
from ._connections import CappedSite, ConnectionCap
from ._guards import Guard, WebOptions
from ._http_log import RequestLog
from ._json import Problem, problem_of
from ._ladder import LadderApi
from ._pace import RequestPace
from ._submissions import SubmissionsApi
from ._table import Tables

log = logging.getLogger("bisca.web")

STATIC = Path(str(resources.files(__package__) / "static"))
#: The first segments of the app's pages (each answers ``index.html``).
PAGES = ("", "leaderboard", "matches", "live", "play", "rules", "settings", "account", "bots")
#: Sent with every answer: the pages load nothing from anywhere else.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: The answer to a request whose body aiohttp could not decode (no byte of it quoted).
MALFORMED_BODY = Problem(
    400, "the request's body could not be read: its chunks or its encoding are malformed"
)


def _problems(store_calls: operator.StoreCalls) -> Middleware:
    """The middleware that answers every failure as JSON with a sentence: a :class:`Problem`,
    a refused operator call, the store lost (503 and when to try again, said once in the log:
    ``store_calls``), aiohttp's own 4xx (an unknown path, a wrong method), and, logged here,
    anything unexpected: never a traceback."""

    @web.middleware
    async def problems(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            with store_calls.answering():
                response = await handler(request)
        except Problem as problem:
            response = _refusal(problem)
        except OperatorError as refused:
            response = _refusal(problem_of(refused))
        except web.HTTPException as problem:
            if problem.status < 400:
                raise
            response = web.json_response(
                {"error": f"{problem.reason}: {request.method} {request.path}"},
                status=problem.status,
            )
        except RequestPayloadError:
            # A body aiohttp's parser refused as it was read (bad chunks, a Content-Encoding
            # that does not decode): the sender's error, answered as one, not logged with a
            # traceback (review s56b, finding 3; aiohttp's log counts it: ``_http_log.py``).
            response = _refusal(MALFORMED_BODY)
        except Exception:
            log.exception("%s %s failed", request.method, request.path)
            response = web.json_response(
                {"error": "the server failed to answer this request (its log says why)"},
                status=500,
            )
        if response.status == 404 and _wants_page(request):
            # A person who follows a wrong link sees the app saying so, not the API's JSON.
            response = web.FileResponse(STATIC / "index.html", status=404)
        if not response.prepared:
            response.headers.update(SECURITY_HEADERS)
            _compress(request, response)
        return response

    return problems


def _refusal(problem: Problem) -> web.Response:
    response = web.json_response({"error": problem.message}, status=problem.status)
    if problem.retry_after_s is not None:
        response.headers["Retry-After"] = str(math.ceil(problem.retry_after_s))
    return response


#: Answers smaller than this go as they are (gzip's header and the CPU cost outweigh it).
COMPRESS_FROM_BYTES = 1024


def _wants_page(request: web.Request) -> bool:
    """A browser's navigation (it accepts HTML) outside the API and the static files."""
    path = request.path
    return (
        request.method == "GET"
        and "text/html" in request.headers.get("Accept", "")
        and not path.startswith(("/api/", "/static/"))
    )


def _compress(request: web.Request, response: web.StreamResponse) -> None:
    """gzip what is worth it for a client that accepts it (a replay's JSON shrinks ~10x)."""
    if isinstance(response, web.WebSocketResponse) or response.status in (101, 204, 304):
        return
    if "gzip" not in request.headers.get("Accept-Encoding", ""):
        return
    if isinstance(response, web.FileResponse) and (
        request.if_modified_since or request.if_none_match or request.if_range
    ):
        # A file may answer such a request with 304 (decided as it is sent), which must not
        # say it is compressed; the browser has the file already anyway.
        return
    # A file's size is known only once it is sent: the app's files are all text, compressed.
    size = None if isinstance(response, web.FileResponse) else response.content_length
    if size is not None and size < COMPRESS_FROM_BYTES:
        return
    response.enable_compression(web.ContentCoding.gzip)


async def _page(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def _static_files() -> Callable[[web.Request], Awaitable[web.FileResponse]]:
    """The handler of ``/static/NAME``: exactly the files the package ships, listed once
    (a name that is not one of them is a 404, whatever dots or links it holds)."""
    files = {
        path.relative_to(STATIC).as_posix(): path for path in STATIC.rglob("*") if path.is_file()
    }

    async def static(request: web.Request) -> web.FileResponse:
        path = files.get(request.match_info["name"])
        if path is None:
            raise Problem(404, f"no file {request.match_info['name']!r} in the app")
        return web.FileResponse(path, headers={"Cache-Control": "no-cache"})

    return static


def web_application(backend: Backend, tables: Tables | None, guard: Guard) -> web.Application:
    # The guard inside the problems' middleware: what it refuses is JSON with the headers too.
    store_calls = operator.StoreCalls(backend.store, log, "the web app")
    per_second = guard.options.requests_per_client
    pace = RequestPace(per_second) if per_second else None
    app = web.Application(
        middlewares=[
            _problems(store_calls),
            *([pace.middleware] if pace else []),
            guard.middleware,
        ],
        client_max_size=guard.options.max_body,
    )
    if pace is not None:
        app.on_shutdown.append(pace.release)
    api = Api(backend, tables, store_calls, pace)
    app.add_routes(api.routes())
    accounts = AccountsApi(backend)
    app.add_routes(accounts.routes())
    submissions = SubmissionsApi(accounts)
    app.add_routes(submissions.routes())
    app.add_routes(LadderApi(submissions).routes())
    app.on_cleanup.append(api.close)
    app.on_cleanup.append(accounts.close)
    app.on_cleanup.append(submissions.close)
    app.router.add_get("/static/{name:.+}", _static_files())
    for page in PAGES:
        app.router.add_get(f"/{page}", _page)
        if page:
            app.router.add_get(f"/{page}/{{rest:.*}}", _page)
    return app


def parse_http_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (port 0: any free port); ``ValueError`` with the expected form."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    return host, int(port)


@contextlib.asynccontextmanager
async def serving_web(
    backend: Backend,
    tables: Tables | None,
    host: str,
    port: int,
    options: WebOptions | None = None,
) -> AsyncIterator[str]:
    """Serve the app on ``host:port`` until the block ends; yields its URL."""
    guard = Guard(options or WebOptions())
    # A stranger's malformed requests are counted there, not each logged with a traceback.
    request_log = RequestLog(log)
    # aiohttp's keep-alive timer runs from the connection's start until a request is whole,
    # and again between requests: it closes idle and half-sent (slowloris) connections alike.
    runner = web.AppRunner(
        web_application(backend, tables, guard),
        access_log=None,
        logger=request_log,
        keepalive_timeout=guard.options.idle_s,
    )
    await runner.setup()
    try:
        cap = ConnectionCap(guard.options.connections_per_client)
        site = CappedSite(
            runner, host, port, cap, tls=guard.options.tls, handshake_s=guard.options.idle_s
        )
        await site.start()
        bound = runner.addresses[0][1]  # the port, when port 0 let the system choose
        guard.bound(host, bound)
        shown = f"[{host}]" if ":" in host else host
        yield f"{guard.options.scheme}://{shown}:{bound}/"
    finally:
        if tables is not None:
            await tables.close()
        await runner.cleanup()
        request_log.close()
