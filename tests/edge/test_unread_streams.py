"""A stream whose peer does not read what the server answers costs the server a bounded
amount, before and after its Hello (a real server on loopback, raw gRPC clients)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc

from bisca.server.edge import ServerConfig, running_server
from bisca.v1 import arena_pb2 as pb
from tests.support.refusals import ENDLESS_REFUSALS
from tests.support.served import count_handed

#: A client that reads little: a small window, no growing it.
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 4096)]


async def _until(condition: object, seconds: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition() and loop.time() < deadline:  # type: ignore[operator]
        await asyncio.sleep(0.02)
    return bool(condition())  # type: ignore[operator]


async def _welcomed_raw_stream(channel: grpc.aio.Channel, token: str) -> grpc.aio.StreamStreamCall:
    """A Play stream of bytes (no serializers), its Hello said and welcomed."""
    play = channel.stream_stream(
        "/bisca.v1.Arena/Play", request_serializer=None, response_deserializer=None
    )
    call = play()
    hello = pb.Hello(token=token, protocol_version=2, games=[pb.GAME_BELOTE])
    await call.write(pb.BotMessage(hello=hello).SerializeToString())
    welcome = pb.ServerMessage.FromString(await asyncio.wait_for(call.read(), 30))
    assert welcome.WhichOneof("kind") == "welcome"
    return call


def test_a_stream_whose_first_word_is_not_a_hello_is_answered_once_and_ended(
    tmp_path: Path,
) -> None:
    """Bytes that are not a BotMessage, before any Hello: one fatal answer naming them, and
    the stream ends; what it sends after is not read, so it cannot be answered."""

    async def scenario() -> None:
        config = ServerConfig(data_dir=tmp_path, listen=["127.0.0.1:0"], admin_token="admin")
        async with (
            running_server(config) as server,
            grpc.aio.insecure_channel(server.address) as channel,
        ):
            play = channel.stream_stream(
                "/bisca.v1.Arena/Play", request_serializer=None, response_deserializer=None
            )
            call = play()
            await call.write(b"\xff")
            answer = pb.ServerMessage.FromString(await asyncio.wait_for(call.read(), 30))
            assert answer.error.code == pb.ERROR_CODE_MALFORMED_MESSAGE
            assert answer.error.fatal
            assert await asyncio.wait_for(call.read(), 30) is grpc.aio.EOF
            assert await _until(lambda: not server.referee.connections, 30)

    asyncio.run(scenario())


def test_a_stream_the_server_ended_is_closed_though_its_bot_reads_nothing(
    tmp_path: Path,
) -> None:
    """A welcomed bot that reads nothing while its answers pile up (replies to requests not
    open, each answered), then its stream is ended by the referee: the end waits behind what
    it has not read, but no longer than the close grace — the stream, its queue and its
    connection do not stay for as long as the peer keeps the socket open."""

    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path,
            listen=["127.0.0.1:0"],
            admin_token="admin",
            close_grace_s=0.5,
            options=ENDLESS_REFUSALS,
        )
        async with running_server(config) as server:
            token = server.store.bots.add("deaf")
            referee = server.referee
            async with grpc.aio.insecure_channel(server.address, options=SMALL_WINDOW) as channel:
                call = await _welcomed_raw_stream(channel, token)
                stray = pb.BotMessage(action=pb.ActionReply(request_id="r-" + "x" * 60))
                for _ in range(2_000):  # ~400 KB of answers, far over what the peer reads
                    await call.write(stray.SerializeToString())
                (connection,) = referee.connections.values()
                assert await _until(lambda: connection.id not in referee.connections, 0) is False
                connection.close()  # the referee ends the stream (as it ends a local bot's)
                assert await _until(lambda: not referee.connections, 30), (
                    "the stream the referee ended stays while its bot reads nothing"
                )
                call.cancel()

    asyncio.run(scenario())


def test_nothing_is_read_from_a_stream_the_referee_ended(tmp_path: Path) -> None:
    """The referee ends a welcomed bot's stream (here at once; a refusal past the bound, a
    local bot's end), which its bot does not read: for the close grace the stream stays, and
    before, every message its bot sent meanwhile was still read and parsed, thousands a DATA
    frame (review 43: 81% of a core).  Now nothing more is read from it."""

    async def scenario() -> int:
        config = ServerConfig(
            data_dir=tmp_path, listen=["127.0.0.1:0"], admin_token="admin", close_grace_s=5.0
        )
        async with running_server(config) as server:
            token = server.store.bots.add("deaf")
            referee = server.referee
            handed = count_handed(referee)
            async with grpc.aio.insecure_channel(server.address, options=SMALL_WINDOW) as channel:
                call = await _welcomed_raw_stream(channel, token)
                # Answers it does not read, more than its window holds: the server's writes wait.
                stray = pb.BotMessage(action=pb.ActionReply(request_id="r-" + "x" * 60))
                for _ in range(30):
                    await call.write(stray.SerializeToString())
                assert await _until(lambda: len(handed.all) == 31, 30)
                (connection,) = referee.connections.values()
                connection.close()
                before = len(handed.all)
                for _ in range(200):
                    await call.write(pb.BotMessage().SerializeToString())
                await asyncio.sleep(1.0)
                assert connection.id in referee.connections, "the stream is in its grace"
                call.cancel()
                return len(handed.all) - before

    read_after = asyncio.run(scenario())
    assert read_after <= 1, f"{read_after} messages read after the referee ended the stream"
