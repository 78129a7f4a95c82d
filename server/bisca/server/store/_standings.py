"""Standings: wins, draws and losses per bot, a head-to-head table, and (where a game has
sides) the mean margin, counted from the finished matches' records.

The counting is by *bot*, not by seat, because that is what a standings table compares: a bot
holding several seats of one match (a round-robin of two bots at a Bestia table of four, or
both partners of a Belote team) gets one result for it.

* A bot **wins** a match when the seats that finished first all belong to it or to its side
  (its Belote partner wins with it); it **draws** when it shares first place with a seat of
  another side and another bot; it **loses** when none of its seats finished first.  A bot's
  best seat decides: at a Bestia table it holds two seats of, it wins if either came first
  alone.
* **Head to head**, bot A against bot B in a match both played on different sides: A's best
  rank against B's best rank.  Partners are not opponents and count for neither.
* A match with only one bot in it (every seat the same bot) counts for nobody.
* The **margin** (Belote) is the bot's side's points minus the other side's: the leaderboard's
  mean is the points a bot's side scored, which a losing bot has plenty of.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from bisca.server.records import MatchRecord, MatchStatus, SeatRecord

from ._ratings import side_of

#: What a game's result per match is, as the leaderboard's mean column measures it.
RESULT_LABELS = {
    "belote": "what the bot's team scored, not a margin",
    "bestia": "won minus paid, per seat",
}
#: Games whose results are one side's against the other's, so a margin means something.
MARGIN_GAMES = frozenset({"belote"})


class Result(StrEnum):
    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"


@dataclass
class Tally:
    """Wins, draws and losses; ``score`` counts a draw as half a win (as chess does)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, result: Result) -> None:
        if result is Result.WIN:
            self.wins += 1
        elif result is Result.DRAW:
            self.draws += 1
        else:
            self.losses += 1

    @property
    def played(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return self.wins + self.draws / 2

    def text(self) -> str:
        return f"{self.wins}-{self.draws}-{self.losses}"


@dataclass
class Standings:
    """One game's standings over a set of finished matches."""

    game: str
    matches: int = 0
    tallies: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    #: ``head_to_head[a][b]``: a's wins, draws and losses against b.
    head_to_head: dict[str, dict[str, Tally]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(Tally))
    )
    margins: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))

    @property
    def bots(self) -> list[str]:
        """Every bot counted, the best score first (then fewer losses, then the name)."""
        return sorted(
            self.tallies,
            key=lambda bot: (-self.tallies[bot].score, self.tallies[bot].losses, bot),
        )

    def mean_margin(self, bot: str) -> float | None:
        margins = self.margins.get(bot)
        if self.game not in MARGIN_GAMES or not margins:
            return None
        return sum(margins) / len(margins)

    def against(self, bot: str, opponent: str) -> Tally | None:
        """``bot``'s record against ``opponent``, or ``None`` if they never met as opponents."""
        tally = self.head_to_head.get(bot, {}).get(opponent)
        return tally if tally is not None and tally.played else None


@dataclass(frozen=True)
class _BotInMatch:
    best_rank: int
    best_side: int
    best_score: int


def _bots_in(match: MatchRecord) -> dict[str, _BotInMatch]:
    seats_of: dict[str, list[SeatRecord]] = defaultdict(list)
    for seat in match.seats:
        seats_of[seat.bot_name].append(seat)
    found = {}
    for bot, seats in seats_of.items():
        best = min(seats, key=lambda seat: (seat.rank, seat.seat))
        found[bot] = _BotInMatch(
            best_rank=best.rank,
            best_side=side_of(match.game, best.seat),
            best_score=best.score,
        )
    return found


def match_results(match: MatchRecord) -> dict[str, Result]:
    """Each bot's result in one finished match (empty when only one bot played it)."""
    bots = _bots_in(match)
    if len(bots) < 2:
        return {}
    first = [seat for seat in match.seats if seat.rank == 0]
    first_sides = {side_of(match.game, seat.seat) for seat in first}
    first_bots = {seat.bot_name for seat in first}
    shared = len(first_sides) > 1 and len(first_bots) > 1
    return {
        bot: Result.LOSS if bot not in first_bots else (Result.DRAW if shared else Result.WIN)
        for bot in bots
    }


def standings(game: str, matches: Iterable[MatchRecord]) -> Standings:
    """The standings of ``game`` over ``matches`` (others, and unfinished ones, are skipped)."""
    table = Standings(game)
    for match in matches:
        if match.game != game or match.status is not MatchStatus.FINISHED:
            continue
        results = match_results(match)
        if not results:
            continue
        table.matches += 1
        bots = _bots_in(match)
        for bot, result in results.items():
            table.tallies[bot].add(result)
            me = bots[bot]
            others = [o for name, o in bots.items() if name != bot and o.best_side != me.best_side]
            if others and game in MARGIN_GAMES:
                table.margins[bot].append(me.best_score - max(o.best_score for o in others))
            for name, other in bots.items():
                if name == bot or other.best_side == me.best_side:
                    continue
                if me.best_rank < other.best_rank:
                    table.head_to_head[bot][name].add(Result.WIN)
                elif me.best_rank == other.best_rank:
                    table.head_to_head[bot][name].add(Result.DRAW)
                else:
                    table.head_to_head[bot][name].add(Result.LOSS)
    return table


def standings_rows(table: Standings) -> list[dict[str, object]]:
    """The standings as plain rows (JSON, CSV, the web app)."""
    rows: list[dict[str, object]] = []
    for bot in table.bots:
        tally = table.tallies[bot]
        rows.append(
            {
                "bot": bot,
                "played": tally.played,
                "wins": tally.wins,
                "draws": tally.draws,
                "losses": tally.losses,
                "score": tally.score,
                "mean_margin": table.mean_margin(bot),
                "head_to_head": {
                    other: {
                        "wins": record.wins,
                        "draws": record.draws,
                        "losses": record.losses,
                    }
                    for other in table.bots
                    if (record := table.against(bot, other)) is not None
                },
            }
        )
    return rows


def crosstable_cells(table: Standings) -> Sequence[Sequence[str]]:
    """The head-to-head table as text cells: a header row, then one row per bot, each cell
    ``W-D-L`` of the row's bot against the column's (``·`` on the diagonal, blank where they
    never met)."""
    bots = table.bots
    cells: list[list[str]] = [["", *bots]]
    for bot in bots:
        row = [bot]
        for other in bots:
            if other == bot:
                row.append("·")
            else:
                record = table.against(bot, other)
                row.append("" if record is None else record.text())
        cells.append(row)
    return cells
