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


def setting_text(key: str, value: SettingValue) -> str:
    """``KEY=VALUE`` as :func:`parse_setting` reads it back (a bool as ``true``/``false``)."""
    shown = str(value).lower() if isinstance(value, bool) else str(value)
    return f"{key}={shown}"


def merged_settings(given: Iterable[tuple[str, str, SettingValue]]) -> dict[str, SettingValue]:
    """``{key: value}`` of settings given as ``(where, key, value)``, ``where`` saying how
    (``--set deals=2``, ``--deals 4``); ``ValueError`` naming both places when one key is
    given two different values: the last one won without a word (review 53)."""
    merged: dict[str, tuple[str, SettingValue]] = {}
    for where, key, value in given:
        if key in merged:
            first, kept = merged[key]
            # By type too: True == 1, but deals=true and deals=1 are not the same setting.
            if (type(kept), kept) != (type(value), value):
                raise ValueError(f"{key} is given twice: {first} and {where}")
        merged[key] = (where, value)
    return {key: value for key, (_, value) in merged.items()}


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
        given: list[tuple[str, str, SettingValue]] = []
        for item in filter(None, (part.strip() for part in rest.split(","))):
            try:
                key, setting = parse_setting(item)
            except ValueError as problem:
                raise ValueError(f"--league {value}: {problem}") from None
            given.append((item, key, setting))
        try:
            settings = merged_settings(given)
        except ValueError as problem:
            raise ValueError(f"--league {value}: {problem}") from None
        try:
            games[game] = GAMES[game].settings(settings)
        except (EngineError, TypeError, ValueError) as problem:
            raise ValueError(f"--league {value}: {problem}") from None
    return games
