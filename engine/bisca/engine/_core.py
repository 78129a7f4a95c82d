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

import contextlib
import dataclasses
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import (
    Any,
    ClassVar,
    Generic,
    Self,
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
    hints = get_type_hints(settings_type)
    for name, value in mapping.items():
        if not _accepts(hints[name], value):
            raise InvalidSettingsError(
                f"setting {name} must be {_describe(hints[name])}, got {value!r}"
            )
    return settings_type(**mapping)


def _describe(annotation: Any) -> str:
    if get_origin(annotation) in (Union, types.UnionType):
        return " or ".join(_describe(arm) for arm in get_args(annotation))
    if annotation is type(None):
        return "absent"
    return getattr(annotation, "__name__", str(annotation))


def settings_to_mapping(settings: Any) -> dict[str, Any]:
    """The plain values of a settings dataclass, the inverse of :func:`settings_from_mapping`."""
    return {field.name: getattr(settings, field.name) for field in dataclasses.fields(settings)}


# --------------------------------------------------------------------------------------------
# The game interface

ActionT = TypeVar("ActionT")
ObservationT = TypeVar("ObservationT")
EventT = TypeVar("EventT")


class GameState(ABC, Generic[ActionT, ObservationT, EventT]):
    """A whole match of one game, moved forward one action at a time.

    Subclasses implement the ``_``-prefixed hooks; the public methods here are the interface
    the referee, the bots' SDK and the tests use for every game.
    """

    GAME: ClassVar[str]
    ACTION_TYPES: ClassVar[tuple[type, ...]]

    seed: int
    num_seats: int
    _events: list[EventT]
    _audiences: list[int]
    _legal: list[ActionT] | None
    #: The seat to act, ``None`` once the match is over (what :attr:`to_act` returns; the
    #: shared hot paths read it without the property).
    _to_act: int | None

    # ---- what a subclass provides -----------------------------------------------------------

    @property
    @abstractmethod
    def to_act(self) -> int | None:
        """The seat that must act now, or ``None`` when the match is over."""

    @abstractmethod
    def _compute_legal_actions(self) -> list[ActionT]:
        """Every legal action of the seat to act, in the game's canonical order."""

    @abstractmethod
    def _apply_legal(self, action: ActionT) -> None:
        """Apply an action already known to be legal."""

    @abstractmethod
    def why_illegal(self, action: ActionT) -> str | None:
        """``None`` when ``action`` is legal now, else the sentence that says which rule
        forbids it."""

    @abstractmethod
    def default_action(self) -> ActionT:
        """The action the referee plays for a seat whose bot did not answer in time."""

    @abstractmethod
    def observation(self, seat: int) -> ObservationT:
        """Everything ``seat`` may see now, and nothing more."""

    @property
    @abstractmethod
    def outcome(self) -> Outcome | None:
        """The result once the match is over, else ``None``."""

    @abstractmethod
    def copy(self) -> Self:
        """An independent state that continues exactly like this one."""

    # ---- shared behaviour -------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self._to_act is None

    def legal_actions(self) -> list[ActionT]:
        """The legal actions of the seat to act (empty when the match is over).

        The list is computed once per state and cached until the next :meth:`apply`; do not
        mutate it.
        """
        legal = self._legal
        if legal is None:
            legal = self._legal = [] if self._to_act is None else self._compute_legal_actions()
        return legal

    def is_legal(self, action: object) -> bool:
        return action in self.legal_actions()

    def apply(self, action: ActionT) -> None:
        """Play ``action`` for the seat to act.

        Raises :class:`MalformedActionError` for a value that is not an action of this game and
        :class:`IllegalActionError` (with the reason) for one the rules forbid now; in both cases
        the state is unchanged.
        """
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        # By identity first: legal lists hold interned actions, and comparing frozen
        # dataclasses for equality runs Python code for every action passed over.
        for candidate in legal:
            if candidate is action:
                break
        else:
            if action not in legal:
                self._refuse(action)
        self._legal = None
        self._apply_legal(action)

    def _refuse(self, action: object) -> None:
        if not isinstance(action, self.ACTION_TYPES):
            names = ", ".join(kind.__name__ for kind in self.ACTION_TYPES)
            raise MalformedActionError(
                f"{type(action).__name__} is not a {self.GAME} action (expected {names})"
            )
        if self.to_act is None:
            raise IllegalActionError("the match is over", code="match_over")
        reason = self.why_illegal(action)  # type: ignore[arg-type]
        raise IllegalActionError(reason or f"{action!r} is not legal now")

    # ---- events -----------------------------------------------------------------------------

    @property
    def event_count(self) -> int:
        return len(self._events)

    def events_for(self, seat: int, start: int = 0) -> list[EventT]:
        """The events from index ``start`` on that ``seat`` may see."""
        bit = 1 << seat
        audiences = self._audiences
        return [
            event
            for index, event in enumerate(self._events[start:], start)
            if audiences[index] & bit
        ]

    def public_events(self, start: int = 0) -> list[EventT]:
        """The events from index ``start`` on that every seat sees (a spectator's view)."""
        everyone = (1 << self.num_seats) - 1
        audiences = self._audiences
        return [
            event
            for index, event in enumerate(self._events[start:], start)
            if audiences[index] & everyone == everyone
        ]

    def all_events(self, start: int = 0) -> list[tuple[int, EventT]]:
        """Every event from index ``start`` on with its audience mask (the omniscient view)."""
        return list(zip(self._audiences[start:], self._events[start:], strict=True))

    def _init_events(self) -> None:
        self._events = []
        self._audiences = []
        self._legal = None

    def _shallow_copy(self) -> Self:
        """A new state sharing every attribute's value with this one (a subclass's ``copy``
        then copies what it mutates).  A class compiled by mypyc keeps the attributes it
        declares in slots of its own, outside ``__dict__``; it lists them in
        ``__mypyc_attrs__``."""
        kind = type(self)
        other = kind.__new__(kind)
        other.__dict__.update(self.__dict__)
        for name in getattr(kind, "__mypyc_attrs__", ()):
            if name != "__dict__":
                with contextlib.suppress(AttributeError):  # one never set on this state
                    setattr(other, name, getattr(self, name))
        return other

    def _copy_events_into(self, other: GameState[ActionT, ObservationT, EventT]) -> None:
        other._events = self._events.copy()
        other._audiences = self._audiences.copy()
        other._legal = None

    def _emit_public(self, event: EventT) -> None:
        self._events.append(event)
        self._audiences.append((1 << self.num_seats) - 1)

    def _emit_private(self, seat: int, event: EventT) -> None:
        self._events.append(event)
        self._audiences.append(1 << seat)

    def _emit_hidden(self, event: EventT) -> None:
        """An event no seat sees: only the omniscient record (the match log) keeps it."""
        self._events.append(event)
        self._audiences.append(0)


# --------------------------------------------------------------------------------------------
# The registry of games


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
