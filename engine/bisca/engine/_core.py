"""The interface every game implements, its errors and its typed result.

A game is a :class:`GameState` subclass holding a whole match.  It is pure and synchronous: it
never reads a clock, a file or a socket, and everything random comes from
:class:`bisca.engine._rng.DealRng`, so ``(settings, seed, actions)`` determines every
observation, legal-action list, event and result.

Events are recorded with an *audience*: a bit mask of the seats that may see them.  A public
event has every seat's bit; an event no seat may see (a burnt card, a reshuffled stock) has none
and exists only in the omniscient record that match logs keep.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import (
    Any,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

# --------------------------------------------------------------------------------------------
# Errors


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class InvalidSettingsError(EngineError, ValueError):
    """Match settings that no match can be played with; the message names the setting."""


class MalformedActionError(EngineError, TypeError):
    """Something that is not an action of this game at all (wrong type, card of another deck)."""


class IllegalActionError(EngineError, ValueError):
    """A well-formed action that the rules forbid now; ``reason`` says which rule."""

    def __init__(self, reason: str, *, code: str = "illegal_action") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


# --------------------------------------------------------------------------------------------
# Result


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished match came out, per seat.

    ``scores`` is the game's own measure (Belote: the seat's team match points; Bestia: the
    seat's net chips).  ``ranks`` is competition ranking by score, 0 the best; equal scores share
    a rank, so a draw is every seat at rank 0.
    """

    scores: tuple[int, ...]
    ranks: tuple[int, ...]

    @classmethod
    def from_scores(cls, scores: Sequence[int]) -> Outcome:
        ranks = tuple(sum(1 for other in scores if other > mine) for mine in scores)
        return cls(tuple(scores), ranks)

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats ranked first (all of them in a draw)."""
        return tuple(seat for seat, rank in enumerate(self.ranks) if rank == 0)

    @property
    def is_draw(self) -> bool:
        return all(rank == 0 for rank in self.ranks)


# --------------------------------------------------------------------------------------------
# Settings


def _accepts(annotation: Any, value: Any) -> bool:
    """Whether ``value`` fits a settings field's annotation (bool is not an int here)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return any(_accepts(arm, value) for arm in get_args(annotation))
    if annotation is type(None):
        return value is None
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


SettingsT = TypeVar("SettingsT")


def settings_from_mapping(settings_type: type[SettingsT], mapping: Mapping[str, Any]) -> SettingsT:
    """Build a game's settings from plain values (a TOML table, CLI options, a protobuf map).

    Unknown names and values of the wrong type are refused with the setting's name; the
    settings' own checks then refuse values out of range.
    """
    if not dataclasses.is_dataclass(settings_type):
        raise TypeError(f"{settings_type!r} is not a settings dataclass")
    fields = {field.name: field for field in dataclasses.fields(settings_type)}
    unknown = sorted(set(mapping) - set(fields))
    if unknown:
        raise InvalidSettingsError(
            f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}"
        )
    hints = _field_types(settings_type)
    for name, value in mapping.items():
        if not _accepts(hints[name], value):
            raise InvalidSettingsError(
                f"setting {name} must be {_describe(hints[name])}, got {value!r}"
            )
    return settings_type(**mapping)


@functools.cache
def _field_types(settings_type: type) -> dict[str, Any]:
    """The types of a settings dataclass's fields, read once per type: ``get_type_hints``
    evaluates their annotations anew at each call (~90 µs), and the referee builds a match's
    settings at its every start."""
    return get_type_hints(settings_type)


def _describe(annotation: Any) -> str:
    if get_origin(annotation) in (Union, types.UnionType):
        return " or ".join(_describe(arm) for arm in get_args(annotation))
    if annotation is type(None):
        return "absent"
    return getattr(annotation, "__name__", str(annotation))


def settings_to_mapping(settings: Any) -> dict[str, Any]:
    """The plain values of a settings dataclass, the inverse of :func:`settings_from_mapping`."""
    return {field.name: getattr(settings, field.name) for field in dataclasses.fields(settings)}
