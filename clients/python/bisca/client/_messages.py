"""Server messages -> the SDK's values (:mod:`bisca.client._types`).

Game values go through the referee's own codec (:mod:`bisca.wire`), so a bot decodes
exactly what the referee encoded; this module only adds the arena-level envelopes.  Protobuf
enums become short lower-case words (``TIMEOUT_POLICY_FORFEIT`` -> ``"forfeit"``): bots compare
them with plain strings and never import generated code.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from bisca import wire
from bisca.v1 import arena_pb2

from ._types import (
    Clock,
    ClockSettings,
    MatchEnd,
    MatchStart,
    Rejection,
    Request,
    SeatInfo,
    SeatResult,
)


def enum_word(enum: EnumTypeWrapper, number: int, prefix: str) -> str:
    """``PREFIX_SOME_VALUE`` -> ``"some_value"``; an unknown number (a newer server) -> its
    digits, so a bot never crashes on a value it does not know."""
    try:
        name: str = enum.Name(number)
    except ValueError:
        return str(number)
    return name.removeprefix(prefix).lower()


def error_code_name(number: int) -> str:
    try:
        name: str = arena_pb2.ErrorCode.Name(number)
    except ValueError:
        return f"ERROR_CODE_{number}"
    return name


def request_from(message: arena_pb2.ActionRequest) -> Request[Any, Any]:
    """The engine-level request (raises ``MalformedActionError`` / ``ValueError`` when the
    observation or an action is not one of a game this SDK knows)."""
    game, observation = wire.decode_game_observation(message.observation)
    legal = tuple(wire.decode_game_action(game, action) for action in message.legal_actions)
    return Request(
        request_id=message.request_id,
        match_id=message.match_id,
        game=game,
        seat=message.seat,
        observation=observation,
        legal_actions=legal,
        clock=Clock(move_ms=message.clock.move_ms, bank_ms=message.clock.bank_ms),
        attempt=max(1, message.attempt),
    )


def match_start_from(message: arena_pb2.MatchStarted) -> MatchStart:
    game = wire.game_name(message.game)
    settings_message = message.settings if message.HasField("settings") else None
    clock = message.clock
    return MatchStart(
        match_id=message.match_id,
        game=game,
        seat=message.seat,
        seats=tuple(
            SeatInfo(seat=info.seat, bot_name=info.bot_name, bot_version=info.bot_version)
            for info in message.seats
        ),
        settings=wire.decode_game_settings(game, settings_message),
        clock=ClockSettings(
            move_ms=clock.move_ms,
            bank_ms=clock.bank_ms,
            policy=enum_word(arena_pb2.TimeoutPolicy, clock.policy, "TIMEOUT_POLICY_"),
            strikes=clock.strikes,
        ),
        resumed=message.resumed,
        deal_commitment=message.deal_commitment,
    )


def deal_matches(commitment: bytes, message: arena_pb2.MatchEnded) -> bool:
    """Whether the salt and seed ``message`` reveals hash, with its match id, to
    ``commitment``: SHA-256(salt || seed as 8 bytes big-endian || match id in UTF-8)."""
    revealed = wire.deal_commitment(message.deal_salt, message.seed, message.match_id)
    return bool(message.deal_salt) and revealed == commitment


def match_end_from(message: arena_pb2.MatchEnded, deal_verified: bool | None = None) -> MatchEnd:
    return MatchEnd(
        match_id=message.match_id,
        seat=message.seat,
        status=enum_word(arena_pb2.MatchStatus, message.status, "MATCH_STATUS_"),
        seats=tuple(
            SeatResult(
                seat=result.seat,
                bot_name=result.bot_name,
                score=result.score,
                rank=result.rank,
                end=enum_word(arena_pb2.SeatEnd, result.end, "SEAT_END_"),
                forfeit_reason=result.forfeit_reason,
                timeouts=result.timeouts,
                defaults_played=result.defaults_played,
                crashes=result.crashes,
                illegal_moves=result.illegal_moves,
            )
            for result in message.seats
        ),
        reason=message.reason,
        seed=message.seed,
        deal_salt=message.deal_salt,
        deal_verified=deal_verified,
        deal_sealed=message.deal_sealed,
    )


def rejection_from(message: arena_pb2.ActionRejected, action: Any) -> Rejection:
    return Rejection(
        request_id=message.request_id,
        match_id=message.match_id,
        seat=message.seat,
        code=enum_word(arena_pb2.RejectCode, message.code, "REJECT_CODE_"),
        message=message.message,
        attempts_left=message.attempts_left,
        action=action,
    )
