"""The ``ServerMessage`` values the referee builds whole: the start of a match, a rejection,
and the error every refused message from a bot draws.

They are public so that ``bisca check-bot`` sends a bot exactly what the referee would: one
builder per message, whatever drives the bot.  (The messages built from parts serialized
once, a request, an event batch, a match's end, are in ``_outgoing.py``.)
"""

from __future__ import annotations

from collections.abc import Sequence

from bisca import wire
from bisca.engine import GAMES, Settings
from bisca.v1 import arena_pb2 as pb

from ._clock import ClockSettings, Policy

#: Bot messages above this size are refused with an error (the stream goes on).
MAX_BOT_MESSAGE_BYTES = 64 * 1024

_POLICY_NUMBERS = {
    Policy.DEFAULT: pb.TIMEOUT_POLICY_DEFAULT,
    Policy.FORFEIT: pb.TIMEOUT_POLICY_FORFEIT,
    Policy.STRIKES: pb.TIMEOUT_POLICY_STRIKES,
}


def clock_message(clock: ClockSettings) -> pb.ClockSettings:
    return pb.ClockSettings(
        move_ms=clock.move_ms,
        bank_ms=clock.bank_ms,
        policy=_POLICY_NUMBERS[clock.policy],
        strikes=clock.strikes if clock.policy is Policy.STRIKES else 0,
    )


def match_started(
    match_id: str,
    game: str,
    settings: Settings,
    seat: int,
    seats: Sequence[pb.SeatInfo],
    clock: pb.ClockSettings,
    *,
    resumed: bool,
    deal_commitment: bytes,
) -> pb.ServerMessage:
    """A seat's ``MatchStarted`` (``resumed`` for a seat whose bot came back)."""
    return pb.ServerMessage(
        match_started=pb.MatchStarted(
            match_id=match_id,
            game=wire.game_enum(game),
            settings=wire.encode_game_settings(game, settings),
            seat=seat,
            seats=seats,
            clock=clock,
            resumed=resumed,
            deal_commitment=deal_commitment,
        )
    )


def welcome(
    protocol_version: int,
    bot_name: str,
    server_version: str,
    connection_id: str,
    *,
    live_events: bool,
) -> pb.ServerMessage:
    """The answer to an accepted Hello."""
    return pb.ServerMessage(
        welcome=pb.Welcome(
            protocol_version=protocol_version,
            bot_name=bot_name,
            server_version=server_version,
            connection_id=connection_id,
            live_events=live_events,
        )
    )


def action_rejected(
    request_id: str,
    match_id: str,
    seat: int,
    code: pb.RejectCode,
    reason: str,
    attempts_left: int,
) -> pb.ServerMessage:
    return pb.ServerMessage(
        action_rejected=pb.ActionRejected(
            request_id=request_id,
            match_id=match_id,
            seat=seat,
            code=code,
            message=reason,
            attempts_left=attempts_left,
        )
    )


def error(
    code: pb.ErrorCode,
    message: str,
    *,
    fatal: bool = False,
    request_id: str = "",
    match_id: str = "",
) -> pb.ServerMessage:
    return pb.ServerMessage(
        error=pb.Error(
            code=code, message=message, fatal=fatal, request_id=request_id, match_id=match_id
        )
    )


def unsupported_protocol_error(version: int, versions: Sequence[int]) -> pb.ServerMessage:
    return error(
        pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
        f"protocol version {version} is not supported; this server speaks "
        f"{' and '.join(map(str, versions))}",
        fatal=True,
    )


def unsupported_game_error(number: int) -> pb.ServerMessage:
    return error(
        pb.ERROR_CODE_UNSUPPORTED_GAME,
        f"game {number} is not played here; known: {', '.join(sorted(GAMES))}",
        fatal=True,
    )


def unknown_token_error() -> pb.ServerMessage:
    return error(pb.ERROR_CODE_UNKNOWN_TOKEN, "unknown bot token", fatal=True)


def fatal(answer: pb.ServerMessage) -> pb.ServerMessage:
    """``answer``, an error, as the last word of a stream the referee ends."""
    ended = pb.ServerMessage()
    ended.CopyFrom(answer)
    ended.error.fatal = True
    return ended


def hello_required_error() -> pb.ServerMessage:
    return error(pb.ERROR_CODE_HELLO_REQUIRED, "the first message must be a Hello", fatal=True)


def too_large_error(size: int) -> pb.ServerMessage:
    return error(
        pb.ERROR_CODE_MESSAGE_TOO_LARGE,
        f"message of {size} bytes is over the {MAX_BOT_MESSAGE_BYTES}-byte limit; it was ignored",
    )


def malformed_error(size: int, reason: str) -> pb.ServerMessage:
    return error(
        pb.ERROR_CODE_MALFORMED_MESSAGE,
        f"{size} bytes that are not a bisca.v1.BotMessage ({reason}); they were ignored",
    )


def empty_message_error() -> pb.ServerMessage:
    return error(pb.ERROR_CODE_MALFORMED_MESSAGE, "an empty BotMessage (no hello, no action)")


def duplicate_hello_error() -> pb.ServerMessage:
    return error(pb.ERROR_CODE_DUPLICATE_HELLO, "this stream already said hello")


#: The most of a request id a refusal repeats: the referee's own ids are far shorter, and a
#: bot's 64 KiB id must not come back several times larger (``repr`` alone quadruples bytes).
ECHOED_ID_CHARS = 64


def unknown_request_error(request_id: str) -> pb.ServerMessage:
    shown = request_id[:ECHOED_ID_CHARS]
    cut = "..." if len(request_id) > len(shown) else ""
    return error(
        pb.ERROR_CODE_UNKNOWN_REQUEST,
        f"no open action request {shown!r}{cut} (answered already, timed out, or never sent); "
        "the reply was discarded",
        request_id=shown,
    )


def not_your_seat_error(request_id: str, match_id: str) -> pb.ServerMessage:
    return error(
        pb.ERROR_CODE_NOT_YOUR_SEAT,
        f"request {request_id!r} was sent to another connection's seat",
        request_id=request_id,
        match_id=match_id,
    )
