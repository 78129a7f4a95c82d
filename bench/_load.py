"""Load driver for ``bench/arena.py``: many bots (or echo clients) in one asyncio process.

``python -m bench._load arena ADDRESS ADMIN_TOKEN SERVER_PID MATCHES DEALS TOKEN...``
connects one Play stream per token, says hello, creates MATCHES Belote matches of 4 of its
bots through the admin API, answers every request with a random legal action, and prints one
JSON line: wall time, decisions, the server's CPU seconds over the run, messages and bytes.

``python -m bench._load echo ADDRESS SERVER_PID STREAMS DECISIONS REPLY_BYTES``
runs STREAMS ping-pong streams against ``bench/_echo.py``, DECISIONS round trips each.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass

import grpc

from bisca.v1 import arena_pb2 as pb
from bisca.v1 import belote_pb2

CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]


@dataclass
class Stats:
    wall_s: float = 0.0
    decisions: int = 0
    server_cpu_s: float = 0.0
    messages_in: int = 0
    bytes_in: int = 0
    messages_out: int = 0
    bytes_out: int = 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, from /proc."""
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _sized(data: bytes) -> tuple[int, bytes]:
    return len(data), data


async def arena_bot(
    address: str,
    token: str,
    stats: Stats,
    welcomed: asyncio.Event,
    finished: asyncio.Event,
    matches_left: list[int],
) -> None:
    rng = random.Random(token)
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        play = channel.stream_stream(
            "/bisca.v1.Arena/Play", request_serializer=lambda b: b, response_deserializer=_sized
        )
        call = play()
        hello = pb.BotMessage(
            hello=pb.Hello(token=token, bot_name="load", protocol_version=1, games=[pb.GAME_BELOTE])
        ).SerializeToString()
        await call.write(hello)
        async for size, raw in call:
            stats.messages_in += 1
            stats.bytes_in += size
            message = pb.ServerMessage.FromString(raw)
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                welcomed.set()
            elif kind == "action_request":
                request = message.action_request
                reply = pb.BotMessage(
                    action=pb.ActionReply(
                        request_id=request.request_id, action=rng.choice(request.legal_actions)
                    )
                ).SerializeToString()
                stats.decisions += 1
                stats.messages_out += 1
                stats.bytes_out += len(reply)
                await call.write(reply)
            elif kind == "match_ended" and message.match_ended.seat == 0:
                matches_left[0] -= 1
                if matches_left[0] == 0:
                    finished.set()
            if finished.is_set():
                call.cancel()
                return


async def run_arena(
    address: str,
    admin: str,
    pid: int,
    matches: int,
    deals: int,
    tokens: list[str],
    names: list[str],
) -> Stats:
    stats = Stats()
    finished = asyncio.Event()
    left = [matches]
    welcomed = [asyncio.Event() for _ in tokens]
    tasks = [
        asyncio.ensure_future(arena_bot(address, token, stats, event, finished, left))
        for token, event in zip(tokens, welcomed, strict=True)
    ]
    for event in welcomed:
        await event.wait()
    async with grpc.aio.insecure_channel(address) as channel:
        create = channel.unary_unary(
            "/bisca.v1.Arena/CreateMatch",
            request_serializer=pb.CreateMatchRequest.SerializeToString,
            response_deserializer=pb.MatchInfo.FromString,
        )
        cpu_before = cpu_seconds(pid)
        start = time.perf_counter()
        for match in range(matches):
            await create(
                pb.CreateMatchRequest(
                    game=pb.GAME_BELOTE,
                    settings=pb.GameSettings(belote=belote_pb2.Settings(deals=deals)),
                    bots=names[4 * match : 4 * match + 4],
                    seed=match,
                ),
                metadata=[("authorization", f"Bearer {admin}")],
            )
        await finished.wait()
        stats.wall_s = time.perf_counter() - start
        stats.server_cpu_s = cpu_seconds(pid) - cpu_before
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return stats


async def echo_stream(
    address: str, decisions: int, reply: bytes, replies: int, stats: Stats
) -> None:
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        play = channel.stream_stream(
            "/bench.Echo/Play", request_serializer=lambda b: b, response_deserializer=_sized
        )
        call = play()
        responses = call.__aiter__()
        for _ in range(decisions):
            await call.write(reply)
            stats.messages_out += 1
            stats.bytes_out += len(reply)
            for _ in range(replies):
                size, _data = await responses.__anext__()
                stats.messages_in += 1
                stats.bytes_in += size
            stats.decisions += 1
        await call.done_writing()
        async for _ in responses:
            pass


async def run_echo(
    address: str, pid: int, streams: int, decisions: int, reply_bytes: int, replies: int
) -> Stats:
    stats = Stats()
    reply = b"r" * reply_bytes
    cpu_before = cpu_seconds(pid)
    start = time.perf_counter()
    await asyncio.gather(
        *(echo_stream(address, decisions, reply, replies, stats) for _ in range(streams))
    )
    stats.wall_s = time.perf_counter() - start
    stats.server_cpu_s = cpu_seconds(pid) - cpu_before
    return stats


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "arena":
        address, admin, pid, matches, deals = (
            argv[1],
            argv[2],
            int(argv[3]),
            int(argv[4]),
            int(argv[5]),
        )
        pairs = [item.split("=", 1) for item in argv[6:]]
        names = [name for name, _ in pairs]
        tokens = [token for _, token in pairs]
        stats = asyncio.run(run_arena(address, admin, pid, matches, deals, tokens, names))
    else:
        address, pid, streams, decisions = argv[1], int(argv[2]), int(argv[3]), int(argv[4])
        reply_bytes, replies = int(argv[5]), int(argv[6])
        stats = asyncio.run(run_echo(address, pid, streams, decisions, reply_bytes, replies))
    print(json.dumps(asdict(stats)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
