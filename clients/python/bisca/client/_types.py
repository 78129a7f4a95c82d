"""The values a bot sees: requests, match starts and ends, rejections, and the SDK's errors.

They hold *engine* values (``bisca.engine.belote.BeloteObservation``, ``PlayCard``, ...), already
decoded from protobuf, so a bot is written against the same types the referee's rules use and
never touches a generated message.  Every value is a frozen dataclass: a bot cannot change what
the SDK later compares its answer against.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._text import printable

ObservationT = TypeVar("ObservationT")
ActionT = TypeVar("ActionT")


@dataclass(frozen=True, slots=True)
class Clock:
    """The time the referee gives this move: ``move_ms`` for it, then ``bank_ms`` of bank left
    for the whole match, drawn on when the move runs over."""

    move_ms: int
    bank_ms: int


@dataclass(frozen=True, slots=True)
class Request(Generic[ObservationT, ActionT]):
    """One decision to take: everything a stateless bot needs to answer.

    ``observation`` is the seat's complete view of the table and ``legal_actions`` every action
    the rules allow now, in the engine's canonical order; a bot returns one of them.
    ``attempt`` is 1 for a first answer and 2, 3, ... when the SDK asks again after the referee
    rejected the previous answer to the same request.
    """

    request_id: str
    match_id: str
    game: str
    seat: int
    observation: ObservationT
    legal_actions: tuple[ActionT, ...]
    clock: Clock
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class SeatInfo:
    seat: int
    bot_name: str
    bot_version: str


@dataclass(frozen=True, slots=True)
class ClockSettings:
    """A match's clock.  ``policy`` is ``"default"``, ``"forfeit"`` or ``"strikes"`` (with
    ``strikes`` the number of timeouts before the forfeit)."""

    move_ms: int
    bank_ms: int
    policy: str
    strikes: int


@dataclass(frozen=True, slots=True)
class MatchStart:
    """A match this connection plays a seat of.  ``resumed`` is true when it is sent again
    after a reconnect: the match was already under way.  ``deal_commitment`` is the server's
    SHA-256(salt || seed || match id), fixed before the first card (empty when the server
    sends none); the SDK checks it when the match ends (:attr:`MatchEnd.deal_verified`)."""

    match_id: str
    game: str
    seat: int
    seats: tuple[SeatInfo, ...]
    #: The game's engine settings dataclass (``BeloteSettings``, ...).
    settings: Any
    clock: ClockSettings
    resumed: bool
    deal_commitment: bytes = b""


@dataclass(frozen=True, slots=True)
class SeatResult:
    """How one seat came out.  ``rank`` 0 is first, equal scores share a rank; ``end`` is
    ``"completed"`` or ``"forfeited"`` (with ``forfeit_reason``); ``crashes`` (its bot process
    ended during the match), ``timeouts``, ``illegal_moves`` (answers rejected) and
    ``defaults_played`` (moves the referee played for it) say what went wrong for it."""

    seat: int
    bot_name: str
    score: int
    rank: int
    end: str
    forfeit_reason: str
    timeouts: int
    defaults_played: int
    crashes: int = 0
    illegal_moves: int = 0


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """The end of a match.  ``status`` is ``"finished"`` or ``"failed"`` (then ``reason`` says
    why); ``seed`` is revealed so the match can be replayed, and ``deal_salt`` so that the deal
    can be checked.

    ``deal_verified`` is the SDK's check of the deal: ``True`` when SHA-256(``deal_salt`` ||
    ``seed`` as 8 bytes big-endian || ``match_id`` in UTF-8) equals the commitment the server
    sent in this match's ``MatchStarted`` and the cards this seat was shown at the start are
    the ones the engine deals from ``seed`` (``_deal.py``; later deals depend on the moves and
    on hidden cards: the match's log checks those), ``False`` when either is not so (or the
    server revealed nothing to check with; the SDK logs an error), ``None`` when there is no
    commitment to
    check: the server sent none, or this connection never got the match's start, or the deal
    is sealed (``deal_sealed``: a duplicate-deal twin of the match is still being played, so
    ``seed`` is 0 and ``deal_salt`` empty until it is over)."""

    match_id: str
    seat: int
    status: str
    seats: tuple[SeatResult, ...]
    reason: str
    seed: int
    deal_salt: bytes = b""
    deal_verified: bool | None = None
    deal_sealed: bool = False

    @property
    def mine(self) -> SeatResult | None:
        """This connection's seat's result (``None`` for a match that never started)."""
        for result in self.seats:
            if result.seat == self.seat:
                return result
        return None


@dataclass(frozen=True, slots=True)
class Rejection:
    """The referee refused an answer.  ``code`` is ``"illegal_action"`` or
    ``"malformed_action"``; ``action`` is what the SDK sent (``None`` if it is not known)."""

    request_id: str
    match_id: str
    seat: int
    code: str
    message: str
    attempts_left: int
    action: Any


Bot = Callable[[Request[Any, Any]], Any]
"""A bot: from a request to one of its legal actions."""

OnMatchStart = Callable[[MatchStart], None]
OnEvent = Callable[[str, int, Any], None]
"""Called with ``(match_id, seat, event)`` for every engine event the seat may see."""
OnMatchEnd = Callable[[MatchEnd], None]
OnRejected = Callable[[Rejection], None]


class BotRejected(Exception):
    """The server refused this bot with a fatal error (unknown token, unsupported protocol, ...).

    Retrying cannot help, so :func:`bisca.client.run` raises it instead of reconnecting.
    ``code`` is the ``bisca.v1.ErrorCode`` name, e.g. ``"ERROR_CODE_UNKNOWN_TOKEN"``;
    ``message`` is the server's text as sent, and ``str()`` of the exception the same text
    without control characters (:func:`bisca.client._text.printable`).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(printable(f"the server refused the bot: {code}: {message}"))
        self.code = code
        self.message = message


class BotCrashed(Exception):
    """The bot's own code raised (its ``bot`` callable or a hook), or the bot answered
    something that is not an action of the game, and the session was not told to keep going:
    the bot ends, as a crash, so the arena counts it and the author sees the bug (the
    traceback, or the answer, printed on stderr when it happened; an exception is chained as
    ``__cause__``).  ``run(..., keep_going=True)`` plays a fallback action instead.  ``what``
    says what the bot did ("raised (traceback above)", "returned None, ...")."""

    def __init__(self, where: str, what: str = "raised (traceback above)") -> None:
        super().__init__(
            f"the bot's {printable(where)} {printable(what)}; the bot ends "
            "(keep_going=True, or --keep-going for `bisca bot`, plays on with a fallback)"
        )
        self.where = where
        self.what = what


class ConnectionLost(ConnectionError):
    """The connection to the server failed and could not be re-established in time (or
    reconnecting was turned off).  The gRPC error is chained as ``__cause__``."""
