"""Leaderboards: each bot's rating beside its mean result per match with a 95% interval, and
the leaderboard as a table, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

from rich import box
from rich.console import Console, RenderableType
from rich.table import Table

from ._ratings import Rating
from ._standings import (
    MARGIN_GAMES,
    RESULT_LABELS,
    Incidents,
    Standings,
    Tally,
    crosstable_cells,
    standings_rows,
)


def t_quantile_975(df: int) -> float:
    """Student's t quantile for a two-sided 95% interval with ``df`` degrees of freedom.

    Exact table values up to 30, then the Cornish-Fisher expansion around the normal quantile
    (error below 1e-4 there), so the module needs no statistics package.
    """
    table = (
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
        2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
        2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    )  # fmt: skip
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df <= len(table):
        return table[df - 1]
    z = NormalDist().inv_cdf(0.975)
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


@dataclass(frozen=True)
class LeaderboardRow:
    """One bot's line.  ``ci_half`` is the half-width of the 95% confidence interval of the
    mean result per match (Student's t); ``None`` until the bot has two matches."""

    rank: int
    bot: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    mean_result: float
    ci_half: float | None


def leaderboard_row(
    rank: int, bot: str, rating: Rating, matches: int, mean: float, m2: float
) -> LeaderboardRow:
    """A row from a bot's rating and the running mean and sum of squared deviations (Welford)
    of its results."""
    half = None
    if matches >= 2:
        half = t_quantile_975(matches - 1) * math.sqrt(m2 / (matches - 1) / matches)
    return LeaderboardRow(
        rank=rank,
        bot=bot,
        mu=rating.mu,
        sigma=rating.sigma,
        conservative=rating.conservative,
        matches=matches,
        mean_result=mean,
        ci_half=half,
    )


RESULT_UNITS = {"belote": "points", "bestia": "chips"}

#: The widest a table is drawn; a terminal narrower than this wraps the last columns.
TABLE_WIDTH = 120


def text_lines(renderable: RenderableType, width: int = TABLE_WIDTH) -> list[str]:
    """A rich renderable as plain lines of text (no colour codes): what the terminal, a pipe
    and the tests all read."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False)
    console.print(renderable)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def _interval(row: LeaderboardRow) -> str:
    mean = f"{row.mean_result:+.1f}"
    if row.ci_half is None:
        return mean
    return (
        f"{mean} ± {row.ci_half:.1f}  "
        f"[{row.mean_result - row.ci_half:+.1f}, {row.mean_result + row.ci_half:+.1f}]"
    )


def leaderboard_table(
    game: str, rows: Sequence[LeaderboardRow], standings: Standings | None = None
) -> Table:
    """The leaderboard as a rich table: the rating, the matches and (given the standings) the
    wins, draws and losses, the mean margin where the game has one, and the mean result."""
    table = Table(title=f"{game} leaderboard", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("bot")
    for name in ("μ−3σ", "μ", "σ", "matches"):
        table.add_column(name, justify="right")
    margins = standings is not None and game in MARGIN_GAMES
    if standings is not None:
        for name in ("W", "D", "L"):
            table.add_column(name, justify="right")
    if margins:
        table.add_column("mean margin", justify="right")
    unit = RESULT_UNITS.get(game, "result")
    table.add_column(f"mean {unit} per match (95% CI)", no_wrap=True)
    if standings is not None:
        table.add_column("C/T/I/D", justify="right")
    notes = [f"{unit} = {RESULT_LABELS[game]}"] if game in RESULT_LABELS else []
    if margins:
        notes.append("margin = its team's points minus the other team's")
    if standings is not None:
        notes.append(f"W-D-L: {STANDINGS_MEANING}")
        notes.append("C/T/I/D = crashes/timeouts/illegal moves/defaults played, all its seats")
    table.caption = "; ".join(notes) or None
    for row in rows:
        cells = [
            str(row.rank),
            row.bot,
            f"{row.conservative:.2f}",
            f"{row.mu:.2f}",
            f"{row.sigma:.2f}",
            str(row.matches),
        ]
        if standings is not None:
            tally = standings.tallies.get(row.bot, Tally())
            cells += [str(tally.wins), str(tally.draws), str(tally.losses)]
        if standings is not None and margins:
            margin = standings.mean_margin(row.bot)
            cells.append("" if margin is None else f"{margin:+.1f}")
        cells.append(_interval(row))
        if standings is not None:
            cells.append(standings.incidents.get(row.bot, Incidents()).text())
        table.add_row(*cells)
    if not rows:
        table.caption = f"(no rated {game} matches yet)"
    table.caption_justify = "left"
    return table


#: What a win means in every game's standings (docs/leagues.md says the same).
STANDINGS_MEANING = (
    "a bot's seats count as one player, judged by their mean score, as the rating judges them"
)


def crosstable(standings: Standings, order: Sequence[str] = ()) -> Table:
    """The head-to-head table: each row's bot against each column's, wins-draws-losses and
    the mean margin, the rows in ``order`` (the leaderboard's)."""
    cells = crosstable_cells(standings, order)
    table = Table(box=box.SIMPLE_HEAD)
    for index, name in enumerate(cells[0]):
        table.add_column(name, justify="left" if index == 0 else "center")
    for row in cells[1:]:
        table.add_row(*row)
    return table


def render_table(
    game: str, rows: Sequence[LeaderboardRow], standings: Standings | None = None
) -> list[str]:
    """The leaderboard as lines of text; with the standings, its head-to-head table below."""
    lines = text_lines(leaderboard_table(game, rows, standings))
    if standings is not None and len(standings.tallies) > 1:
        unit = RESULT_UNITS.get(game, "score")
        lines += [
            "",
            f"{game} head to head (the row's bot against the column's: W-D-L and the mean "
            f"margin in {unit}, its side's score minus the column's)",
        ]
        lines += text_lines(crosstable(standings, [row.bot for row in rows]))
    return lines


def _plain(row: LeaderboardRow, standings: Standings | None) -> dict[str, object]:
    values: dict[str, object] = asdict(row)
    half = row.ci_half
    values["ci_low"] = None if half is None else row.mean_result - half
    values["ci_high"] = None if half is None else row.mean_result + half
    if standings is not None:
        tally = standings.tallies.get(row.bot, Tally())
        values.update(wins=tally.wins, draws=tally.draws, losses=tally.losses)
        values["mean_margin"] = standings.mean_margin(row.bot)
        values.update(asdict(standings.incidents.get(row.bot, Incidents())))
    return values


def render_json(
    game: str, rows: Sequence[LeaderboardRow], standings: Standings | None = None
) -> str:
    """The leaderboard as JSON; with the standings, each row's wins, draws, losses and mean
    margin, and the head-to-head records."""
    document: dict[str, object] = {
        "game": game,
        "unit": RESULT_UNITS.get(game, "score"),
        "result": RESULT_LABELS.get(game, "result"),
        "rows": [_plain(r, standings) for r in rows],
    }
    if standings is not None:
        document["head_to_head"] = {
            row["bot"]: row["head_to_head"] for row in standings_rows(standings)
        }
    return json.dumps(document, indent=2)


CSV_FIELDS = [
    "rank",
    "bot",
    "conservative",
    "mu",
    "sigma",
    "matches",
    "mean_result",
    "ci_half",
    "ci_low",
    "ci_high",
]
STANDINGS_CSV_FIELDS = [
    "wins",
    "draws",
    "losses",
    "mean_margin",
    "crashes",
    "timeouts",
    "illegal_moves",
    "defaults_played",
]


def render_csv(rows: Sequence[LeaderboardRow], standings: Standings | None = None) -> str:
    out = io.StringIO()
    fields = CSV_FIELDS + (STANDINGS_CSV_FIELDS if standings is not None else [])
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        values = _plain(row, standings)
        writer.writerow({name: "" if values[name] is None else values[name] for name in fields})
    return out.getvalue()
