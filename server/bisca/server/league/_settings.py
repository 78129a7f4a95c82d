"""Game settings written as text on the command line: ``KEY=VALUE`` and ``GAME:K=V,K=V``.

One reading of a value serves every command: ``true``/``false`` is a bool, a whole number an
int, anything else a string; the engine then checks each setting against its game.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from bisca.engine import GAMES, EngineError, Settings

SettingValue = bool | int | str


def parse_value(raw: str) -> SettingValue:
    """A setting's value from text: a bool (true/false), an int, or the text itself."""
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    with contextlib.suppress(ValueError):
        return int(raw)
    return raw


def parse_setting(text: str) -> tuple[str, SettingValue]:
    """``KEY=VALUE`` -> ``(key, value)``; ``ValueError`` naming the text otherwise."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), parse_value(raw.strip())


def parse_league_games(values: Iterable[str]) -> dict[str, Settings]:
    """``["belote", "bestia:seats=4,rounds=1"]`` -> ``{game: settings}`` (``ValueError`` with
    the problem)."""
    games: dict[str, Settings] = {}
    for value in values:
        game, _, rest = value.partition(":")
        game = game.strip()
        if game not in GAMES:
            raise ValueError(
                f"--league {value}: unknown game {game!r}; known: {', '.join(sorted(GAMES))}"
            )
        if game in games:
            raise ValueError(f"--league names {game} twice")
        settings: dict[str, SettingValue] = {}
        for item in filter(None, (part.strip() for part in rest.split(","))):
            try:
                key, setting = parse_setting(item)
            except ValueError as problem:
                raise ValueError(f"--league {value}: {problem}") from None
            settings[key] = setting
        try:
            games[game] = GAMES[game].settings(settings)
        except (EngineError, TypeError, ValueError) as problem:
            raise ValueError(f"--league {value}: {problem}") from None
    return games
