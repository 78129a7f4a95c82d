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

from ._ratings import Rating


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


def render_table(game: str, rows: Sequence[LeaderboardRow]) -> list[str]:
    unit = RESULT_UNITS.get(game, "score")
    name_width = max([len("bot"), *(len(r.bot) for r in rows)])
    header = (
        f"{'#':>3}  {'bot':<{name_width}}  {'μ−3σ':>7}  {'μ':>6}  {'σ':>5}  {'matches':>7}  "
        f"{'mean ' + unit + ' per match (95% CI)':<34}"
    )
    header = header.rstrip()
    lines = [f"{game} leaderboard", header, "-" * len(header)]
    for row in rows:
        mean = f"{row.mean_result:+8.1f}"
        if row.ci_half is not None:
            mean += (
                f" ± {row.ci_half:<6.1f} [{row.mean_result - row.ci_half:+.1f}, "
                f"{row.mean_result + row.ci_half:+.1f}]"
            )
        lines.append(
            f"{row.rank:>3}  {row.bot:<{name_width}}  {row.conservative:7.2f}  {row.mu:6.2f}  "
            f"{row.sigma:5.2f}  {row.matches:>7}  {mean}"
        )
    if not rows:
        lines.append(f"{'':>3}  (no rated {game} matches yet)")
    return lines


def _plain(row: LeaderboardRow) -> dict[str, object]:
    values: dict[str, object] = asdict(row)
    half = row.ci_half
    values["ci_low"] = None if half is None else row.mean_result - half
    values["ci_high"] = None if half is None else row.mean_result + half
    return values


def render_json(game: str, rows: Sequence[LeaderboardRow]) -> str:
    return json.dumps(
        {"game": game, "unit": RESULT_UNITS.get(game, "score"), "rows": [_plain(r) for r in rows]},
        indent=2,
    )


def render_csv(rows: Sequence[LeaderboardRow]) -> str:
    out = io.StringIO()
    fields = [
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
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        values = _plain(row)
        writer.writerow({name: "" if values[name] is None else values[name] for name in fields})
    return out.getvalue()
