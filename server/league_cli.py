"""The league commands: ``bisca tournament run|check FILE``, ``bisca leaderboard``, and the
``--league`` option of ``bisca serve``.

``bisca.server.cli`` owns the parser and wires these in with :func:`add_league_commands` and
:func:`run_league_command`, so the league's options live beside the code they drive.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from bisca.engine import GAMES, EngineError

FORMATS = ("table", "json", "csv")


def add_league_commands(commands: Any) -> None:
    """Add ``tournament`` and ``leaderboard`` to the ``bisca`` subcommands."""
    from .cli import _whole

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
    run.add_argument(
        "--data",
        type=Path,
        help="data directory, shared by the files' tournaments (default: "
        "bisca-data/tournaments/NAME for each)",
    )
    check = actions.add_parser("check", help="check a tournament file and print its plan")
    check.add_argument("file", type=Path, metavar="FILE.toml")
    check.add_argument("--all", action="store_true", help="list every planned match")

    board = commands.add_parser("leaderboard", help="print a game's leaderboard")
    board.add_argument("--game", required=True, choices=sorted(GAMES))
    board.add_argument("--data", type=Path, default=Path("bisca-data"), help="data directory")
    board.add_argument("--format", choices=FORMATS, default="table")
    board.add_argument("--limit", type=_whole(1), help="show the first N bots only")


def add_league_option(serve: argparse.ArgumentParser) -> None:
    """``bisca serve --league GAME[:KEY=VALUE,...] ...``."""
    serve.add_argument(
        "--league",
        nargs="+",
        metavar="GAME[:KEY=VALUE,...]",
        help="run a league of these games: connected bots that play a game are matched and "
        "rated continuously (e.g. --league belote:deals=2 bestia:seats=4,rounds=1)",
    )


def league_games(values: list[str] | None) -> dict[str, Any]:
    """The games of ``--league`` with their settings (``ValueError`` naming the problem)."""
    from .league import parse_league_games

    return parse_league_games(values or [])


def run_league_command(args: argparse.Namespace) -> int:
    if args.command == "leaderboard":
        return _leaderboard(args)
    if args.tournament_command == "check":
        return _check(args)
    return _run(args)


def _leaderboard(args: argparse.Namespace) -> int:
    from .ratings import render_csv, render_json, render_table
    from .store import Store, StoreError

    if not (args.data / "bisca.sqlite3").exists():
        print(f"bisca leaderboard: no Bisca data in {args.data}", file=sys.stderr)
        return 1
    try:
        store = Store.in_directory(args.data)
    except StoreError as problem:
        print(f"bisca leaderboard: {problem}", file=sys.stderr)
        return 1
    try:
        rows = store.leaderboard(args.game, args.limit)
    finally:
        store.close()
    if args.format == "json":
        print(render_json(args.game, rows))
    elif args.format == "csv":
        print(render_csv(rows), end="")
    else:
        for line in render_table(args.game, rows):
            print(line)
    return 0


def _check(args: argparse.Namespace) -> int:
    from .tournament_file import TournamentFileError, load_tournament

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
    import shlex

    from .ratings import render_table
    from .store import StoreError
    from .tournament import TournamentError, default_data_dir, run_tournament, summary_lines
    from .tournament_file import TournamentFileError, load_tournament

    try:
        specs = [load_tournament(path) for path in args.files]
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
        except (TournamentError, StoreError, EngineError, OSError) as problem:
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
            for line in render_table(summary.game, summary.leaderboard):
                print(line)
        print()
        folders = sorted({str(summary.data_dir / "matches") for summary in summaries})
        print(f"match logs: {', '.join(folders)}/MATCH_ID/MATCH_ID.binlog")
        last = summaries[-1].example_log
        if last is not None:
            print(f"  replay one: bisca replay show {last}")
    return 0 if all(summary.complete for summary in summaries) else 1
