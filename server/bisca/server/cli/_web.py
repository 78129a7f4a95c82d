"""``bisca web --data DIR [--store URL]``: the browser app over a data directory, without an
arena.

Leaderboards, the match list and every finished match's replay, read from the directory's
store and logs, or from the store ``--store`` names (a PostgreSQL league's keeps its logs),
while a server may be running on it: the store is only read.  Live matches and a seat at the
table need the arena: ``bisca serve --http HOST:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from bisca.server.errors import StoreError
from bisca.server.web import WebOptions, data_backend, parse_http_address, serving_web

from ._args import Commands, add_data_option, add_store_option, handle

DEFAULT_HTTP = "127.0.0.1:8080"
#: The highest pace ``--http-requests-per-client`` takes (past it, give 0: no pace).
MAX_REQUEST_RATE = 1_000_000


def add_commands(commands: Commands) -> None:
    web = commands.add_parser(
        "web", help="serve the browser app over a data directory (no arena needed)"
    )
    add_data_option(web)
    add_store_option(web)
    web.add_argument(
        "--http", default=DEFAULT_HTTP, metavar="HOST:PORT", help=f"where (default {DEFAULT_HTTP})"
    )
    add_http_host_option(web)
    add_http_client_options(web)
    handle(web, run_web)


def add_http_host_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--http-host",
        type=_http_host,
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="a name the browser app answers to besides its address and localhost (what a "
        "DNS name or a reverse proxy sends as Host); repeatable.  Any other Host is refused",
    )


def _http_host(text: str) -> str:
    """An argument type: a name of ``--http-host`` (an empty one was taken without a word and
    named nothing: review 53)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the name is empty: give NAME or NAME:PORT")
    return text


def add_http_client_options(parser: argparse.ArgumentParser) -> None:
    """What one peer address may hold and ask of the browser app."""
    connections = WebOptions.connections_per_client
    parser.add_argument(
        "--http-connections-per-client",
        type=int,
        default=connections,
        metavar="N",
        help="HTTP and WebSocket connections one peer address may hold open at once (each is "
        f"a file descriptor of the server's; one more is answered 429 and closed; default "
        f"{connections})",
    )
    requests = WebOptions.requests_per_client
    parser.add_argument(
        "--http-requests-per-client",
        type=_request_rate,
        default=requests,
        metavar="RATE",
        help="requests a second one peer address is answered at, past a burst of 5 seconds of "
        "it: the rest wait their turn, and one whose turn is over 10 s away is answered 429 "
        f"(0: no pace, for a reverse proxy that paces them; default {requests:g})",
    )


def _request_rate(text: str) -> float:
    """An argument type: requests a second, 0 (none) or more."""
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of requests a second, got {text!r}"
        ) from None
    if not 0 <= rate <= MAX_REQUEST_RATE:  # NaN and infinity too
        raise argparse.ArgumentTypeError(
            f"expected 0 (no pace) to {MAX_REQUEST_RATE:,} requests a second, got {text}"
        )
    return rate


def check_http_connections_option(args: argparse.Namespace) -> None:
    given = args.http_connections_per_client
    if given < 1:
        args.parser.error(f"--http-connections-per-client must be 1 or more, not {given}")


def run_web(args: argparse.Namespace) -> int:
    try:
        host, port = parse_http_address(args.http)
    except ValueError as problem:
        args.parser.error(str(problem))
    check_http_connections_option(args)
    options = WebOptions(
        hosts=tuple(args.http_host),
        connections_per_client=args.http_connections_per_client,
        requests_per_client=args.http_requests_per_client,
    )

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        async with (
            data_backend(args.data, args.store) as backend,
            serving_web(backend, None, host, port, options) as url,
        ):
            print(f"browser app on {url} (data in {args.data})", flush=True)
            await stop.wait()
            print("bisca: stopping", flush=True)

    try:
        asyncio.run(serve())
    except (OSError, StoreError) as problem:
        print(f"bisca web: {problem}", file=sys.stderr)
        return 1
    return 0
