"""Tournament files (TOML): reading, checking and planning, all before anything runs.

A file names the game and its settings, the bots (each a name and a command), the format, how
many matches each pairing plays, the clock and timeout policy, duplicate deals and how many
matches run at once::

    name = "demo-belote"            # optional: the file's stem; match ids start with it
    game = "belote"
    format = "round-robin"          # or "gauntlet" (with challenger = "BOT")
    matches_per_pairing = 4
    bots_per_match = 2              # optional (see below)
    duplicate = true                # same deals with the seats rotated
    concurrency = 4                 # matches at once
    seed = 2026                     # optional: drawn at random, then kept (see below)

    [settings]                      # the game's own settings
    deals = 4

    [clock]
    move_ms = 2000
    bank_ms = 10000
    policy = "default"              # default | forfeit | strikes:N
    join_timeout_s = 30             # how long a match waits for its bots

    [[bots]]
    name = "greedy"
    command = "greedy"              # a sample bot (random, greedy, pimc) or a shell command

Relative paths in a bot's ``command`` (``python bots/mine.py``) and its ``dir`` are read from
the file's folder, not from the folder ``bisca tournament`` runs in (a command's path that
names nothing in the file's folder is left as written, for files of before).

Every problem is refused as ``FILE:LINE: what is wrong``: syntax errors with the line TOML
reports, other problems with the line of the key at fault (found in the text, since a parsed
TOML document keeps no positions).

The plan (docs/leagues.md, "Tournaments"): a *pairing* is a group of ``bots_per_match``
distinct bots (every combination for round-robin; the challenger with every combination of
the others for a gauntlet).  The group's bots sit around the table in turn (seat ``i`` holds
``group[(i + r) % k]``), and the seating ``r`` cycles through every rotation, so every bot
holds every seat equally often.  With duplicate deals the rotations of a set share one seed,
and set ``n`` of every pairing uses the same seed, so each bot holds each hand.  Every seed
derives from the tournament's: the file's ``seed`` (the same deals on any machine, and as
secret as they are), else one drawn at random when the tournament is first planned and kept
with its plan (:func:`planned_seed`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import re
import secrets
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bisca.engine import GAMES, EngineError, Settings, settings_to_mapping
from bisca.server.errors import ConfigError, StoreError, TournamentFileError
from bisca.server.records import TournamentSlot
from bisca.server.referee import MAX_JOIN_TIMEOUT_S, ClockSettings, clock_settings
from bisca.server.sandbox import Limits
from bisca.server.store import StoredTournament, check_bot_name
from bisca.server.textfiles import read_text_file

FORMATS = ("round-robin", "gauntlet")
MAX_PLANNED_MATCHES = 100_000
MAX_CONCURRENCY = 64
Path_ = tuple[str | int, ...]

_TOP_KEYS = {
    "name",
    "game",
    "format",
    "challenger",
    "matches_per_pairing",
    "bots_per_match",
    "duplicate",
    "concurrency",
    "seed",
    "settings",
    "clock",
    "bots",
    "sandbox",
    "limits",
}
_CLOCK_KEYS = {"move_ms", "bank_ms", "policy", "join_timeout_s"}
_BOT_KEYS = {"name", "command", "dir", "limits"}


@dataclass(frozen=True)
class BotEntry:
    name: str
    command: str
    #: The folder the bot sees (read-only) in its sandbox; ``None``: its command's own.
    dir: Path | None = None
    #: This bot's limits (the tournament's, with the bot's own ``limits`` applied).
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class TournamentSpec:
    """A checked tournament file."""

    name: str
    game: str
    settings: Settings
    format: str
    challenger: str | None
    bots: tuple[BotEntry, ...]
    bots_per_match: int
    matches_per_pairing: int
    duplicate: bool
    concurrency: int
    #: The file's ``seed``; ``None`` when it gives none: :func:`planned_seed` draws one when
    #: the tournament is first planned, and the store keeps it.
    seed: int | None
    clock: ClockSettings
    join_timeout_s: float
    source: str
    #: Bots run in the sandbox unless the file says ``sandbox = false``.
    sandbox: bool = True
    limits: Limits = field(default_factory=Limits)

    @property
    def seats(self) -> int:
        return int(GAMES[self.game].seats(self.settings))

    @property
    def folder(self) -> Path:
        """The folder of the file: its bots' relative ``dir`` and the relative paths in their
        commands are read from here, wherever ``bisca tournament`` is run."""
        return Path(self.source).resolve().parent

    def pairings(self) -> list[tuple[str, ...]]:
        k = self.bots_per_match
        if self.format == "gauntlet":
            assert self.challenger is not None
            others = self._others()
            return [(self.challenger, *rest) for rest in itertools.combinations(others, k - 1)]
        return list(itertools.combinations([bot.name for bot in self.bots], k))

    def pairing_count(self) -> int:
        """How many :meth:`pairings` there are, counted without making them (100 bots at six
        seats make 1.2 billion: a 4 KB file exhausted the memory before its plan's bound was
        checked, review s57c)."""
        if self.format == "gauntlet":
            return math.comb(len(self._others()), self.bots_per_match - 1)
        return math.comb(len(self.bots), self.bots_per_match)

    def _others(self) -> list[str]:
        """The gauntlet's bots but its challenger."""
        return [bot.name for bot in self.bots if bot.name != self.challenger]

    @property
    def dealt_from(self) -> int:
        """The seed every deal of the plan derives from (set by :func:`planned_seed` when the
        file gives none)."""
        if self.seed is None:
            raise ValueError(f"tournament {self.name}: its seed is drawn when it is planned")
        return self.seed

    def plan(self) -> list[TournamentSlot]:
        """Every match of the tournament, in playing order: set by set, so the standings
        cover every pairing early."""
        pairings = self.pairings()
        k = self.bots_per_match
        width = max(4, len(str(len(pairings) * self.matches_per_pairing)))
        slots: list[TournamentSlot] = []
        for round_number in range(self.matches_per_pairing):
            seating = round_number % k
            for pairing, group in enumerate(pairings):
                if self.duplicate:
                    seed = derive_seed(self.dealt_from, "set", round_number // k)
                else:
                    seed = derive_seed(self.dealt_from, "match", pairing, round_number)
                index = len(slots)
                slots.append(
                    TournamentSlot(
                        slot=index,
                        planned_id=f"{self.name}-{index + 1:0{width}d}",
                        pairing=pairing,
                        seating=seating,
                        seed=seed,
                        bots=tuple(group[(seat + seating) % k] for seat in range(self.seats)),
                    )
                )
        return slots

    def digest(self, slots: list[TournamentSlot]) -> str:
        """What makes two runs the same tournament: the game, settings, clock and every planned
        match (not the bots' commands, nor the concurrency)."""
        canonical = {
            "game": self.game,
            "settings": settings_to_mapping(self.settings),
            "clock": self.clock.to_mapping(),
            "matches": [(s.planned_id, list(s.bots), s.seed) for s in slots],
        }
        return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


def planned_seed(spec: TournamentSpec, stored: StoredTournament | None) -> TournamentSpec:
    """``spec`` with the seed its plan is dealt from: the file's; else the one the store kept
    when the tournament was first planned; else a new one, drawn from the system's randomness.

    A seed a bot can compute or guess deals it every hand: it finds the seed from its own
    cards and knows the others' (review 48 found one from the name in every match id, when
    the default seed was derived from the name, and a small one in seconds).  A plan stored
    before its seed was kept was dealt from the name's."""
    if spec.seed is not None:
        return spec
    if stored is None:
        seed = secrets.randbits(63)
    else:
        seed = stored.seed if stored.seed is not None else derive_seed(0, "name", spec.name)
    return dataclasses.replace(spec, seed=seed)


def derive_seed(base: int, *parts: object) -> int:
    """A 63-bit seed from the tournament's seed and a match's coordinates (stable across
    Python versions and machines: SHA-256, not ``hash``)."""
    text = ":".join(str(part) for part in (base, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def load_tournament(path: Path) -> TournamentSpec:
    try:
        text = read_text_file(path)
    except FileNotFoundError:
        raise TournamentFileError(str(path), None, "no such tournament file") from None
    except (OSError, UnicodeDecodeError) as problem:
        raise TournamentFileError(str(path), None, f"cannot read it: {problem}") from None
    return parse_tournament(text, str(path), default_name=path.stem)


def parse_tournament(text: str, source: str, default_name: str = "tournament") -> TournamentSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        message = str(problem)
        found = re.search(r"\(at line (\d+), column (\d+)\)", message)
        line = int(found.group(1)) if found else None
        detail = re.sub(r"\s*\(at line \d+, column \d+\)", "", message)
        if found:
            detail += f" (column {found.group(2)})"
        raise TournamentFileError(source, line, f"not valid TOML: {detail}") from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables by recursion: a few thousand levels
        # exhaust the interpreter's stack before any of its own checks refuse the file.
        raise TournamentFileError(source, None, "not valid TOML: nested too deeply") from None
    return _Checker(text, source).check(data, default_name)


class _Checker:
    """Checks a parsed file, naming the line of each key it refuses."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source

    def fail(self, path: Path_, problem: str) -> TournamentFileError:
        return TournamentFileError(self.source, key_line(self.text, path), problem)

    def check(self, data: dict[str, Any], default_name: str) -> TournamentSpec:
        for key in data:
            if key not in _TOP_KEYS:
                raise self.fail(
                    (key,), f"unknown key {key!r}; known: {', '.join(sorted(_TOP_KEYS))}"
                )
        name = data.get("name", default_name)
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
            if "name" not in data:  # the name is the file's: say so (review 53)
                raise TournamentFileError(
                    self.source,
                    None,
                    f"the file gives no name and its own, {name!r}, cannot be one: add name = "
                    "1-64 letters, digits, '-', '_' or '.' (it starts ids)",
                )
            raise self.fail(
                ("name",), "name must be 1-64 letters, digits, '-', '_' or '.' (it starts ids)"
            )
        if "game" not in data:
            raise TournamentFileError(
                self.source, None, f"no game given: add game = one of {', '.join(sorted(GAMES))}"
            )
        game = data["game"]
        if not isinstance(game, str) or game not in GAMES:
            raise self.fail(("game",), f"unknown game {game!r}; known: {', '.join(sorted(GAMES))}")
        settings = self._settings(game, data.get("settings", {}))
        seats = int(GAMES[game].seats(settings))
        sandbox = data.get("sandbox", True)
        if not isinstance(sandbox, bool):
            raise self.fail(("sandbox",), "sandbox must be true or false")
        limits = self._limits(("limits",), data.get("limits", {}), Limits())
        bots = self._bots(data.get("bots"), limits)
        names = [bot.name for bot in bots]

        tournament_format = data.get("format", "round-robin")
        if tournament_format not in FORMATS:
            raise self.fail(
                ("format",), f"unknown format {tournament_format!r}; use {' or '.join(FORMATS)}"
            )
        challenger = data.get("challenger")
        if tournament_format == "gauntlet":
            if challenger is None:
                raise self.fail(("format",), 'a gauntlet needs challenger = "BOT"')
            if challenger not in names:
                raise self.fail(
                    ("challenger",),
                    f"challenger {challenger!r} is not one of the bots ({', '.join(names)})",
                )
        elif challenger is not None:
            raise self.fail(("challenger",), "only a gauntlet has a challenger")

        k = self._bots_per_match(data, game, seats, len(bots))
        per_pairing = self._whole(data, ("matches_per_pairing",), 1, 10_000, default=1)
        duplicate = data.get("duplicate", False)
        if not isinstance(duplicate, bool):
            raise self.fail(("duplicate",), "duplicate must be true or false")
        if duplicate and per_pairing % k:
            raise self.fail(
                ("matches_per_pairing",),
                f"with duplicate deals every deal set is played in all {k} seatings: "
                f"matches_per_pairing must be a multiple of {k}, got {per_pairing}",
            )
        concurrency = self._whole(data, ("concurrency",), 1, MAX_CONCURRENCY, default=2)
        seed = None if "seed" not in data else self._whole(data, ("seed",), 0, 2**63 - 1, 0)
        clock, join_timeout = self._clock(data.get("clock", {}))

        spec = TournamentSpec(
            name=name,
            game=game,
            settings=settings,
            format=tournament_format,
            challenger=challenger,
            bots=bots,
            bots_per_match=k,
            matches_per_pairing=per_pairing,
            duplicate=duplicate,
            concurrency=concurrency,
            seed=seed,
            clock=clock,
            join_timeout_s=join_timeout,
            source=self.source,
            sandbox=sandbox,
            limits=limits,
        )
        planned = spec.pairing_count() * per_pairing
        if planned > MAX_PLANNED_MATCHES:
            raise self.fail(
                ("matches_per_pairing",),
                f"that plans {planned} matches; the most is {MAX_PLANNED_MATCHES}",
            )
        return spec

    def _settings(self, game: str, table: Any) -> Settings:
        if not isinstance(table, dict):
            raise self.fail(("settings",), "settings must be a table of the game's settings")
        try:
            settings: Settings = GAMES[game].settings(table)
        except (EngineError, TypeError, ValueError) as problem:
            text = str(problem)
            named = [key for key in table if re.search(rf"\b{re.escape(key)}\b", text)]
            path: Path_ = ("settings", named[0]) if named else ("settings",)
            raise self.fail(path, f"{game} settings: {text}") from None
        return settings

    def _limits(self, path: Path_, table: Any, base: Limits) -> Limits:
        if not isinstance(table, dict):
            raise self.fail(path, f"limits must be a table of {', '.join(Limits.keys())}")
        for key in table:
            try:
                base.merged({key: table[key]})
            except ConfigError as problem:
                raise self.fail((*path, key), str(problem).removeprefix("limits: ")) from None
        return base.merged(table)

    def _bot_dir(self, index: int, value: Any) -> Path:
        folder = Path(value).expanduser() if isinstance(value, str) and value else None
        if folder is None:
            raise self.fail(("bots", index, "dir"), 'dir must be a folder, e.g. dir = "bots/mine"')
        if not folder.is_absolute():  # relative to the tournament file, like its commands' paths
            folder = Path(self.source).parent / folder
        if not folder.is_dir():
            raise self.fail(("bots", index, "dir"), f"no folder {folder}")
        return folder.resolve()

    def _bots(self, entries: Any, limits: Limits) -> tuple[BotEntry, ...]:
        if not isinstance(entries, list) or not entries:
            raise self.fail(
                ("bots",), 'no bots: add [[bots]] tables with name = "..." and command = "..."'
            )
        bots: list[BotEntry] = []
        named: set[str] = set()  # (a set: a file of 20,000 bots took 12 s, review s57c)
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise self.fail(("bots",), "each bot is a [[bots]] table with name and command")
            for key in entry:
                if key not in _BOT_KEYS:
                    raise self.fail(
                        ("bots", index, key),
                        f"unknown bot key {key!r}; known: {', '.join(sorted(_BOT_KEYS))}",
                    )
            name = entry.get("name")
            if not isinstance(name, str):
                raise self.fail(("bots", index), f'bot {index + 1} has no name = "..."')
            try:
                check_bot_name(name)
            except StoreError as problem:
                raise self.fail(("bots", index, "name"), str(problem)) from None
            if name in named:
                raise self.fail(("bots", index, "name"), f"two bots are named {name!r}")
            named.add(name)
            command = entry.get("command")
            if not isinstance(command, str) or not command.strip():
                raise self.fail(
                    ("bots", index, "command") if "command" in entry else ("bots", index),
                    f'bot {name!r} needs command = "..." (a sample bot: random, greedy, pimc; '
                    "or a shell command)",
                )
            try:
                shlex.split(command)
            except ValueError as problem:
                raise self.fail(
                    ("bots", index, "command"), f"bot {name!r}: bad command: {problem}"
                ) from None
            folder = self._bot_dir(index, entry["dir"]) if "dir" in entry else None
            own = self._limits(("bots", index, "limits"), entry.get("limits", {}), limits)
            bots.append(BotEntry(name, command, folder, own))
        if len(bots) < 2:
            raise self.fail(("bots",), "a tournament needs at least two bots")
        return tuple(bots)

    def _bots_per_match(self, data: dict[str, Any], game: str, seats: int, count: int) -> int:
        if "bots_per_match" in data:
            k = self._whole(data, ("bots_per_match",), 2, seats, default=2)
            if seats % k:
                raise self.fail(
                    ("bots_per_match",),
                    f"bots_per_match must divide the {seats} seats of a {game} match "
                    f"(each bot holds the same number of seats), got {k}",
                )
        else:
            divisors = [d for d in range(2, seats + 1) if seats % d == 0 and d <= count]
            if not divisors:
                raise self.fail(
                    ("bots",),
                    f"{count} bots cannot share the {seats} seats of a {game} match evenly: "
                    "set bots_per_match, or the game's seats, so that it divides them",
                )
            k = 2 if game == "belote" else max(divisors)
        if k > count:
            raise self.fail(
                ("bots_per_match",) if "bots_per_match" in data else ("bots",),
                f"bots_per_match is {k} but the file names only {count} bots",
            )
        return k

    def _clock(self, table: Any) -> tuple[ClockSettings, float]:
        if not isinstance(table, dict):
            raise self.fail(("clock",), "clock must be a table")
        for key in table:
            if key not in _CLOCK_KEYS:
                raise self.fail(
                    ("clock", key),
                    f"unknown clock key {key!r}; known: {', '.join(sorted(_CLOCK_KEYS))}",
                )
        defaults = ClockSettings()
        move_ms = self._whole(table, ("clock", "move_ms"), 1, 3_600_000, defaults.move_ms)
        bank_ms = self._whole(table, ("clock", "bank_ms"), 0, 86_400_000, defaults.bank_ms)
        policy = table.get("policy", defaults.policy_text)
        if not isinstance(policy, str):
            raise self.fail(("clock", "policy"), "policy must be a string")
        try:
            clock = clock_settings(move_ms, bank_ms, policy)
        except ValueError as problem:
            raise self.fail(("clock", "policy"), str(problem)) from None
        join = table.get("join_timeout_s", 30)
        if (
            isinstance(join, bool)
            or not isinstance(join, int | float)
            or not 0 < join <= MAX_JOIN_TIMEOUT_S
        ):
            raise self.fail(
                ("clock", "join_timeout_s"),
                f"join_timeout_s must be a number of seconds above 0 and at most "
                f"{MAX_JOIN_TIMEOUT_S} (review s59b, L4: it said 0-{MAX_JOIN_TIMEOUT_S})",
            )
        return clock, float(join)

    def _whole(self, table: dict[str, Any], path: Path_, low: int, high: int, default: int) -> int:
        key = path[-1]
        value = table.get(str(key), default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(
                path, f"{key} must be a whole number from {low} to {high}, got {value!r}"
            )
        return value


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*="
)


def _key_parts(text: str) -> list[str]:
    return [part.strip().strip("\"'") for part in text.split(".")]


def key_line(text: str, path: Path_) -> int | None:
    """The 1-based line where ``path`` is set (``("clock", "policy")``, ``("bots", 2,
    "name")``), else the line of its nearest enclosing table or key; ``None`` if none is."""
    best: tuple[int, int] | None = None  # (matched length, line)
    table: list[str | int] = []
    arrays: dict[tuple[str, ...], int] = {}
    wanted = list(path)
    multiline = False
    for number, line in enumerate(text.splitlines(), start=1):
        if multiline:
            if line.count('"""') % 2 or line.count("'''") % 2:
                multiline = False
            continue
        header = _HEADER.match(line)
        if header:
            names = _key_parts(header.group(2))
            if header.group(1) == "[[":
                index = arrays.get(tuple(names), -1) + 1
                arrays[tuple(names)] = index
                table = [*names, index]
            else:
                table = list(names)
            full = table
        else:
            key = _KEY.match(line)
            if not key:
                continue
            full = [*table, *_key_parts(key.group(1))]
            rest = line[key.end() :]
            if rest.count('"""') % 2 or rest.count("'''") % 2:
                multiline = True
        # How much of the wanted path this line sets (a table header of an array entry counts
        # for the array's name too).
        matched = 0
        for got, want in zip(full, wanted, strict=False):
            if got != want:
                break
            matched += 1
        sets_it = matched == len(full) or (matched and matched == len(wanted))
        if sets_it and (best is None or matched > best[0]):
            best = (matched, number)
    return None if best is None else best[1]
