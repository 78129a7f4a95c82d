"""The ``bisca`` command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_DATA_DIR = "bisca-data"


def _whole(low: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a number of at least {low}, got {value}")
        return value

    return parse


def _setting(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with the value read as an int, a bool (true/false) or a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    value: Any = raw
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        with contextlib.suppress(ValueError):
            value = int(raw)
    return key.strip(), value


def build_parser() -> argparse.ArgumentParser:
    from bisca.client.cli import add_bot_command

    parser = argparse.ArgumentParser(prog="bisca", description="Bisca, a bot arena for card games")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the server does")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="print a short Belote match between random players")
    demo.add_argument("--seed", type=_whole(0), default=2026)
    demo.add_argument("--deals", type=_whole(1), default=4)

    serve = commands.add_parser("serve", help="run the arena server")
    serve.add_argument(
        "--listen", action="append", metavar="HOST:PORT", help="TCP address (repeatable)"
    )
    serve.add_argument("--unix", metavar="PATH", help="also listen on a unix socket")
    serve.add_argument("--data", type=Path, help=f"data directory (default {DEFAULT_DATA_DIR})")
    serve.add_argument("--config", type=Path, help="settings file (TOML)")

    bots = commands.add_parser("bots", help="register and list bots")
    bots_commands = bots.add_subparsers(dest="bots_command", required=True, metavar="ACTION")
    add = bots_commands.add_parser("add", help="register a bot and print its token once")
    add.add_argument("name")
    add.add_argument("--data", type=Path, default=Path(DEFAULT_DATA_DIR))
    listing = bots_commands.add_parser("list", help="list the registered bots")
    listing.add_argument("--data", type=Path, default=Path(DEFAULT_DATA_DIR))

    match = commands.add_parser("match", help="play one local match between bot commands")
    match.add_argument("--game", required=True, choices=("belote", "bestia"))
    match.add_argument(
        "--bot",
        action="append",
        required=True,
        metavar="CMD",
        help="a bot command, one per seat in seat order (a sample bot name: random, greedy)",
    )
    match.add_argument("--seed", type=_whole(0))
    match.add_argument("--deals", type=_whole(1), help="Belote: deals in the match")
    match.add_argument("--rounds", type=_whole(1), help="Bestia: dealing rounds")
    match.add_argument(
        "--set",
        type=_setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other game setting (repeatable)",
    )
    match.add_argument("--move-ms", type=_whole(1), default=2000, help="time per move")
    match.add_argument("--bank-ms", type=_whole(0), default=10000, help="time bank per seat")
    match.add_argument(
        "--timeout-policy",
        default="default",
        metavar="POLICY",
        help="default | forfeit | strikes:N",
    )
    match.add_argument("--data", type=Path, default=Path(DEFAULT_DATA_DIR))

    replay = commands.add_parser("replay", help="verify, show or export match logs")
    replay_commands = replay.add_subparsers(dest="replay_command", required=True, metavar="ACTION")
    verify = replay_commands.add_parser(
        "verify", help="re-run the engine on logs and check every step (exit 0: all agree)"
    )
    verify.add_argument("logs", nargs="+", type=Path, metavar="LOG")
    show = replay_commands.add_parser("show", help="print a match from its log")
    show.add_argument("log", type=Path, metavar="LOG")
    show.add_argument("--seat", type=_whole(0), help="show only what this seat saw")
    show.add_argument("--step", type=_whole(0), help="stop after this step")
    show.add_argument(
        "--interactive",
        "-i",
        action="store_true",
        help="step through: Enter/n next, p previous, a number jumps, q quits",
    )
    export = replay_commands.add_parser("export", help="write a log as JSON")
    export.add_argument("log", type=Path, metavar="LOG")
    export.add_argument("--json", action="store_true", required=True, help="JSON (the only format)")

    check = commands.add_parser(
        "check-bot", help="check that a bot command speaks the protocol (conformance)"
    )
    check.add_argument(
        "--game",
        action="append",
        dest="games",
        choices=("belote", "bestia"),
        help="a game to check (repeatable; default: both)",
    )
    check.add_argument(
        "--timeout-s", type=float, default=2.0, metavar="N", help="time for each answer (2)"
    )
    check.add_argument("--log-dir", type=Path, metavar="DIR", help="for the bot's output")
    check.add_argument("bot_command", nargs=argparse.REMAINDER, metavar="-- CMD ARG...")

    from .watch_cli import add_watch_command

    add_watch_command(commands)

    from .league_cli import add_league_commands, add_league_option

    add_league_option(serve)
    add_league_commands(commands)
    add_bot_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command != "bot":  # the bot command sets up its own logging
        logging.basicConfig(
            level=logging.INFO if args.verbose else logging.WARNING,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    try:
        return _dispatch(parser, args)
    except KeyboardInterrupt:
        return 130


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "demo":
        from ._demo import render_belote_match

        for line in render_belote_match(args.seed, args.deals):
            print(line)
        return 0
    if args.command == "serve":
        return _serve(parser, args)
    if args.command == "bots":
        return _bots(parser, args)
    if args.command == "match":
        return _match(parser, args)
    if args.command in ("tournament", "leaderboard"):
        from .league_cli import run_league_command

        return run_league_command(args)
    if args.command == "watch":
        from .watch_cli import run_watch_command

        return run_watch_command(args)
    if args.command == "replay":
        from .replay_cli import run_replay_command

        return run_replay_command(args)
    if args.command == "check-bot":
        from .conformance import run_check_bot

        return run_check_bot(args)
    if args.command == "bot":
        from bisca.client.cli import run_bot_command

        return run_bot_command(args)
    parser.error(f"unknown command {args.command}")
    return 2


def _bots(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .store import Store, StoreError

    try:
        store = Store.in_directory(args.data)
    except StoreError as problem:
        print(f"bisca bots: {problem}", file=sys.stderr)
        return 1
    try:
        if args.bots_command == "add":
            try:
                token = store.add_bot(args.name)
            except StoreError as problem:
                print(f"bisca bots add: {problem}", file=sys.stderr)
                return 1
            print(f"registered bot {args.name}; its token (shown only this once):")
            print(token)
            return 0
        bots = store.bots()
        if not bots:
            print(f"no bots registered in {args.data}")
        for bot in bots:
            print(f"{bot.name:<32} registered {bot.created_at}")
        return 0
    finally:
        store.close()


def _serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .app import ServerConfig, running_server
    from .config import ConfigError, FileSettings, load_settings
    from .league_cli import league_games
    from .referee import ServerOptions
    from .store import StoreError

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
        league = league_games(args.league)
    except ValueError as problem:
        parser.error(str(problem))
    config = ServerConfig(
        data_dir=data_dir,
        league=league,
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
            print(f"bisca serving on {', '.join(server.addresses)}; data in {data_dir}", flush=True)
            print(f"admin token in {data_dir / 'admin.token'}", flush=True)
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


def _match(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from bisca.engine import GAMES, EngineError

    from .clock import clock_settings
    from .local import result_table, run_local_match
    from .store import StoreError

    values: dict[str, Any] = dict(args.set)
    if args.deals is not None:
        values["deals"] = args.deals
    if args.rounds is not None:
        values["rounds"] = args.rounds
    if args.game == "bestia" and "seats" not in values:
        values["seats"] = len(args.bot)
    try:
        settings = GAMES[args.game].settings(values)
        clock = clock_settings(args.move_ms, args.bank_ms, args.timeout_policy)
    except (EngineError, ValueError) as problem:
        parser.error(str(problem))
    seats = GAMES[args.game].seats(settings)
    if len(args.bot) != seats:
        parser.error(
            f"a {args.game} match with these settings needs {seats} --bot, got {len(args.bot)}"
        )
    try:
        result = asyncio.run(
            run_local_match(
                game=args.game,
                settings=settings,
                bot_commands=args.bot,
                data_dir=args.data,
                seed=args.seed,
                clock=clock,
            )
        )
    except (ValueError, StoreError) as problem:
        print(f"bisca match: {problem}", file=sys.stderr)
        return 2
    for line in result_table(result):
        print(line)
    return 0 if result.runner.status == "finished" else 1


if __name__ == "__main__":
    sys.exit(main())
