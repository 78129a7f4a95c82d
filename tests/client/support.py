"""Shared helpers of the SDK's tests: requests and server messages built from real engine states,
the way the referee builds them (through the codec), and states advanced to a given phase."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from bisca import wire
from bisca.client import Clock, Request
from bisca.engine import GameState, bestia, new_match
from bisca.v1 import arena_pb2

State = GameState[Any, Any, Any]


def to_act(state: State) -> int:
    """The seat to act (the match must not be over)."""
    seat = state.to_act
    assert seat is not None, "the match is over"
    return seat


def request_for(state: State, request_id: str = "r1", match_id: str = "m1") -> Request[Any, Any]:
    """The SDK request of the seat to act in ``state`` (what the session would build)."""
    seat = to_act(state)
    return Request(
        request_id=request_id,
        match_id=match_id,
        game=state.GAME,
        seat=seat,
        observation=state.observation(seat),
        legal_actions=tuple(state.legal_actions()),
        clock=Clock(move_ms=1000, bank_ms=5000),
    )


def action_request(
    state: State, request_id: str = "r1", match_id: str = "m1", attempt: int = 1
) -> arena_pb2.ServerMessage:
    """The ``ActionRequest`` the referee sends the seat to act, through the wire and back."""
    game = state.GAME
    seat = to_act(state)
    message = arena_pb2.ServerMessage(
        action_request=arena_pb2.ActionRequest(
            request_id=request_id,
            match_id=match_id,
            seat=seat,
            observation=wire.encode_game_observation(game, state.observation(seat)),
            legal_actions=[wire.encode_game_action(game, a) for a in state.legal_actions()],
            clock=arena_pb2.ClockState(move_ms=1000, bank_ms=5000),
            attempt=attempt,
        )
    )
    return through_wire(message)


def belote_started(
    match_id: str, seat: int, commitment: bytes, *, resumed: bool = False
) -> arena_pb2.ServerMessage:
    """A Belote ``MatchStarted`` of four seats committing to ``commitment``, through the wire."""
    return through_wire(
        arena_pb2.ServerMessage(
            match_started=arena_pb2.MatchStarted(
                match_id=match_id,
                game=arena_pb2.GAME_BELOTE,
                seat=seat,
                seats=[arena_pb2.SeatInfo(seat=n, bot_name="x") for n in range(4)],
                resumed=resumed,
                deal_commitment=commitment,
            )
        )
    )


def through_wire(message: arena_pb2.ServerMessage) -> arena_pb2.ServerMessage:
    """``message`` serialized and parsed again, as a bot receives it."""
    return arena_pb2.ServerMessage.FromString(message.SerializeToString())


def reply_action(game: str, reply: arena_pb2.BotMessage) -> Any:
    """The engine action in an ``ActionReply``."""
    assert reply.WhichOneof("kind") == "action"
    parsed = arena_pb2.BotMessage.FromString(reply.SerializeToString())
    return wire.decode_game_action(game, parsed.action.action)


def advance(
    game: str,
    seed: int,
    until: Callable[[State], bool],
    settings: Any = None,
    limit: int = 10_000,
) -> State:
    """A match of ``game`` played with random legal actions until ``until(state)`` holds."""
    rng = random.Random(seed)
    for attempt in range(50):
        state = new_match(game, settings, seed=seed + attempt)
        for _ in range(limit):
            if state.is_over:
                break
            if until(state):
                return state
            state.apply(rng.choice(state.legal_actions()))
    raise AssertionError(f"no {game} state satisfying {until} from seed {seed}")


def a_card_not_in(hand: Any) -> Any:
    """A wire card of the Bestia deck that ``hand`` (wire cards) does not hold."""
    for card in bestia.DECK:
        wired = wire.encode_game_event("bestia", 0, bestia.HandLooked(0, (card,)))
        if wired.bestia.hand_looked.cards[0] not in hand:
            return wired.bestia.hand_looked.cards[0]
    raise AssertionError("a hand holds the whole deck")
