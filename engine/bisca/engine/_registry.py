"""The registry's entry for one game: what the referee needs to start a match of it.

Apart from ``_core`` because it names :class:`GameState` (``_game``), which itself imports
``_core``'s errors and result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic

from ._core import SettingsT, settings_from_mapping
from ._game import GameState


@dataclass(frozen=True)
class GameSpec(Generic[SettingsT]):
    """What the referee needs to know about a game to start a match of it."""

    name: str
    settings_type: type[SettingsT]
    new_match: Callable[[SettingsT, int], GameState[Any, Any, Any]]
    seats: Callable[[SettingsT], int]
    #: The side a seat plays for: seats of one side share one result (Belote's teams); in a
    #: game of each for himself every seat is its own side.
    side_of: Callable[[int], int] = dataclasses.field(default=lambda seat: seat)

    def settings(self, mapping: Mapping[str, Any] | None = None) -> SettingsT:
        return settings_from_mapping(self.settings_type, mapping or {})
