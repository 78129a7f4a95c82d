"""``bisca serve``: a standing arena for remote bots, operators and spectators (and, with
``--league``, a matchmaker that keeps registered bots playing)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from bisca.server.datadir import DEFAULT_DATA_DIR, DataDir
from bisca.server.edge import ServerConfig, running_server
from bisca.server.errors import ConfigError, StoreError
from bisca.server.league import parse_league_games, start_league
from bisca.server.referee import ServerOptions

from ._args import Commands, handle
from ._config import FileSettings, load_settings


def add_commands(commands: Commands) -> None:
    serve = commands.add_parser("serve", help="run the arena server")
    serve.add_argument(
        "--listen", action="append", metavar="HOST:PORT", help="TCP address (repeatable)"
    )
    serve.add_argument("--unix", metavar="PATH", help="also listen on a unix socket")
    serve.add_argument("--data", type=Path, help=f"data directory (default {DEFAULT_DATA_DIR})")
    serve.add_argument("--config", type=Path, help="settings file (TOML)")
    serve.add_argument(
        "--league",
        nargs="+",
        metavar="GAME[:KEY=VALUE,...]",
        help="run a league of these games: connected bots that play a game are matched and "
        "rated continuously (e.g. --league belote:deals=2 bestia:seats=4,rounds=1)",
    )
    handle(serve, run_serve)


def run_serve(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args.config) if args.config else FileSettings()
    except ConfigError as problem:
        print(f"bisca serve: {problem}", file=sys.stderr)
        return 2
    listen = args.listen or settings.listen or ["127.0.0.1:50051"]
    unix = args.unix or settings.unix
    if unix:
        listen = [*listen, f"unix:{unix}"]
    data_dir = args.data or Path(settings.data_dir or DEFAULT_DATA_DIR)
    try:
        league = parse_league_games(args.league or [])
    except ValueError as problem:
        args.parser.error(str(problem))
    config = ServerConfig(
        data_dir=data_dir,
        listen=listen,
        options=ServerOptions(
            hello_timeout=settings.hello_timeout_s,
            join_timeout=settings.join_timeout_s,
            clock=settings.clock,
            close_ephemeral_after_match=True,
        ),
    )

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        async with running_server(config) as server:
            if league:
                await server.in_trio(start_league, server.referee, league)
            print(f"bisca serving on {', '.join(server.addresses)}; data in {data_dir}", flush=True)
            print(f"admin token in {DataDir(data_dir).admin_token}", flush=True)
            if league:
                print(f"league of {', '.join(league)}: bots that connect are matched", flush=True)
            await stop.wait()
            print("bisca: stopping", flush=True)

    try:
        asyncio.run(serve())
    except (OSError, StoreError) as problem:
        print(f"bisca serve: {problem}", file=sys.stderr)
        return 1
    return 0
