"""The interface every game implements: :class:`GameState`, a whole match moved forward one
action at a time.

It lives apart from the errors, the result and the registry (``_core``) because it is on the hot
path of every match: the compiled engine (``_native.MODULES``) translates it with the games'
states, so that ``apply`` and ``legal_actions`` run as native code and the states' attributes
are native slots.  ``_core`` holds what mypyc cannot compile as it is (the error classes inherit
from two built-in exception types) and what is not hot (settings parsing, the registry).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from typing import ClassVar, Generic, Self, TypeVar

from ._core import IllegalActionError, MalformedActionError, Outcome

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
        attributes = getattr(self, "__dict__", None)
        if attributes is not None:  # a compiled state has no __dict__ (see above)
            other.__dict__.update(attributes)
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
