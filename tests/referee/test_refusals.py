"""A welcomed bot's messages the referee cannot use are refused (an error, the stream going on),
but not without end: each costs a parse, a judgement and an answer, and one bot sending empty
messages in a loop (thousands packed in one DATA frame) took a core of its arena (review 42).
A stream may have a few refused, and two more for each message a match sent it (an honest bot's
refused messages are its late replies, one per request at most); past that it ends."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc

from bisca.server.edge import ServerConfig, running_server
from bisca.server.referee import Connection
from bisca.server.referee._connection import (
    MOST_REFUSALS_BANKED,
    REFUSALS_AT_START,
    REFUSALS_PER_MESSAGE_SENT,
)
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc


def test_refusals_are_allowed_by_the_messages_a_match_sent_and_banked_to_a_bound() -> None:
    written: list[bytes] = []
    closed: list[bool] = []
    connection = Connection("c1", written.append, lambda: closed.append(True))
    refusal = pb.ServerMessage(error=pb.Error(code=pb.ERROR_CODE_UNKNOWN_REQUEST, message="no"))
    for _ in range(REFUSALS_AT_START):
        connection.refused(refusal)
    connection.deliver(b"a request")
    for _ in range(REFUSALS_PER_MESSAGE_SENT):
        connection.refused(refusal)
    assert not closed and connection.alive
    connection.refused(refusal)
    assert closed == [True] and not connection.alive
    last = pb.ServerMessage.FromString(written[-1])
    assert last.error.fatal and last.error.code == pb.ERROR_CODE_UNKNOWN_REQUEST
    assert "more of this bot's messages were refused than the referee's" in last.error.message

    banked = Connection("c2", written.append, lambda: None)
    for _ in range(10 * MOST_REFUSALS_BANKED):
        banked.deliver(b"an event")
    assert banked.refusals_left == MOST_REFUSALS_BANKED


def test_a_welcomed_bot_sending_empty_messages_in_a_loop_loses_its_stream(tmp_path: Path) -> None:
    async def scenario() -> list[pb.ServerMessage]:
        config = ServerConfig(data_dir=tmp_path / "data", listen=["127.0.0.1:0"], admin_token="a")
        async with running_server(config) as server:
            token = server.store.bots.add("noisy")
            async with grpc.aio.insecure_channel(server.address) as channel:
                call = arena_pb2_grpc.ArenaStub(channel).Play()
                await call.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)))
                assert (await call.read()).WhichOneof("kind") == "welcome"
                answers: list[pb.ServerMessage] = []
                for _ in range(REFUSALS_AT_START + 10):
                    await call.write(pb.BotMessage())
                    answers.append(await call.read())
                    if answers[-1].error.fatal:
                        break
                assert await call.read() is grpc.aio.EOF, "the stream goes on"
                return answers

    answers = asyncio.run(scenario())
    assert [a.error.fatal for a in answers] == [False] * REFUSALS_AT_START + [True], answers[-2:]
    assert answers[0].error.code == pb.ERROR_CODE_MALFORMED_MESSAGE
