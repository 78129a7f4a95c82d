"""The ladder's choice of the next pairing, for a league of submitted versions.

A pure function of the versions that may play (their rating, their number of rated matches,
the matches they played in the last hour) and a random source, so the workers that will play
the ladder and the tests draw the same way:

* **pace**: a version that played ``matches_per_hour`` matches in the last hour waits
  (:data:`PACE_WINDOW`; :func:`paced_until` says until when);
* **new versions first**: the version with the fewest rated matches below
  ``newcomer_matches`` is the anchor of the next pairing, so a new version's rating settles
  in its first hour; past that, the anchor is the version that spent the least time in
  matches in the last hour (not the one that played the fewest: a slow bot would anchor every
  pairing);
* **near its rating, with spread**: the anchor's opponents are drawn among the others with
  weights ``exp(-(Δμ / spread)² / 2)`` (and a floor of ``reach``, so the top and the bottom
  still meet now and then), never two versions of one account (nor, so, of one bot);
* **duplicate deals** (``duplicate``, off by default: see :class:`LadderSettings`): the
  pairing is played once per rotation of its group around the table, every rotation on the
  same deal (``LadderPairing.seatings``), so the luck of the cards cancels out, as in a
  tournament with ``duplicate = true`` (``docs/leagues.md``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta

from bisca.server.errors import ConfigError

from ._settings import SettingValue, parse_setting


@dataclass(frozen=True)
class LadderEntrant:
    """A version that may play: its player name (``mybot.v3``), its bot, its rating, and the
    account that owns it (none given: the bot stands for its own account)."""

    player: str
    bot: str
    mu: float
    sigma: float
    matches: int
    played_last_hour: int
    account: str = ""
    #: Seconds its matches of the last hour lasted.
    seconds_last_hour: float = 0.0

    @property
    def side(self) -> str:
        """Whose it is: a pairing seats each side once."""
        return self.account or self.bot


#: The longest a ladder keeps its seats' output (``timedelta`` refuses more than ~2.7 million
#: days; a longer wish is a typo).
MAX_OUTPUT_DAYS = 3650.0
#: The longest a ladder worker waits before it looks again (``inf`` started a ladder that never
#: looked: review s57c).
MAX_POLL_S = 3600.0


@dataclass(frozen=True)
class LadderSettings:
    matches_per_hour: int = 12
    newcomer_matches: int = 10
    spread: float = 4.0
    reach: float = 0.02
    #: Every rotation of a pairing on one deal.  Off unless the operator trusts the bots: a
    #: hosted bot can carry what it saw of a deal to its next rotation through the machine's
    #: shared caches, which no sandbox short of a machine of its own closes (review s58d: it
    #: knew every opponent's hand before a card was played).
    duplicate: bool = False
    #: Seconds a ladder worker waits before it looks again when no version may play.
    poll_s: float = 2.0
    #: Days a seat's output (its stderr and stdout, for its owner) is kept after its match:
    #: the ladder plays on without end, and each seat may keep 128 KiB a match.
    output_days: float = 14.0

    def __post_init__(self) -> None:
        if self.matches_per_hour < 1 or self.newcomer_matches < 0:
            raise ValueError(
                "the ladder's matches_per_hour must be 1 or more, newcomer_matches 0 or more"
            )
        if not self.spread > 0 or not 0 <= self.reach < 1:
            raise ValueError("the ladder's spread must be above 0 and its reach from 0 to 1")
        if not 0 < self.poll_s <= MAX_POLL_S:
            raise ValueError(f"the ladder's poll_s must be above 0 and {MAX_POLL_S:g} at most")
        if not 0 < self.output_days <= MAX_OUTPUT_DAYS:
            raise ValueError(
                f"the ladder's output_days must be above 0 and {MAX_OUTPUT_DAYS:g} at most"
            )

    def with_settings(self, settings: Sequence[str]) -> LadderSettings:
        """These settings with ``KEY=VALUE`` ones over them (``bisca serve --ladder``); a
        :class:`ConfigError` names what was wrong."""
        kinds = {item.name: type(getattr(self, item.name)) for item in fields(self)}
        changed: dict[str, object] = {}
        for setting in settings:
            try:
                key, value = parse_setting(setting)
            except ValueError as problem:
                raise ConfigError(f"--ladder: {problem}") from None
            kind = kinds.get(key)
            if kind is None:
                raise ConfigError(
                    f"--ladder {setting}: unknown setting {key!r}; known: {', '.join(kinds)}"
                )
            changed[key] = _of_kind(setting, key, value, kind)
        try:
            return replace(self, **changed)  # type: ignore[arg-type]
        except ValueError as problem:
            raise ConfigError(str(problem)) from None


def _of_kind(setting: str, key: str, value: SettingValue, kind: type) -> object:
    """A ladder setting's value as its field's type (a whole number serves as a float)."""
    if kind is float and not isinstance(value, bool):
        try:
            return float(value)
        except ValueError:
            raise ConfigError(f"--ladder {setting}: {key} is a number") from None
    if type(value) is not kind:
        raise ConfigError(f"--ladder {setting}: {key} is {_KIND_WORDS.get(kind, kind.__name__)}")
    return value


#: How a setting's kind is said to a person ("is a int" was said: review 53).
_KIND_WORDS = {int: "a whole number", bool: "true or false", str: "a word"}


#: The span over which a version's pace counts the matches it started.
PACE_WINDOW = timedelta(hours=1)


def paced_until(started: Sequence[datetime], settings: LadderSettings) -> datetime | None:
    """When a version that started matches at ``started`` (those of the last
    :data:`PACE_WINDOW`) may be drawn again; ``None`` while it is below its pace."""
    over = len(started) - settings.matches_per_hour
    if over < 0:
        return None
    # Once its oldest ``over + 1`` matches leave the window, it is below its pace again.
    return sorted(started)[over] + PACE_WINDOW


@dataclass(frozen=True)
class LadderPairing:
    """The versions of one pairing (its anchor first), its deal's seed, and each match's order
    around the table (one per rotation with duplicate deals, all on ``seed``; else one, drawn)."""

    players: tuple[str, ...]
    seed: int
    seatings: tuple[tuple[str, ...], ...]


def _anchor(entrants: Sequence[LadderEntrant], settings: LadderSettings) -> LadderEntrant:
    newcomers = [e for e in entrants if e.matches < settings.newcomer_matches]
    if newcomers:
        return min(newcomers, key=lambda e: (e.matches, e.played_last_hour))
    # The least time at the table in the hour, not the fewest matches: a bot that answers at
    # the end of its clock plays the fewest, and was the anchor of every pairing of a ladder
    # that plays one table at a time (review 52: 175 matches in 15 s fell to 4 in 110 s).
    return min(entrants, key=lambda e: (e.seconds_last_hour, e.played_last_hour, e.matches))


def next_pairing(
    entrants: Sequence[LadderEntrant],
    group: int,
    settings: LadderSettings,
    rng: random.Random,
) -> LadderPairing | None:
    """The next pairing of ``group`` versions of different accounts (so of different bots),
    or ``None`` when fewer than ``group`` accounts have a version that may play now.  One
    account's bots never share a table: an account that filled one with its own could throw
    games to its best bot or pass it the others' hands (review 52: a bot fed by three of its
    owner's went to the top in 30 s)."""
    ready = [e for e in entrants if e.played_last_hour < settings.matches_per_hour]
    rng.shuffle(ready)  # ties are broken at random, not by name
    if len({e.side for e in ready}) < group:
        return None
    anchor = _anchor(ready, settings)
    chosen = [anchor]
    for _ in range(group - 1):
        sides = {e.side for e in chosen}
        others = [e for e in ready if e.side not in sides]
        weights = [
            settings.reach + math.exp(-(((e.mu - anchor.mu) / settings.spread) ** 2) / 2)
            for e in others
        ]
        chosen.append(rng.choices(others, weights)[0])
    players = tuple(e.player for e in chosen)  # the anchor first
    if settings.duplicate:
        seatings = tuple(players[i:] + players[:i] for i in range(len(players)))
    else:
        # One match, its seats drawn: the anchor (a newcomer, the least played) would else
        # always sit first.
        seatings = (tuple(rng.sample(players, len(players))),)
    return LadderPairing(players, rng.getrandbits(63), seatings)
