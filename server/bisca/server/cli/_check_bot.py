"""``bisca check-bot -- CMD ARG...``: the conformance checks of one bot command."""

from __future__ import annotations

import argparse
import asyncio
import sys

from bisca.server.conformance import CHECKED_GAMES, DEFAULT_TIMEOUT_S, check_bot
from bisca.server.sandbox import BotStartError, SandboxUnavailable, with_start_hint

from ._arena_args import add_sandbox_options, sandbox_policy
from ._args import Commands, folder_path, handle


def add_commands(commands: Commands) -> None:
    check = commands.add_parser(
        "check-bot", help="check that a bot command speaks the protocol (conformance)"
    )
    check.add_argument(
        "--game",
        action="append",
        dest="games",
        choices=CHECKED_GAMES,
        help="a game to check (repeatable; default: every game the bot's Hello lists)",
    )
    clock = check.add_mutually_exclusive_group()
    clock.add_argument(
        "--move-ms",
        type=int,
        metavar="MS",
        help=f"time for each answer ({DEFAULT_TIMEOUT_S * 1000:g}), as `bisca match --move-ms` "
        "but with no time bank: an answer later than this fails the check",
    )
    # The old spelling, in seconds: still read, no longer offered.
    clock.add_argument("--timeout-s", type=float, help=argparse.SUPPRESS)
    check.add_argument("--log-dir", type=folder_path, metavar="DIR", help="for the bot's output")
    add_sandbox_options(check)
    check.add_argument("bot_command", nargs=argparse.REMAINDER, metavar="-- CMD ARG...")
    handle(check, run_check_bot)


def run_check_bot(args: argparse.Namespace) -> int:
    """``bisca check-bot``: 0 when every check passes, 1 when one fails, 2 for a usage error."""
    argv = list(args.bot_command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print(
            "bisca check-bot: error: no bot command; usage: "
            "bisca check-bot [--game GAME ...] [--move-ms MS] -- CMD ARG...",
            file=sys.stderr,
        )
        return 2
    games = list(dict.fromkeys(args.games)) if args.games else None
    unknown = [game for game in games or () if game not in CHECKED_GAMES]
    if unknown:
        print(
            f"bisca check-bot: error: unknown game {', '.join(unknown)}; "
            f"known: {', '.join(CHECKED_GAMES)}",
            file=sys.stderr,
        )
        return 2
    if args.move_ms is not None:
        timeout_s, option = args.move_ms / 1000, "--move-ms"
    elif args.timeout_s is not None:
        timeout_s, option = args.timeout_s, "--timeout-s"
    else:
        timeout_s, option = DEFAULT_TIMEOUT_S, ""
    if not timeout_s > 0:
        print(f"bisca check-bot: error: {option} must be above 0", file=sys.stderr)
        return 2
    if args.log_dir is not None and args.log_dir.exists() and not args.log_dir.is_dir():
        print(f"bisca check-bot: error: --log-dir {args.log_dir} is not a folder", file=sys.stderr)
        return 2
    if args.log_dir is not None:
        try:  # (under a file, it was a traceback: review s59b, M4)
            args.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as problem:
            why = problem.strerror or problem
            print(f"bisca check-bot: error: --log-dir {args.log_dir}: {why}", file=sys.stderr)
            return 2

    def emit(line: str) -> None:
        print(line, flush=True)

    try:
        report = asyncio.run(
            check_bot(argv, games, timeout_s, args.log_dir, emit, sandbox_policy(args))
        )
    except SandboxUnavailable as problem:
        print(f"bisca check-bot: {problem}", file=sys.stderr)
        return 2
    except BotStartError as problem:
        print(
            # (It takes no sample bot's name: the sample bots' hint is not for it.)
            f"bisca check-bot: cannot start {problem.program!r}: "
            + with_start_hint(problem.program, problem.problem, samples=False),
            file=sys.stderr,
        )
        return 2
    return report.exit_code
