"""A bot that sends but never reads cannot grow the server's memory without bound: every
message it sends may be answered, so once its stream holds too many unread messages the
server cuts it (ABORTED: the bot may connect again)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import grpc
import pytest

from bisca.server.edge import ServerConfig, running_server
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.support.refusals import ENDLESS_REFUSALS
from tests.support.served import count_handed

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
            options=ENDLESS_REFUSALS,
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
                assert "more than 200 messages or" in await call.details()
                again = arena_pb2_grpc.ArenaStub(channel).Play()  # the server goes on
                await again.write(hello)
                assert (await again.read()).WhichOneof("kind") == "welcome"
                again.cancel()

    asyncio.run(scenario())


def test_nothing_after_a_hello_is_read_until_the_referee_answers_it(tmp_path: Path) -> None:
    """A stream whose Hello is still being judged (a wrong token waits seconds in the throttle;
    here the token check is held) costs the server its flow-control window and no more: the
    transport reads nothing after the Hello until the referee's first word.  Before, it read on
    and handed the referee everything (120 such streams of 64 x 60 KB messages took a server from
    94 MB to 1.1 GB).  Once the Hello is answered, what the bot pipelined arrives in order."""

    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path, listen=["127.0.0.1:0"], admin_token="admin", options=ENDLESS_REFUSALS
        )
        async with running_server(config) as server:
            token = server.store.bots.add("patient")
            referee = server.referee
            check_token = server.store.bots.for_token
            may_answer = threading.Event()

            def held_check(text: str) -> str | None:
                may_answer.wait(60)
                return check_token(text)

            server.store.bots.for_token = held_check  # type: ignore[method-assign]
            handed = count_handed(referee)
            bulky = pb.BotMessage(action=pb.ActionReply(request_id="x" * 60_000))
            async with grpc.aio.insecure_channel(server.address) as channel:
                call = arena_pb2_grpc.ArenaStub(channel).Play()
                await call.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)))

                async def pipeline() -> None:
                    for _ in range(64):
                        await call.write(bulky)

                writer = asyncio.ensure_future(pipeline())
                # Three seconds for the server to read what it would (before, all of it); the
                # window fills long before the 3.8 MB are written, and the writer waits.
                await asyncio.wait({writer}, timeout=3)
                assert not writer.done(), "all 64 messages were taken: the server was reading"
                assert len(handed.all) == 1, f"{len(handed.all)} messages read before the Welcome"
                may_answer.set()
                assert (await call.read()).WhichOneof("kind") == "welcome"
                await asyncio.wait_for(writer, 30)  # the rest flows once the Hello is answered
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 30
                while len(handed.all) < 65 and loop.time() < deadline:
                    await asyncio.sleep(0.05)
                assert len(handed.all) == 65, "what was pipelined did not all arrive"
                call.cancel()

    asyncio.run(scenario())
