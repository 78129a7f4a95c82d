"""The requests of in-process matches: a :class:`~bisca.client.Request` whose observation is
built when the bot first reads it.

Building a seat's observation costs about twice the engine's own work for a move, and a bot
that looks at the legal actions only (a random bot, a bot still being written) never needs it.
So the observation of a local request is made from the engine's state on first read.  It is
exactly the observation the request was made for: the state does not move while the callback
runs, and when the callback returns the runner settles the request, building the
observation there and then if anything still holds the request (the bot kept it in a list, a
closure, ...).  On an interpreter that cannot tell (no ``sys.getrefcount``), it always does.
"""

from __future__ import annotations

import sys
from typing import Any

from bisca.engine import MatchState

from .._types import Clock, Request

_SLOTS = {name: Request.__dict__[name] for name in Request.__dataclass_fields__}
_OBSERVATION = _SLOTS["observation"]
_REFCOUNT = getattr(sys, "getrefcount", None)


class LocalRequest(Request[Any, Any]):
    """A request of :mod:`bisca.client.local`: a :class:`Request` in every way (equality,
    ``repr``, :func:`dataclasses.replace`), its observation built on first read."""

    __slots__ = ("_state",)

    def __init__(
        self,
        request_id: str,
        match_id: str,
        game: str,
        seat: int,
        observation: Any,
        legal_actions: tuple[Any, ...],
        clock: Clock,
        attempt: int = 1,
    ) -> None:
        values = (request_id, match_id, game, seat, observation, legal_actions, clock, attempt)
        for slot, value in zip(_SLOTS.values(), values, strict=True):
            slot.__set__(self, value)
        _STATE.__set__(self, None)

    @property
    def observation(self) -> Any:
        try:
            return _OBSERVATION.__get__(self)
        except AttributeError:
            state: MatchState | None = _STATE.__get__(self)
            if state is None:  # only a weak reference could have kept it: nothing to build from
                raise RuntimeError(
                    "this local request was let go unread when its callback returned"
                ) from None
            observation = state.observation(_SLOTS["seat"].__get__(self))
            _OBSERVATION.__set__(self, observation)
            _STATE.__set__(self, None)
            return observation


_STATE = LocalRequest.__dict__["_state"]
_SET_ID = _SLOTS["request_id"].__set__
_SET_MATCH = _SLOTS["match_id"].__set__
_SET_GAME = _SLOTS["game"].__set__
_SET_SEAT = _SLOTS["seat"].__set__
_SET_LEGAL = _SLOTS["legal_actions"].__set__
_SET_CLOCK = _SLOTS["clock"].__set__
_SET_ATTEMPT = _SLOTS["attempt"].__set__
_SET_STATE = _STATE.__set__
_NEW = object.__new__


def pending(
    state: MatchState,
    request_id: str,
    match_id: str,
    game: str,
    seat: int,
    legal_actions: tuple[Any, ...],
    clock: Clock,
) -> LocalRequest:
    """The request of ``seat`` now, its observation still to be built from ``state``."""
    request: LocalRequest = _NEW(LocalRequest)
    _SET_ID(request, request_id)
    _SET_MATCH(request, match_id)
    _SET_GAME(request, game)
    _SET_SEAT(request, seat)
    _SET_LEGAL(request, legal_actions)
    _SET_CLOCK(request, clock)
    _SET_ATTEMPT(request, 1)
    _SET_STATE(request, state)
    return request


def settle(request: LocalRequest, holders: int) -> None:
    """Called once the callback returned, before the state moves on, with how many references
    to ``request`` there are (``sys.getrefcount``, or -1 where there is none): a request that
    something besides the runner holds gets its observation now; the others are let go
    unbuilt (the runner inlines the test, ``holders > UNSHARED``, on its hot path)."""
    if holders < 0 or holders > UNSHARED:
        request.observation  # noqa: B018 - built now, while the state is the request's


def _unshared() -> int:
    """What ``sys.getrefcount`` says of a request that only the runner's variable holds."""
    if _REFCOUNT is None:
        return -1
    probe: LocalRequest = _NEW(LocalRequest)
    return int(_REFCOUNT(probe))


#: ``sys.getrefcount`` of a request held by one variable only (-1: no such function).
UNSHARED = _unshared()
