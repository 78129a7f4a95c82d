"""The league commands: ``bisca tournament run|check FILE`` and ``bisca leaderboard``."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shlex
import sys
from pathlib import Path

from bisca.engine import GAMES, EngineError
from bisca.server.datadir import DataDir
from bisca.server.errors import BiscaError, StoreError, TournamentFileError
from bisca.server.league import default_data_dir, load_tournament, run_tournament, summary_lines
from bisca.server.store import Store, render_csv, render_json, render_table

from ._args import Commands, add_data_option, add_sandbox_options, handle, whole

FORMATS = ("table", "json", "csv")


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
    run.add_argument("files", type=Path, nargs="+", metavar="FILE.toml")
    add_sandbox_options(run, limits=False)
    run.add_argument(
        "--data",
        type=Path,
        help="data directory, shared by the files' tournaments (default: "
        "bisca-data/tournaments/NAME for each)",
    )
    handle(run, _run)
    check = actions.add_parser("check", help="check a tournament file and print its plan")
    check.add_argument("file", type=Path, metavar="FILE.toml")
    check.add_argument("--all", action="store_true", help="list every planned match")
    handle(check, _check)

    board = commands.add_parser("leaderboard", help="print a game's leaderboard")
    board.add_argument("--game", required=True, choices=sorted(GAMES))
    add_data_option(board)
    board.add_argument("--format", choices=FORMATS, default="table")
    board.add_argument("--limit", type=whole(1), help="show the first N bots only")
    handle(board, _leaderboard)


def _leaderboard(args: argparse.Namespace) -> int:
    if not DataDir(args.data).store.exists():
        print(f"bisca leaderboard: no Bisca data in {args.data}", file=sys.stderr)
        return 1
    try:
        store = Store.in_directory(args.data)
    except StoreError as problem:
        print(f"bisca leaderboard: {problem}", file=sys.stderr)
        return 1
    with store:
        rows = store.leaderboard(args.game, args.limit)
        standings = store.standings(args.game)
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
    slots = spec.plan()
    print(
        f"{args.file}: tournament {spec.name}, {spec.game}, {spec.format}, "
        f"{len(spec.pairings())} pairing(s) of {spec.bots_per_match} bots, {len(slots)} matches"
        + (" with duplicate deals" if spec.duplicate else "")
    )
    shown = slots if args.all else slots[:8]
    for slot in shown:
        print(f"  {slot.planned_id}  seed {slot.seed:<20} seats {', '.join(slot.bots)}")
    if len(shown) < len(slots):
        print(f"  ... and {len(slots) - len(shown)} more (--all lists them)")
    return 0


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
    summaries = []
    for spec in specs:
        data_dir = args.data or default_data_dir(spec)
        try:
            summary = asyncio.run(run_tournament(spec, data_dir))
        except KeyboardInterrupt:
            again = ["bisca", "tournament", "run", *map(str, args.files)]
            again += ["--data", str(args.data)] if args.data else []
            print(
                f"\nbisca tournament: interrupted; `{shlex.join(again)}` continues where it "
                "stopped",
                file=sys.stderr,
            )
            return 130
        except (BiscaError, EngineError, OSError) as problem:
            print(f"bisca tournament: {spec.name}: {problem}", file=sys.stderr)
            return 1
        for line in summary_lines(summary):
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
        folders = sorted({str(DataDir(summary.data_dir).matches) for summary in summaries})
        print(f"match logs: {', '.join(folders)}/MATCH_ID/MATCH_ID.binlog")
        last = summaries[-1].example_log
        if last is not None:
            print(f"  replay one: bisca replay show {last}")
    return 0 if all(summary.complete for summary in summaries) else 1
