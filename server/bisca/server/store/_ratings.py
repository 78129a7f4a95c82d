"""Ratings: openskill's ``BradleyTerryPart`` model, one leaderboard per game.

Why this model: the Weng-Lin family rates teams and free-for-alls with ties and keeps an honest
uncertainty σ beside each skill μ; of its models, ``PlackettLuce`` rates a player who finished
4th equal to two players tied for 2nd (a known bug), so the architecture chose
``BradleyTerryPart``, which compares neighbours in the ranking only.

How a match becomes a rating game (docs/leagues.md, "Ratings"):

* **Sides.** Belote seats 0 and 2 play against seats 1 and 3: two sides of two seats each, both
  rated as a team (a side's strength is the sum of its members' μ).  In Bestia every seat plays
  for itself: one side per seat.
* **Results.** A side's score is the game's own measure: Belote's team match points, Bestia's
  net chips.  Sides rank by score, equal scores tie; a side with a forfeited seat ranks last
  (tied with any other such side) whatever its score, as the match runner's ranks do.
* **A bot holding several seats.**  Sides that share a bot are merged into one side, scored by
  the mean of their scores: a bot that held two of Bestia's four seats is rated once, by the mean
  chips of its seats, against the other bots.  A Belote team of one bot (seats 0 and 2) is not a
  merge: it is one side whose two members are the same bot, so its strength is twice that bot's
  μ, as it is at the table; the bot takes the update once.  A match left with fewer than two
  sides (every bot on every side) is not rated.
* **Result per match** (the leaderboard's mean and its 95% confidence interval): each rated
  bot's side score, so Belote shows team points and Bestia mean net chips per seat held.

Everything here is pure: the store calls :func:`rate_match` inside the transaction that records
the match, so a result and its rating update commit together, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import BradleyTerryPart

from bisca.engine import GAMES
from bisca.server.records import SeatRecord

MODEL = BradleyTerryPart()
"""The model with openskill's defaults: μ 25, σ 25/3, β 25/6, τ 25/300 (σ grows by τ before
each match, so a bot's skill may drift and σ never freezes)."""


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """μ − 3σ: a skill the bot is very likely above; the leaderboard is sorted by it."""
        return self.mu - 3 * self.sigma


INITIAL = Rating(MODEL.mu, MODEL.sigma)


@dataclass(frozen=True)
class Side:
    """One side of a match as rated: its members (one per seat, a bot may repeat), the bots
    merged into it, its score and whether one of its seats forfeited."""

    members: tuple[str, ...]
    bots: frozenset[str]
    score: float
    forfeited: bool


@dataclass(frozen=True)
class RatingChange:
    bot: str
    before: Rating
    after: Rating
    rank: int
    result: float


def side_of(game: str, seat: int) -> int:
    """The side a seat plays for: Belote's two partnerships, otherwise every seat alone (the
    engine's game registry says which)."""
    return GAMES[game].side_of(seat)


def sides_of(game: str, seats: Sequence[SeatRecord]) -> list[Side]:
    """The rated sides of a finished match (see the module's notes on merging)."""
    by_side: dict[int, list[SeatRecord]] = {}
    for record in sorted(seats, key=lambda r: r.seat):
        by_side.setdefault(side_of(game, record.seat), []).append(record)
    raw = [
        Side(
            members=tuple(r.bot_name for r in records),
            bots=frozenset(r.bot_name for r in records),
            score=sum(r.score for r in records) / len(records),
            forfeited=any(r.forfeited for r in records),
        )
        for _, records in sorted(by_side.items())
    ]
    # Merge sides that share a bot (transitively), kept in the order of their first seat.
    groups: list[list[int]] = []
    for index, side in enumerate(raw):
        touching = [g for g in groups if any(side.bots & raw[i].bots for i in g)]
        merged = sorted([index, *(i for g in touching for i in g)])
        groups = [g for g in groups if g not in touching] + [merged]
    groups.sort(key=lambda g: g[0])
    return [
        Side(
            members=raw[group[0]].members,
            bots=frozenset().union(*(raw[i].bots for i in group)),
            score=sum(raw[i].score for i in group) / len(group),
            forfeited=any(raw[i].forfeited for i in group),
        )
        for group in groups
    ]


def side_ranks(sides: Sequence[Side]) -> list[int]:
    """Competition ranks (0 best): by score, ties shared, forfeited sides last."""

    def key(side: Side) -> tuple[bool, float]:
        return (side.forfeited, -side.score)

    return [sum(1 for other in sides if key(other) < key(side)) for side in sides]


def rate_match(
    game: str, seats: Sequence[SeatRecord], current: Mapping[str, Rating]
) -> list[RatingChange]:
    """The rating changes of one finished match, one per rated bot (``current`` holds the
    ratings of the bots that have one; the others start at :data:`INITIAL`).  Empty when the
    match cannot be rated (fewer than two sides)."""
    sides = sides_of(game, seats)
    if len(sides) < 2:
        return []
    ranks = side_ranks(sides)

    def before(bot: str) -> Rating:
        return current.get(bot, INITIAL)

    teams = [
        [MODEL.rating(mu=before(bot).mu, sigma=before(bot).sigma) for bot in side.members]
        for side in sides
    ]
    rated = MODEL.rate(teams, ranks=list(ranks))
    changes = []
    for side, rank, new_team in zip(sides, ranks, rated, strict=True):
        seen = set()
        for bot, new in zip(side.members, new_team, strict=True):
            if bot in seen:  # the same bot twice in a team: identical updates, taken once
                continue
            seen.add(bot)
            changes.append(
                RatingChange(bot, before(bot), Rating(new.mu, new.sigma), rank, side.score)
            )
    return changes
