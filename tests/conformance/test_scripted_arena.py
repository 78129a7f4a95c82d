"""What a bot sends check-bot costs the server no more than the checker reads
(``conformance/_arena.py``): a stream is read on only while fewer than ``MAX_UNREAD`` of its
messages wait, and a run holds at most ``MAX_OPEN_LINKS`` streams.  Before, a bot that sent
600 MB on a stream the checker never read grew the gate's process by 615 MB (review 38d)."""

from __future__ import annotations

import asyncio

import grpc

from bisca.server.conformance._arena import (
    MAX_OPEN_LINKS,
    MAX_UNREAD,
    Link,
    Received,
    ScriptedArena,
)
from bisca.v1 import arena_pb2 as pb
from tests.support.waiting import loop_until


def _play(channel: grpc.aio.Channel) -> grpc.aio.StreamStreamCall:
    play = channel.stream_stream(
        "/bisca.v1.Arena/Play",
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.ServerMessage.FromString,
    )
    return play()


def test_a_stream_is_read_no_further_than_the_checker_takes() -> None:
    sent = MAX_UNREAD * 4

    async def scenario() -> None:
        arena = ScriptedArena()
        address = await arena.start()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                call = _play(channel)
                replies = [
                    pb.BotMessage(action=pb.ActionReply(request_id=f"r{n}")) for n in range(sent)
                ]
                writer = asyncio.create_task(_write_all(call, replies))
                link: Link = await asyncio.wait_for(arena.links.get(), 30)
                await loop_until(lambda: link._inbox.qsize() == MAX_UNREAD, "the inbox full")
                taken = []
                for _ in range(sent):
                    assert link._inbox.qsize() <= MAX_UNREAD
                    item = await asyncio.wait_for(link.take(), 30)
                    assert isinstance(item, Received)
                    taken.append(item.message.action.request_id)  # type: ignore[union-attr]
                assert taken == [f"r{n}" for n in range(sent)]  # all of it, in order, in turn
                await writer
                call.cancel()
        finally:
            await arena.stop()

    asyncio.run(scenario())


async def _write_all(call: grpc.aio.StreamStreamCall, messages: list[pb.BotMessage]) -> None:
    for message in messages:
        await call.write(message)


def test_a_run_holds_only_so_many_streams() -> None:
    async def scenario() -> None:
        arena = ScriptedArena()
        address = await arena.start()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                calls = [_play(channel) for _ in range(MAX_OPEN_LINKS)]
                for call in calls:
                    await call.write(pb.BotMessage(hello=pb.Hello(token="t")))
                await loop_until(lambda: arena.links.qsize() == MAX_OPEN_LINKS, "the streams open")
                refused = _play(channel)
                assert await refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert f"{MAX_OPEN_LINKS} streams open" in str(await refused.details())
                calls.pop().cancel()  # one ends: its place is free
                again = _play(channel)
                await again.write(pb.BotMessage(hello=pb.Hello(token="t")))
                await loop_until(lambda: arena.links.qsize() == MAX_OPEN_LINKS + 1, "one more")
                for call in (*calls, again):
                    call.cancel()
        finally:
            await arena.stop()

    asyncio.run(scenario())
