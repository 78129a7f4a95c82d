"""The rules of Bisca's games: pure, synchronous, seeded and deterministic.

The public surface is the game interface (:class:`GameState`), its errors, the typed
:class:`Outcome`, and the registry :data:`GAMES` through which the referee starts a match of any
game by name.  Each game lives in its own subpackage (``bisca.engine.belote``, ...).
"""

# ruff: noqa: E402  (the engine's modules are imported once _native has chosen where from)

from typing import Any

from . import _native

# Before any other module of the engine is imported: they come from the compiled build when one
# matches the sources (``_native`` says when), else they are the plain Python beside this file.
_native.activate()

from ._cards import Card
from ._core import (
    EngineError,
    IllegalActionError,
    InvalidSettingsError,
    MalformedActionError,
    Outcome,
    settings_from_mapping,
    settings_to_mapping,
)
from ._game import GameState
from ._registry import GameSpec
from ._rng import DealRng
from ._tricks import plays_on_the_table
from .belote import (
    BeloteAction,
    BeloteEvent,
    BeloteObservation,
    BeloteSettings,
    BeloteState,
    team_of,
)
from .bestia import BestiaAction, BestiaEvent, BestiaObservation, BestiaSettings, BestiaState

#: Any game's settings, action, observation and event: the union of each game's own types.
Settings = BeloteSettings | BestiaSettings
Action = BeloteAction | BestiaAction
Observation = BeloteObservation | BestiaObservation
Event = BeloteEvent | BestiaEvent
#: A match of any game, as the referee holds it (each game's state is generic in its own
#: action, observation and event types, so the common view leaves them open).
MatchState = GameState[Any, Any, Any]

ENGINE_VERSION = "1"
"""Bumped whenever a rule, the generator or an event changes what a seed and actions produce."""

GAMES: dict[str, GameSpec[Any]] = {
    "belote": GameSpec(
        name="belote",
        settings_type=BeloteSettings,
        new_match=BeloteState,
        seats=lambda settings: 4,
        side_of=team_of,
    ),
    "bestia": GameSpec(
        name="bestia",
        settings_type=BestiaSettings,
        new_match=BestiaState,
        seats=lambda settings: settings.seats,
    ),
}


def new_match(game: str, settings: object = None, seed: int = 0) -> MatchState:
    """Start a match of the game named ``game`` (``settings`` as a dataclass or a mapping)."""
    try:
        spec = GAMES[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(GAMES))}") from None
    if settings is None or isinstance(settings, dict):
        settings = spec.settings(settings)
    return spec.new_match(settings, seed)


__all__ = [
    "ENGINE_VERSION",
    "GAMES",
    "Action",
    "Card",
    "DealRng",
    "EngineError",
    "Event",
    "GameSpec",
    "GameState",
    "IllegalActionError",
    "InvalidSettingsError",
    "MalformedActionError",
    "MatchState",
    "Observation",
    "Outcome",
    "Settings",
    "new_match",
    "plays_on_the_table",
    "settings_from_mapping",
    "settings_to_mapping",
]
