"""``bisca ladder show|stderr|stdout``: a league's ladder as its competitors see it from the
command line (``--server URL``), through the app's JSON API (``docs/league-server.md``, "What
the owner sees").

* ``show BOT VERSION``: the version's ratings per game (μ−3σ, μ, σ, rated matches), its rating
  history, its recent matches with their ids, and, for its owner and the operator, its counts
  of what went wrong (timeouts, illegal moves, crashes, defaults, forfeits); ``show BOT``: every
  version of the bot side by side.  Public: without a token, the counts are left out.
* ``stderr BOT VERSION MATCH`` (``stdout`` alike): what the version wrote to that stream in
  one match, printed as it came (to a terminal without its control characters): its owner's
  and the operator's alone.

A refusal is one line naming what was refused and why (the server's own sentence), exit 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from urllib.parse import quote

from rich import box
from rich.table import Table

from bisca.server.datadir import OutputStream
from bisca.server.store import text_lines
from bisca.server.text import printable

from ._args import Commands, handle, version_number, whole
from ._league_client import (
    LeagueCallFailed,
    account_token,
    add_server_options,
    call,
    fetch,
    next_command,
    optional_token,
)

#: What a refusal's HTTP status means, in the error line.
REFUSALS = {400: "bad request", 401: "not signed in", 403: "refused", 404: "not found"}
#: The counts of what went wrong, as the API names them and as a person reads them.
COUNTS = (
    ("timeouts", "timeouts"),
    ("illegal_moves", "illegal moves"),
    ("crashes", "crashes"),
    ("defaults", "defaults"),
    ("forfeits", "forfeits"),
)
#: The width of the tables (wider than a terminal rather than wrapping a row's players).
WIDE = 200
#: The rating history's last points shown per game.
HISTORY_SHOWN = 10


def add_commands(commands: Commands) -> None:
    ladder = commands.add_parser(
        "ladder", help="a league's ladder: a version's ratings and matches, one match's output"
    )
    actions = ladder.add_subparsers(dest="ladder_command", required=True, metavar="ACTION")
    show = actions.add_parser(
        "show",
        help="a version's ratings, rating history, matches and (its owner's) counts of what "
        "went wrong; every version of the bot without VERSION",
    )
    show.add_argument("bot", metavar="BOT")
    show.add_argument(
        "version",
        nargs="?",
        type=version_number,
        metavar="VERSION",
        help="a version: 2 or v2 (default: every version, side by side)",
    )
    show.add_argument(
        "--matches",
        type=whole(0),
        default=10,
        metavar="N",
        help="its newest N matches (10; the server keeps the last 100)",
    )
    show.add_argument("--json", action="store_true", help="the API's answer, as JSON")
    add_server_options(show, token=True)
    handle(show, run_show)
    for stream in (OutputStream.STDERR, OutputStream.STDOUT):
        output = actions.add_parser(
            stream.value, help=f"your version's {stream} in one ladder match, as it was written"
        )
        output.add_argument("bot", metavar="BOT")
        output.add_argument("version", type=version_number, metavar="VERSION", help="2 or v2")
        output.add_argument("match", metavar="MATCH", help="the match's id (`bisca ladder show`)")
        add_server_options(output, token=True)
        handle(output, partial(run_output, stream))


def _path(bot: str, version: int, *rest: str) -> str:
    """``/api/bots/BOT/versions/VERSION/REST...``, each part quoted."""
    parts = [quote(bot, safe=""), "versions", str(version), *(quote(p, safe="") for p in rest)]
    return "/api/bots/" + "/".join(parts)


def _failed(command: str, what: str, problem: LeagueCallFailed) -> int:
    refusal = REFUSALS.get(problem.status or 0, f"HTTP {problem.status}")
    why = f"{refusal} ({problem.status}): {problem}" if problem.status else str(problem)
    print(f"bisca ladder {command}: {what}: {why}", file=sys.stderr)
    return 1


def run_show(args: argparse.Namespace) -> int:
    token = optional_token(args)
    if args.version is None:
        what = f"{args.bot}'s versions"
        try:
            listed = call(args, "GET", f"/api/bots/{quote(args.bot, safe='')}", token=token)
            versions = listed.get("versions")
            numbers = [int(v["version"]) for v in versions] if isinstance(versions, list) else []
            pages = []
            for number in numbers:
                what = f"{args.bot} v{number}'s ladder"
                pages.append(call(args, "GET", _path(args.bot, number, "ladder"), token=token))
        except LeagueCallFailed as problem:
            return _failed("show", what, problem)
        if args.json:
            print(json.dumps({"bot": args.bot, "versions": pages}, indent=2))
        else:
            print("\n".join(versions_lines(args.bot, pages)))
        return 0
    try:
        page = call(args, "GET", _path(args.bot, args.version, "ladder"), token=token)
    except LeagueCallFailed as problem:
        return _failed("show", f"{args.bot} v{args.version}'s ladder", problem)
    if args.json:
        print(json.dumps(page, indent=2))
        return 0
    print("\n".join(ladder_lines(page, args.matches)))
    if _is_dict(page.get("counts")):
        for stream in (OutputStream.STDERR, OutputStream.STDOUT):
            again = next_command(args, "ladder", stream, args.bot, str(args.version), "MATCH")
            print(f"the {stream} of its seats in a match: {again}")
    return 0


def run_output(stream: OutputStream, args: argparse.Namespace) -> int:
    what = f"{args.bot} v{args.version}'s {stream} in match {args.match}"
    try:
        token = account_token(args)
        text = fetch(
            args, "GET", _path(args.bot, args.version, "matches", args.match, stream), token=token
        )
    except LeagueCallFailed as problem:
        return _failed(stream, what, problem)
    written = text.decode(errors="replace")
    if sys.stdout.isatty():
        # A bot's bytes must not drive the terminal that shows them (its title, its clipboard,
        # the lines above); redirected to a file they are kept as the bot wrote them.
        written = printable(written)
    sys.stdout.write(written)
    sys.stdout.flush()
    return 0


def _is_dict(value: object) -> bool:
    return isinstance(value, dict)


def _list(value: object) -> list[dict[str, object]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _number(value: object, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else ""


def _conservative(point: dict[str, object]) -> str:
    mu, sigma = point.get("mu"), point.get("sigma")
    if isinstance(mu, int | float) and isinstance(sigma, int | float):
        return f"{mu - 3 * sigma:.2f}"
    return "?"


def _when(value: object) -> str:
    """An API time (ISO 8601, UTC) to the second, as a person reads it."""
    return str(value)[:19].replace("T", " ") if value else ""


def _counts_text(counts: dict[str, object]) -> str:
    return ", ".join(f"{counts.get(key, 0)} {name}" for key, name in COUNTS)


def _waiting_lines(page: dict[str, object], prefix: str = "") -> list[str]:
    """Why the ladder leaves the version waiting, a line per game (the server's sentences:
    ``waiting: the belote ladder needs bots of 4 different accounts active; 3 have one``)."""
    return [f"{prefix}{entry.get('reason')}" for entry in _list(page.get("waiting"))]


def ladder_lines(page: dict[str, object], shown: int) -> list[str]:
    """One version's ladder page (``GET /api/bots/BOT/versions/N/ladder``) as lines of text."""
    version = page.get("version")
    info = version if isinstance(version, dict) else {}
    lines = [
        f"{info.get('label')}: {info.get('state')} ({info.get('kind')}, owner "
        f"{info.get('owner')}); it plays the ladder as {info.get('player')}"
    ]
    lines += _waiting_lines(page)
    ratings = _list(page.get("ratings"))
    if not ratings:
        lines.append("not rated yet: no ladder match of it has finished")
    else:
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("game")
        for name in ("μ−3σ", "μ", "σ", "matches"):
            table.add_column(name, justify="right")
        for rating in ratings:
            table.add_row(
                str(rating.get("game")),
                _number(rating.get("conservative")),
                _number(rating.get("mu")),
                _number(rating.get("sigma")),
                str(rating.get("matches")),
            )
        lines += text_lines(table)
    history = _list(page.get("history"))
    for game in dict.fromkeys(str(point.get("game")) for point in history):
        points = [_conservative(p) for p in history if p.get("game") == game]
        which = "oldest first"
        if len(points) > HISTORY_SHOWN:
            which += f"; the last {HISTORY_SHOWN} of {len(points)}"
        values = " → ".join(points[-HISTORY_SHOWN:])
        lines.append(f"{game} rating history (μ−3σ after each rated match, {which}): {values}")
    counts = page.get("counts")
    if isinstance(counts, dict):
        lines.append(f"in its {counts.get('matches', 0)} matches: {_counts_text(counts)}")
    else:
        lines.append(
            "its counts of timeouts, illegal moves, crashes and defaults, and its output, are "
            "its owner's alone (give its owner's --token)"
        )
    matches = _list(page.get("matches"))
    if not matches:
        lines.append("no ladder matches yet")
        return lines
    if shown == 0:
        return lines
    more = " (--matches N for more)" if shown < len(matches) else ""
    title = f"its {min(shown, len(matches))} newest matches{more}"
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
    for name in ("match", "game", "status", "finished at", "place", "score", "players"):
        table.add_column(name, justify="right" if name in ("place", "score") else "left")
    for match in matches[:shown]:
        players = match.get("players")
        table.add_row(
            str(match.get("match_id")),
            str(match.get("game")),
            str(match.get("status")) + (" (forfeited)" if match.get("forfeited") else ""),
            _when(match.get("finished_at")),
            "" if match.get("place") is None else str(match.get("place")),
            "" if match.get("score") is None else str(match.get("score")),
            ", ".join(map(str, players)) if isinstance(players, list) else "",
        )
    lines += text_lines(table, width=WIDE)
    return lines


def versions_lines(bot: str, pages: list[dict[str, object]]) -> list[str]:
    """Every version of a bot side by side: state, and its rating in each game."""
    if not pages:
        return [f"{bot} has no versions"]
    owner = any(isinstance(page.get("counts"), dict) for page in pages)
    table = Table(box=box.SIMPLE_HEAD, title=f"{bot} on the ladder", title_justify="left")
    for name in ("version", "state", "game", "μ−3σ", "μ", "σ", "matches"):
        table.add_column(name, justify="left" if name in ("version", "state", "game") else "right")
    if owner:
        for _, name in COUNTS:
            table.add_column(name, justify="right")
    for page in pages:
        version = page.get("version")
        info = version if isinstance(version, dict) else {}
        counts = page.get("counts")
        tally = [str(counts.get(key, 0)) for key, _ in COUNTS] if isinstance(counts, dict) else []
        ratings = _list(page.get("ratings")) or [{}]
        for rating in ratings:
            cells = [
                str(info.get("label")),
                str(info.get("state")),
                str(rating.get("game", "-")),
                _number(rating.get("conservative")) or "not rated",
                _number(rating.get("mu")),
                _number(rating.get("sigma")),
                str(rating.get("matches", "")),
            ]
            table.add_row(*cells, *(tally or ([""] * len(COUNTS) if owner else [])))
    lines = text_lines(table, width=WIDE)
    if owner:
        lines.append("(timeouts ... forfeits: in all of the version's matches, every game)")
    for page in pages:
        version = page.get("version")
        label = version.get("label") if isinstance(version, dict) else None
        lines += _waiting_lines(page, f"{label}: ")
    return lines
