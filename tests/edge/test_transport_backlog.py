"""A bot that sends but never reads cannot grow the server's memory without bound: every
message it sends may be answered, so once its stream holds too many unread messages the
server cuts it (ABORTED: the bot may connect again)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from bisca.server.edge import ServerConfig, running_server
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc

#: A small receive window on the bot's side (no BDP probing), so the server's writes wait on
#: it after a few hundred messages instead of tens of thousands.
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 4096)]


def test_a_stream_that_is_never_read_is_cut(tmp_path: Path) -> None:
    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path,
            listen=["127.0.0.1:0"],
            admin_token="admin",
            max_unsent_messages=200,
        )
        async with running_server(config) as server:
            token = server.store.bots.add("deaf")
            hello = pb.BotMessage(hello=pb.Hello(token=token, protocol_version=1))
            referee = server.referee
            async with grpc.aio.insecure_channel(server.address, options=SMALL_WINDOW) as channel:
                call = arena_pb2_grpc.ArenaStub(channel).Play()
                await call.write(hello)
                assert (await call.read()).WhichOneof("kind") == "welcome"
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 30
                # Each empty message is answered with an error this bot does not read.
                while referee.online.get("deaf") and loop.time() < deadline:
                    try:
                        await asyncio.wait_for(call.write(pb.BotMessage()), 1)
                    except (grpc.aio.AioRpcError, asyncio.InvalidStateError, TimeoutError):
                        break
                assert "deaf" not in referee.online, "the unread stream was never cut"
                with pytest.raises(grpc.aio.AioRpcError):  # after what was sent before the cut
                    while await call.read() is not grpc.aio.EOF:
                        pass
                assert await call.code() == grpc.StatusCode.ABORTED
                assert "200 messages were waiting" in await call.details()
                again = arena_pb2_grpc.ArenaStub(channel).Play()  # the server goes on
                await again.write(hello)
                assert (await again.read()).WhichOneof("kind") == "welcome"
                again.cancel()

    asyncio.run(scenario())
