"""A match on an in-process server (``running_server``) whose seats a silent bot holds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import grpc

from bisca.engine import GAMES
from bisca.server.edge import ArenaServer
from bisca.server.referee import Inbound, MatchPlan, MatchRunner, Referee
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc


@contextlib.asynccontextmanager
async def asked_match(server: ArenaServer, bot: str) -> AsyncIterator[MatchRunner]:
    """A one-deal Belote match of ``bot`` (registered here) in all four seats, over one raw
    gRPC stream that never answers, once its first request is out (the stream is held while
    the block runs)."""
    token = server.store.bots.add(bot)
    async with grpc.aio.insecure_channel(server.address) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        hello = pb.Hello(token=token, protocol_version=2, games=[pb.GAME_BELOTE])
        await call.write(pb.BotMessage(hello=hello))
        assert (await call.read()).WhichOneof("kind") == "welcome"
        plan = MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), (bot,) * 4)
        runner = await server.in_trio(server.referee.create_match, plan)
        while (await asyncio.wait_for(call.read(), 30)).WhichOneof("kind") != "action_request":
            pass
        try:
            yield runner
        finally:
            call.cancel()


@dataclass
class Handed:
    """The messages the edge handed its referee, by connection id: ``crossed`` into trio
    (``message_received``), or taken in the loop's own turn (``reply_received``: a welcomed
    bot's)."""

    crossed: list[str] = field(default_factory=list)
    in_turn: list[str] = field(default_factory=list)

    @property
    def all(self) -> list[str]:
        return self.crossed + self.in_turn


def count_handed(referee: Referee) -> Handed:
    """Counts what the edge hands ``referee`` from now on (each still handled as before)."""
    handed = Handed()
    receive, take_reply = referee.message_received, referee.reply_received

    def crossing(connection_id: str, message: Inbound) -> None:
        handed.crossed.append(connection_id)
        receive(connection_id, message)

    def taken(connection_id: str, message: Inbound) -> None:
        handed.in_turn.append(connection_id)
        take_reply(connection_id, message)

    referee.message_received = crossing  # type: ignore[method-assign]
    referee.reply_received = taken  # type: ignore[method-assign]
    return handed
