"""How the referee judges what a welcomed bot sends: pure functions of the open request and
the message, with no connection, channel or clock.

A message from a welcomed bot must be a ``BotMessage`` (within the size limit) that carries
an ``ActionReply``; the reply must name an open request (by its id) of a seat the bot's
connection holds; its action must decode, through the codec, to an action of the match's
game (else it is *malformed*) that the rules allow now (else it is *illegal*).  Each refusal
is a distinct error type carrying the message the referee answers with: an ``Error`` for a
message it drops, an ``ActionRejected`` for an action the seat may correct.  Before that, a
stream's Hello must say a protocol version the referee speaks and name only games it has
(:func:`verify_hello`; its token is the store's to know).

The match runner and ``bisca check-bot`` both judge through here, so a bot is answered the
same way, byte for byte, by both (``tests/conformance/test_one_protocol.py`` holds them to
it); a protocol change is made here once.  :func:`judge_reply` is the whole judgement as a
value, for code that wants a verdict rather than an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from bisca import wire
from bisca.engine import Action, MalformedActionError, MatchState
from bisca.v1 import arena_pb2 as pb

from . import _messages as messages
from ._connection import Inbound, Malformed, TooLarge

#: Attempts a request allows the referee's seats: a legal answer may follow two rejections.
MAX_REJECTIONS = 3
PROTOCOL_VERSION = pb.PROTOCOL_VERSION_CURRENT
#: The versions a Hello may say.  Version 1 promised events as they happen, so a version-1 bot
#: gets them so (``Hello.live_events`` is not in its contract); version 2 gets them inside its
#: seats' next messages unless its Hello asks for live events.
PROTOCOL_VERSIONS = (pb.PROTOCOL_VERSION_1, pb.PROTOCOL_VERSION_2)


class Verdict(Enum):
    """What the referee makes of one message from a bot."""

    #: A legal action for the open request: the seat plays it.
    TAKEN = "taken"
    #: Not an action of the match's game: ``ActionRejected`` (malformed), the seat may retry.
    MALFORMED_ACTION = "malformed action"
    #: An action the rules forbid now: ``ActionRejected`` (illegal), the seat may retry.
    ILLEGAL_ACTION = "illegal action"
    #: No open request has the reply's id (never sent, or settled: answered, timed out).
    UNKNOWN_REQUEST = "unknown request"
    #: The request was sent to a seat another connection holds.
    NOT_YOUR_SEAT = "not your seat"
    #: Bytes that are not a ``BotMessage``, or a ``BotMessage`` with nothing in it.
    MALFORMED_MESSAGE = "malformed message"
    #: A message over :data:`MAX_BOT_MESSAGE_BYTES`, refused unread.
    MESSAGE_TOO_LARGE = "message too large"
    #: A second Hello on a welcomed stream.
    DUPLICATE_HELLO = "duplicate hello"
    #: A Hello saying a protocol version the referee does not speak (the stream ends).
    UNSUPPORTED_PROTOCOL = "unsupported protocol"
    #: A Hello naming a game the referee does not have (the stream ends).
    UNSUPPORTED_GAME = "unsupported game"


@dataclass(frozen=True)
class Asked:
    """An open action request, as the judge needs it: its ids, the state it asks about (the
    seat to act is :attr:`seat`), the attempt being answered and how many it allows."""

    request_id: str
    match_id: str
    seat: int
    game: str
    state: MatchState
    attempt: int = 1
    attempts: int = MAX_REJECTIONS


class RefusedMessage(Exception):
    """A message the referee does not take: its verdict, why, and the message it answers."""

    def __init__(self, verdict: Verdict, reason: str, answer: pb.ServerMessage) -> None:
        super().__init__(reason)
        self.verdict = verdict
        self.reason = reason
        self.answer = answer


class RejectedReply(RefusedMessage):
    """A reply to an open request whose action is refused: answered ``ActionRejected``."""

    def __init__(self, verdict: Verdict, code: pb.RejectCode, reason: str, asked: Asked) -> None:
        answer = messages.action_rejected(
            asked.request_id,
            asked.match_id,
            asked.seat,
            code,
            reason,
            max(0, asked.attempts - asked.attempt),
        )
        super().__init__(verdict, reason, answer)
        self.code = code


class MalformedReply(RejectedReply):
    """The reply's action is not an action of the match's game at all."""

    def __init__(self, reason: str, asked: Asked) -> None:
        super().__init__(Verdict.MALFORMED_ACTION, pb.REJECT_CODE_MALFORMED_ACTION, reason, asked)


class IllegalReply(RejectedReply):
    """The reply's action is one of the game's, but the rules forbid it now."""

    def __init__(self, reason: str, asked: Asked) -> None:
        super().__init__(Verdict.ILLEGAL_ACTION, pb.REJECT_CODE_ILLEGAL_ACTION, reason, asked)


def verify_hello(hello: pb.Hello) -> frozenset[str]:
    """The games a Hello lists, when the referee speaks its protocol and has its games (its
    token is for the referee's store to know); raises :class:`RefusedMessage`, whose answer
    is a fatal ``Error``, saying why not."""
    if hello.protocol_version not in PROTOCOL_VERSIONS:
        answer = messages.unsupported_protocol_error(hello.protocol_version, PROTOCOL_VERSIONS)
        raise RefusedMessage(Verdict.UNSUPPORTED_PROTOCOL, answer.error.message, answer)
    games = set()
    for number in hello.games:
        try:
            games.add(wire.game_name(number))
        except ValueError:
            answer = messages.unsupported_game_error(number)
            raise RefusedMessage(Verdict.UNSUPPORTED_GAME, answer.error.message, answer) from None
    return frozenset(games)


def verify_inbound(message: Inbound) -> pb.BotMessage:
    """The ``BotMessage`` the transport parsed; raises :class:`RefusedMessage` for bytes that
    are not one or are over the size limit (the stream goes on)."""
    if isinstance(message, TooLarge):
        answer = messages.too_large_error(message.size)
        raise RefusedMessage(Verdict.MESSAGE_TOO_LARGE, answer.error.message, answer)
    if isinstance(message, Malformed):
        answer = messages.malformed_error(message.size, message.reason)
        raise RefusedMessage(Verdict.MALFORMED_MESSAGE, answer.error.message, answer)
    return message


def verify_reply_message(message: Inbound) -> pb.ActionReply:
    """The ``ActionReply`` in a message from a welcomed bot; raises :class:`RefusedMessage`
    for anything else (not a ``BotMessage``, a second Hello, an empty message)."""
    parsed = verify_inbound(message)
    kind = parsed.WhichOneof("kind")
    if kind == "hello":
        answer = messages.duplicate_hello_error()
        raise RefusedMessage(Verdict.DUPLICATE_HELLO, answer.error.message, answer)
    if kind is None:
        answer = messages.empty_message_error()
        raise RefusedMessage(Verdict.MALFORMED_MESSAGE, answer.error.message, answer)
    reply: pb.ActionReply = parsed.action
    return reply


def verify_addressed(request_id: str, asked: Asked | None, *, holds_seat: bool = True) -> Asked:
    """The open request a reply's ``request_id`` names (``asked``: the open request of that
    id, ``None`` when none is open), when the bot's connection holds its seat; raises
    :class:`RefusedMessage` otherwise."""
    if asked is None or asked.request_id != request_id:
        answer = messages.unknown_request_error(request_id)
        raise RefusedMessage(Verdict.UNKNOWN_REQUEST, answer.error.message, answer)
    if not holds_seat:
        answer = messages.not_your_seat_error(request_id, asked.match_id)
        raise RefusedMessage(Verdict.NOT_YOUR_SEAT, answer.error.message, answer)
    return asked


def verify_action(asked: Asked, action: pb.GameAction) -> Action:
    """The engine action of ``action`` when the rules allow it for ``asked``; raises
    :class:`MalformedReply` or :class:`IllegalReply` saying why not."""
    try:
        decoded: Action = wire.decode_game_action(asked.game, action)
    except MalformedActionError as problem:
        raise MalformedReply(str(problem), asked) from None
    reason = asked.state.why_illegal(decoded)
    if reason is not None:
        raise IllegalReply(reason, asked)
    return decoded


@dataclass(frozen=True)
class Judgement:
    """A verdict as a value: the action taken (``TAKEN``), or the message the referee answers
    with."""

    verdict: Verdict
    action: Action | None = None
    answer: pb.ServerMessage | None = None


def judge_reply(asked: Asked | None, message: Inbound, *, holds_seat: bool = True) -> Judgement:
    """Everything the referee decides about ``message`` from a welcomed bot, given the open
    request its id names (``None``: none): :func:`verify_reply_message`,
    :func:`verify_addressed` and :func:`verify_action` in turn."""
    try:
        reply = verify_reply_message(message)
        action = verify_action(
            verify_addressed(reply.request_id, asked, holds_seat=holds_seat), reply.action
        )
    except RefusedMessage as refused:
        return Judgement(refused.verdict, answer=refused.answer)
    return Judgement(Verdict.TAKEN, action=action)
