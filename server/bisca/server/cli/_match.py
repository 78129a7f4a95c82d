"""``bisca match``: one local match between bot commands, with an in-process server."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from bisca.engine import GAMES, EngineError
from bisca.server.datadir import LOCAL_DATA_DIR, log_file
from bisca.server.errors import BiscaError
from bisca.server.league import merged_settings
from bisca.server.records import MatchStatus
from bisca.server.referee import MATCH_LOGGER, clock_settings
from bisca.server.sandbox import SAMPLE_BOTS, bot_argv
from bisca.server.text import printable
from bisca.server.tournament import replay_command, result_table, run_local_match

from ._arena_args import add_sandbox_options, sandbox_policy, set_settings, setting
from ._args import Commands, add_data_option, bisca_command, handle, whole


def add_commands(commands: Commands) -> None:
    match = commands.add_parser("match", help="play one local match between bot commands")
    match.add_argument("--game", required=True, choices=sorted(GAMES))
    match.add_argument(
        "--bot",
        action="append",
        required=True,
        metavar="CMD",
        help="a bot command, one per seat in seat order (a sample bot name: "
        f"{', '.join(SAMPLE_BOTS)}); at Bestia their number is the seats unless --set seats=N",
    )
    match.add_argument("--seed", type=whole(0, None))  # its range is the referee's (MAX_SEED)
    match.add_argument("--deals", type=whole(1), help="Belote: deals in the match")
    match.add_argument("--rounds", type=whole(1), help="Bestia: dealing rounds")
    match.add_argument(
        "--set",
        type=setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other game setting (repeatable)",
    )
    match.add_argument(
        "--move-ms", type=whole(1), default=2000, help="time per move (default: %(default)s)"
    )
    match.add_argument(
        "--bank-ms",
        type=whole(0),
        default=10000,
        help="time bank per seat, spent past --move-ms (default: %(default)s)",
    )
    match.add_argument(
        "--timeout-policy",
        default="default",
        metavar="POLICY",
        help="default | forfeit | strikes:N",
    )
    add_data_option(match, default=LOCAL_DATA_DIR)
    add_sandbox_options(match)
    handle(match, run_match)


def run_match(args: argparse.Namespace) -> int:
    given = set_settings(args.set)
    if args.deals is not None:
        given.append((f"--deals {args.deals}", "deals", args.deals))
    if args.rounds is not None:
        given.append((f"--rounds {args.rounds}", "rounds", args.rounds))
    try:
        values = merged_settings(given)
        if args.game == "bestia" and "seats" not in values:
            values["seats"] = len(args.bot)
        settings = GAMES[args.game].settings(values)
        clock = clock_settings(args.move_ms, args.bank_ms, args.timeout_policy)
    except (EngineError, ValueError) as problem:
        args.parser.error(str(problem))
    for seat, command in enumerate(args.bot):
        try:
            bot_argv(command, args.game)  # read as the match will read it, before it starts
        except ValueError as problem:  # its words name the command; the seat is the --bot's
            args.parser.error(f"--bot of seat {seat}: {problem}")
    seats = GAMES[args.game].seats(settings)
    if len(args.bot) != seats:
        args.parser.error(
            f"a {args.game} match with these settings needs {seats} --bot, got {len(args.bot)}"
        )
    # The result table gives a failed match's reason (a bot's stderr with it); the referee's
    # log line would print it a second time.  Only for this match: a caller that runs the
    # command in its process (the tests) keeps its own level.
    match_log = logging.getLogger(MATCH_LOGGER)
    level = match_log.level
    if not args.verbose:
        match_log.setLevel(logging.ERROR)
    try:
        result = asyncio.run(
            run_local_match(
                game=args.game,
                settings=settings,
                bot_commands=args.bot,
                data_dir=args.data,
                seed=args.seed,
                clock=clock,
                sandbox=sandbox_policy(args),
                progress=lambda line: print(printable(line), file=sys.stderr, flush=True),
            )
        )
    except (ValueError, OSError, BiscaError) as problem:  # (OSError: its data directory)
        print(f"bisca match: {problem}", file=sys.stderr)
        return 2
    finally:
        match_log.setLevel(level)
    for line in result_table(result):
        print(printable(line))  # bot names, reasons quoting a bot's stderr
    log = log_file(result.match_dir, result.runner.id)
    if log.exists():  # (to see why a bot lost: review s58e)
        print(f"match log: {printable(str(log))}")
        print(f"replay it: {printable(replay_command(bisca_command(), log, args.data))}")
    return 0 if result.runner.status is MatchStatus.FINISHED else 1
