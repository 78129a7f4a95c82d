"""The league commands: ``bisca tournament run|check FILE`` and ``bisca leaderboard``."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from bisca.engine import GAMES, EngineError
from bisca.server.datadir import DataDir
from bisca.server.errors import BiscaError, StoreError, TournamentFileError
from bisca.server.store import (
    is_store_lost,
    render_csv,
    render_json,
    render_table,
    without_password,
)
from bisca.server.tournament import (
    Summary,
    TournamentSpec,
    bot_command_problems,
    default_data_dir,
    load_tournament,
    planned_seed,
    replay_command,
    run_tournament,
    summary_lines,
)
from bisca.server.tournament.distributed import (
    TEXT_CHANGED,
    distributed_summary_lines,
    open_shared_store,
    queue_app,
    run_distributed,
    standing,
    status_lines,
    submit_tournament,
)

from ._arena_args import add_lease_option, add_sandbox_options
from ._args import (
    Commands,
    add_data_option,
    add_store_option,
    bisca_command,
    file_path,
    folder_path,
    handle,
    whole,
)
from ._stores import existing_store

FORMATS = ("table", "json", "csv")
#: Seeds below this a bot finds in minutes by trying each against its own cards.
GUESSABLE_SEEDS = 2**40


def add_commands(commands: Commands) -> None:
    """``tournament run|check`` and ``leaderboard``."""
    tournament = commands.add_parser(
        "tournament", help="run a tournament of local bot commands from a TOML file"
    )
    actions = tournament.add_subparsers(dest="tournament_command", required=True, metavar="ACTION")
    run = actions.add_parser(
        "run",
        help="run or resume tournaments",
        description="Run the tournament each file describes, one after the other; run the "
        "same command again after an interruption to continue where it stopped.",
    )
    run.add_argument("files", type=file_path, nargs="+", metavar="FILE.toml")
    add_sandbox_options(run, limits=False)
    run.add_argument(
        "--data",
        type=folder_path,
        help="data directory, shared by the files' tournaments (default: "
        "bisca-data/tournaments/NAME for each)",
    )
    add_store_option(run)
    run.add_argument(
        "--distributed",
        action="store_true",
        help="queue the matches in the (PostgreSQL) store for `bisca worker` processes on any "
        "machines, and wait for them, showing progress and standings",
    )
    add_lease_option(run)
    run.add_argument(
        "--accept-changed",
        action="store_true",
        help="resume a tournament although a bot's files changed since its matches were "
        "played (without it the run stops, naming the bot): its old results stay",
    )
    handle(run, _run)
    submit = actions.add_parser(
        "submit",
        help="queue a tournament's matches for the workers, and return",
        description="Store the plan and queue every match not played yet; `bisca tournament "
        "status NAME` follows it.  Submitting again queues nothing twice.",
    )
    submit.add_argument("files", type=file_path, nargs="+", metavar="FILE.toml")
    add_store_option(submit, required=True, shared=True)
    handle(submit, _submit)
    status = actions.add_parser("status", help="where a distributed tournament stands")
    status.add_argument("name", metavar="NAME", help="the tournament's name (its file's `name`)")
    add_store_option(status, required=True, shared=True)
    status.add_argument("--limit", type=whole(1), default=10, help="leaderboard rows (10)")
    handle(status, _status)
    check = actions.add_parser("check", help="check a tournament file and print its plan")
    check.add_argument("file", type=file_path, metavar="FILE.toml")
    check.add_argument("--all", action="store_true", help="list every planned match")
    handle(check, _check)

    board = commands.add_parser("leaderboard", help="print a game's leaderboard")
    board.add_argument("--game", required=True, choices=sorted(GAMES))
    add_data_option(board)
    add_store_option(board)
    board.add_argument("--format", choices=FORMATS, default="table")
    board.add_argument("--limit", type=whole(1), help="show the first N bots only")
    handle(board, _leaderboard)


def _leaderboard(args: argparse.Namespace) -> int:
    try:
        store = existing_store(args)
    except StoreError as problem:
        print(f"bisca leaderboard: {problem}", file=sys.stderr)
        return 1
    try:
        with store:
            rows = store.ratings.leaderboard(args.game, args.limit)
            standings = store.matches.standings(args.game)
    except StoreError as problem:  # a store damaged past its schema (review 53)
        print(f"bisca leaderboard: {problem}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(render_json(args.game, rows, standings))
    elif args.format == "csv":
        print(render_csv(rows, standings), end="")
    else:
        for line in render_table(args.game, rows, standings):
            print(line)
    return 0


def _check(args: argparse.Namespace) -> int:
    try:
        spec = load_tournament(args.file)
    except TournamentFileError as problem:
        print(f"bisca tournament: {problem}", file=sys.stderr)
        return 2
    # Without a seed in the file the deals are drawn when the tournament is first run: the
    # plan is shown with a seed of this check's own, its seeds left out.
    slots = planned_seed(spec, None).plan()
    print(
        f"{args.file}: tournament {spec.name}, {spec.game}, {spec.format}, "
        f"{len(spec.pairings())} pairing(s) of {spec.bots_per_match} bots, {len(slots)} matches"
        + (" with duplicate deals" if spec.duplicate else "")
    )
    if spec.seed is None:
        print("  seeds: drawn at random when it is first run, then kept with its plan")
    elif spec.seed < GUESSABLE_SEEDS:
        print(
            f"  seed {spec.seed}: a bot that tries every seed up to it finds it from its own "
            "cards and knows every hand; leave seed out where the deals must stay secret"
        )
    shown = slots if args.all else slots[:8]
    for slot in shown:
        seed = "(drawn when run)" if spec.seed is None else str(slot.seed)
        print(f"  {slot.planned_id}  seed {seed:<20} seats {', '.join(slot.bots)}")
    if len(shown) < len(slots):
        print(f"  ... and {len(slots) - len(shown)} more (--all lists them)")
    # The bots' commands, tried without starting them, read as `tournament run` reads them.
    problems = bot_command_problems(spec)
    for bot in spec.bots:
        print(f"  bot {bot.name}: {problems.get(bot.name, 'its command can start')}")
    if problems:
        print(
            f"bisca tournament: {len(problems)} bot command(s) cannot start (a relative path "
            f"is read from the file's folder {spec.folder}, or from the current folder "
            f"{Path.cwd()} when it names nothing there); `bisca check-bot -- CMD` tries one "
            "fully",
            file=sys.stderr,
        )
        return 2
    return 0


def _continue(args: argparse.Namespace) -> str:
    """How to go on with an interrupted run: the same command, which plays what is left."""
    again = ["tournament", "run", *map(str, args.files)]
    again += ["--data", str(args.data)] if args.data else []
    again += ["--store", without_password(args.store)] if args.store else []
    again += ["--distributed"] if args.distributed else []
    return f"`{bisca_command()} {shlex.join(again)}` continues where it stopped"


def _first_leaf(problem: BaseException) -> BaseException:
    """The first exception a nursery's group holds (``problem`` itself when not a group)."""
    while isinstance(problem, BaseExceptionGroup) and problem.exceptions:
        problem = problem.exceptions[0]
    return problem


def _run(args: argparse.Namespace) -> int:
    """Run the files' tournaments one after the other (every file is checked first), then,
    for several, recap their leaderboards."""
    try:
        specs = [load_tournament(path) for path in args.files]
        if not args.sandbox:  # --no-sandbox: every file's bots run unsandboxed
            specs = [dataclasses.replace(spec, sandbox=False) for spec in specs]
    except TournamentFileError as problem:
        print(f"bisca tournament: {problem}", file=sys.stderr)
        return 2
    if (clash := _same_tournament_twice(args.files, specs)) is not None:
        print(f"bisca tournament: {clash}", file=sys.stderr)
        return 2
    if args.distributed and args.store is None:
        args.parser.error("--distributed needs --store postgresql://... (the shared store)")
    summaries = []
    for spec in specs:
        data_dir = args.data or default_data_dir(spec)
        try:
            if args.distributed:
                summary = asyncio.run(_distributed(spec, args.store, data_dir, args.lease))
            else:
                summary = asyncio.run(
                    run_tournament(
                        spec, data_dir, store=args.store, accept_changed=args.accept_changed
                    )
                )
        except KeyboardInterrupt:
            print(f"\nbisca tournament: interrupted; {_continue(args)}", file=sys.stderr)
            return 130
        except (BiscaError, EngineError, OSError, BaseExceptionGroup) as failure:
            # (A store lost under a running tournament reached here as a nursery's group, a
            # traceback of 98 lines: review s59a, F2.)
            cause = _first_leaf(failure)
            if not isinstance(cause, BiscaError | EngineError | OSError):
                raise
            said = f"bisca tournament: {spec.name}: {cause}"
            if is_store_lost(cause):  # nothing recorded is lost: it goes on from there
                said += f"; {_continue(args)} once the store answers"
            print(said, file=sys.stderr)
            return 1
        lines = (
            distributed_summary_lines(summary, args.store, bisca_command())
            if args.distributed
            else summary_lines(summary, bisca_command())
        )
        for line in lines:
            print(line)
        summaries.append(summary)
    if len(summaries) > 1:
        print()
        print("=" * 30 + " leaderboards " + "=" * 30)
        for summary in summaries:
            print()
            print(f"{summary.name} ({summary.finished} matches)")
            for line in render_table(summary.game, summary.leaderboard, summary.standings):
                print(line)
        print()
        if not args.distributed:
            folders = sorted({str(DataDir(summary.data_dir).matches) for summary in summaries})
            print(f"match logs: {', '.join(folders)}/MATCH_ID/MATCH_ID.binlog")
            last = summaries[-1]
            if last.example_log is not None:
                replay = replay_command(bisca_command(), last.example_log, last.data_dir)
                print(f"  replay one: {replay}")
    return 0 if all(summary.complete for summary in summaries) else 1


async def _distributed(spec: TournamentSpec, url: str, data_dir: Path, lease: float) -> Summary:
    store = open_shared_store(url, data_dir, "a distributed tournament")
    with store:
        return await run_distributed(spec, store, url, sys.stdout, lease)


def _same_tournament_twice(files: Sequence[Path], specs: Sequence[TournamentSpec]) -> str | None:
    """What is wrong when two of ``files`` declare one tournament, else ``None``.  A name is
    its tournament's data directory (``--data`` or the default per name) and its plan's key in
    a store (``--store``), so two files of one name always meet there: the first ran in full
    before the second was refused (review 53)."""
    first_of: dict[str, Path] = {}
    for path, spec in zip(files, specs, strict=True):
        first = first_of.setdefault(spec.name, path)
        if first is path:
            continue
        if first.resolve() == path.resolve():
            return f"{path} is given twice"
        return (
            f"{first} and {path} both declare tournament {spec.name!r}, which one data "
            "directory or store holds once: give each file its own name"
        )
    return None


def _submit(args: argparse.Namespace) -> int:
    try:
        specs = [load_tournament(path) for path in args.files]
    except TournamentFileError as problem:
        print(f"bisca tournament: {problem}", file=sys.stderr)
        return 2
    if (clash := _same_tournament_twice(args.files, specs)) is not None:
        print(f"bisca tournament: {clash}", file=sys.stderr)
        return 2

    async def submit_all() -> None:
        with open_shared_store(args.store, Path("."), "bisca tournament submit") as store:
            for spec in specs:
                done = await submit_tournament(spec, store, args.store)
                if done.text_changed:
                    print(f"{spec.name}: {TEXT_CHANGED}")
                print(
                    f"{spec.name}: {done.planned} planned matches, {done.played} played, "
                    f"{done.queued} queued now, {done.already_queued} queued already; follow it: "
                    f"{bisca_command()} tournament status {spec.name} --store {store.describe()}"
                )

    try:
        asyncio.run(submit_all())
    except BiscaError as problem:
        print(f"bisca tournament: {problem}", file=sys.stderr)
        return 1
    return 0


def _status(args: argparse.Namespace) -> int:
    async def look() -> list[str] | None:
        with open_shared_store(
            args.store, Path("."), "bisca tournament status", upgrade=False
        ) as store:
            stored = await asyncio.to_thread(store.tournaments.get, args.name)
            if stored is None:
                return None
            async with queue_app(args.store).open_async() as app:
                now = await standing(store, app, args.name, stored.game, args.limit)
                return status_lines(now)

    try:
        lines = asyncio.run(look())
    except BiscaError as problem:
        print(f"bisca tournament: {problem}", file=sys.stderr)
        return 1
    if lines is None:
        print(f"bisca tournament: no tournament {args.name!r} in the store", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0
