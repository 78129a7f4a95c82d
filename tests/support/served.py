"""A match on an in-process server (``running_server``) whose seats a silent bot holds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc

from bisca.engine import GAMES
from bisca.server.edge import ArenaServer
from bisca.server.referee import MatchPlan, MatchRunner
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
