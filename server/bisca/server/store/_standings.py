"""Standings: wins, draws and losses per bot, a head-to-head table with the mean margin of each
pair, and what went wrong for each bot (crashes, timeouts, illegal moves, defaults), counted
from the finished matches' records.

One meaning, the rating's (:mod:`._ratings`), in every game and every column: a bot holding
several seats of one match is *one player* of it, its side the merge of the sides of its
seats, scored by their mean (a Belote team's points; a Bestia bot's mean net chips per seat
held), and sides rank by that score, a side with a forfeited seat last.  So a bot that held
three of five Bestia seats and won one of them big but lost the others is judged by its mean,
as the rating and the mean column judge it (counting its best seat, as before, showed 13 wins
for a bot last in chips).

* A bot **wins** a match when its side ranks first alone, **draws** when it shares first place
  with another side, **loses** otherwise.  Partners (one Belote side) win and lose together.
* **Head to head**, bot A against bot B on different sides: A's side rank against B's, and the
  **margin** of the pair, A's side score minus B's (Belote: points; Bestia: mean net chips).
* A bot's **margin** (Belote): its side's points minus the best other side's: the leaderboard's
  mean is the points a bot's side scored, which a losing bot has plenty of.
* A match with only one side left (every seat the same bot) counts for nobody's results; its
  seats' incidents still count.
* **Incidents**: summed over every seat the bot held.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from bisca.server.records import MatchRecord, MatchStatus, SeatRecord

from ._ratings import side_ranks, sides_of

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
    #: The sum of the margins (head to head: this side's score minus the opponent's).
    margin: float = 0.0

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

    @property
    def mean_margin(self) -> float | None:
        return self.margin / self.played if self.played else None

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
    margins: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    incidents: dict[str, Incidents] = field(default_factory=lambda: defaultdict(Incidents))

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


@dataclass
class Incidents:
    """What went wrong for a bot's seats: its process's crashes, its timeouts, its rejected
    (illegal or malformed) answers, and the moves the referee played for it."""

    crashes: int = 0
    timeouts: int = 0
    illegal_moves: int = 0
    defaults_played: int = 0

    def add(self, seat: SeatRecord) -> None:
        self.crashes += seat.crashes
        self.timeouts += seat.timeouts
        self.illegal_moves += seat.illegal_moves
        self.defaults_played += seat.defaults_played

    def text(self) -> str:
        """``crashes/timeouts/illegal/defaults``, the leaderboard's cell."""
        return f"{self.crashes}/{self.timeouts}/{self.illegal_moves}/{self.defaults_played}"


@dataclass(frozen=True)
class PlayerTotals:
    """One player's matches (every one it is seated in, over or not), its forfeited seats and
    what went wrong in its seats (those of the matches played to their end: a seat's account
    is recorded with its match's result)."""

    matches: int
    forfeits: int
    incidents: Incidents


@dataclass(frozen=True)
class _BotInMatch:
    rank: int
    side: int
    score: float


def _bots_in(match: MatchRecord) -> dict[str, _BotInMatch]:
    """Each bot of a match as the rating sees it: its (merged) side, that side's rank and
    score."""
    sides = sides_of(match.game, match.seats)
    ranks = side_ranks(sides)
    return {
        bot: _BotInMatch(rank=ranks[index], side=index, score=side.score)
        for index, side in enumerate(sides)
        for bot in side.bots
    }


def match_results(match: MatchRecord) -> dict[str, Result]:
    """Each bot's result in one finished match (empty when fewer than two sides are left)."""
    bots = _bots_in(match)
    if len({bot.side for bot in bots.values()}) < 2:
        return {}
    first_sides = {bot.side for bot in bots.values() if bot.rank == 0}
    return {
        name: Result.LOSS if bot.rank else (Result.DRAW if len(first_sides) > 1 else Result.WIN)
        for name, bot in bots.items()
    }


def standings(game: str, matches: Iterable[MatchRecord]) -> Standings:
    """The standings of ``game`` over ``matches`` (others, and unfinished ones, are skipped)."""
    table = Standings(game)
    for match in matches:
        if match.game != game or match.status is not MatchStatus.FINISHED:
            continue
        for seat in match.seats:
            table.incidents[seat.bot_name].add(seat)
        results = match_results(match)
        if not results:
            continue
        table.matches += 1
        bots = _bots_in(match)
        for bot, result in results.items():
            table.tallies[bot].add(result)
            me = bots[bot]
            others = [o for o in bots.values() if o.side != me.side]
            if game in MARGIN_GAMES:
                table.margins[bot].append(me.score - max(o.score for o in others))
            for name, other in bots.items():
                if other.side == me.side:
                    continue
                pair = table.head_to_head[bot][name]
                pair.add(
                    Result.WIN
                    if me.rank < other.rank
                    else Result.DRAW
                    if me.rank == other.rank
                    else Result.LOSS
                )
                pair.margin += me.score - other.score
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
                "incidents": asdict(table.incidents.get(bot, Incidents())),
                "head_to_head": {
                    other: {
                        "wins": record.wins,
                        "draws": record.draws,
                        "losses": record.losses,
                        "mean_margin": record.mean_margin,
                    }
                    for other in table.bots
                    if (record := table.against(bot, other)) is not None
                },
            }
        )
    return rows


def crosstable_cells(table: Standings, order: Sequence[str] = ()) -> Sequence[Sequence[str]]:
    """The head-to-head table as text cells: a header row, then one row per bot in ``order``
    (the leaderboard's; bots it lacks follow in the standings' order), each cell ``W-D-L`` of
    the row's bot against the column's and the pair's mean margin (``·`` on the diagonal,
    blank where they never met)."""
    known = [bot for bot in order if bot in table.tallies]
    bots = known + [bot for bot in table.bots if bot not in known]
    cells: list[list[str]] = [["", *bots]]
    for bot in bots:
        row = [bot]
        for other in bots:
            record = table.against(bot, other) if other != bot else None
            if other == bot:
                row.append("·")
            elif record is None:
                row.append("")
            else:
                row.append(f"{record.text()} {record.mean_margin or 0:+.1f}")
        cells.append(row)
    return cells
