"""Load driver for ``bench/arena.py``: many bots (or echo clients) in one asyncio process, so the
server process's CPU is the server's alone.

``python -m bench._load arena ADDRESS ADMIN SERVER_PID MATCHES DEALS MODE`` with one
``NAME=TOKEN`` line per bot on stdin (tokens stay out of the process list) connects one Play
stream per token (MODE ``carried``: protocol 2, events inside the requests;
``live``: protocol 2 with live events), creates MATCHES Belote matches of 4 of its bots
through the admin API, answers every request at once with a random legal action, and prints
one JSON line (:class:`Stats`): wall time, decisions, the server's CPU seconds over the run,
messages and bytes, the server's peak threads and RSS, the timeouts the results record, and
the delays from each reply to its match's next request.

``python -m bench._load echo ADDRESS SERVER_PID STREAMS DECISIONS REPLY_BYTES``
runs STREAMS ping-pong streams against ``bench/_echo.py``, DECISIONS round trips each.

``python -m bench._load table ADDRESS SERVER_PID TABLES DECISIONS REPLY_BYTES`` seats
TABLES tables of four streams (a connection each, as the bots of a match) at
``bench/_echo.py``'s ``Table``, where each message is answered on the next seat's stream, and
plays DECISIONS decisions a table: every request a stream receives is answered at once
(the events the server sends with live-event sizes are only counted).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import grpc

from bisca.v1 import arena_pb2 as pb
from bisca.v1 import belote_pb2

from ._echo import TABLE_SEATS

CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]
#: Streams opened at once (each wave is welcomed before the next opens).
CONNECT_WAVE = 100
#: How often the server's threads and memory are sampled during a run.
SAMPLE_EVERY_S = 0.25


@dataclass
class Stats:
    wall_s: float = 0.0
    decisions: int = 0
    server_cpu_s: float = 0.0
    messages_in: int = 0
    bytes_in: int = 0
    messages_out: int = 0
    bytes_out: int = 0
    requests_in: int = 0
    request_bytes_in: int = 0
    peak_threads: int = 0
    peak_rss_mb: float = 0.0
    timeouts: int = 0
    #: From the first request any bot received to the last reply any bot sent (the match's
    #: start and end excluded: joining, the store's and the log's writes).
    playing_s: float = 0.0
    #: From opening every stream to the last Welcome.
    connect_s: float = 0.0
    #: Seconds from a bot's reply to the next request of its match (sorted).
    delays: list[float] = field(default_factory=list)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, from /proc."""
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def threads_and_rss(pid: int) -> tuple[int, float]:
    """A process's threads and resident memory (MB), from /proc."""
    values = {}
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            name, _, value = line.partition(":")
            values[name] = value.split()
    return int(values["Threads"][0]), int(values["VmRSS"][0]) / 1024


async def sample_server(pid: int, stats: Stats, stop: asyncio.Event) -> None:
    while not stop.is_set():
        threads, rss = threads_and_rss(pid)
        stats.peak_threads = max(stats.peak_threads, threads)
        stats.peak_rss_mb = max(stats.peak_rss_mb, rss)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), SAMPLE_EVERY_S)


def _sized(data: bytes) -> tuple[int, bytes]:
    return len(data), data


@dataclass
class Table:
    """What the bots of one run share: the replies waiting for their match's next request."""

    stats: Stats
    finished: asyncio.Event
    matches_left: int
    replied_at: dict[str, float] = field(default_factory=dict)
    first_request: float | None = None
    last_reply: float = 0.0


async def arena_bot(
    address: str, token: str, live: bool, table: Table, welcomed: asyncio.Event
) -> None:
    rng = random.Random(token)
    stats = table.stats
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        play = channel.stream_stream(
            "/bisca.v1.Arena/Play", request_serializer=lambda b: b, response_deserializer=_sized
        )
        call = play()
        hello = pb.BotMessage(
            hello=pb.Hello(
                token=token,
                bot_name="load",
                protocol_version=pb.PROTOCOL_VERSION_2,
                games=[pb.GAME_BELOTE],
                live_events=live,
            )
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
                stats.requests_in += 1
                stats.request_bytes_in += size
                now = time.perf_counter()
                if table.first_request is None:
                    table.first_request = now
                replied = table.replied_at.pop(request.match_id, None)
                if replied is not None:
                    stats.delays.append(now - replied)
                reply = pb.BotMessage(
                    action=pb.ActionReply(
                        request_id=request.request_id, action=rng.choice(request.legal_actions)
                    )
                ).SerializeToString()
                stats.decisions += 1
                stats.messages_out += 1
                stats.bytes_out += len(reply)
                table.replied_at[request.match_id] = table.last_reply = time.perf_counter()
                await call.write(reply)
            elif kind == "match_ended":
                ended = message.match_ended
                table.replied_at.pop(ended.match_id, None)
                stats.timeouts += sum(s.timeouts for s in ended.seats if s.seat == ended.seat)
                if ended.seat == 0:
                    table.matches_left -= 1
                    if table.matches_left == 0:
                        table.finished.set()
            if table.finished.is_set():
                call.cancel()
                return


async def run_arena(
    address: str,
    admin: str,
    pid: int,
    matches: int,
    deals: int,
    live: bool,
    tokens: list[str],
    names: list[str],
) -> Stats:
    stats = Stats()
    table = Table(stats, asyncio.Event(), matches)
    tasks: list[asyncio.Future[None]] = []
    connecting = time.perf_counter()
    # In waves: a thousand handshakes at once kept this process from answering the server's
    # keepalive pings in time on a loaded machine (its streams were cut: "ping timeout").
    for wave in range(0, len(tokens), CONNECT_WAVE):
        welcomed = {}
        for token in tokens[wave : wave + CONNECT_WAVE]:
            event = asyncio.Event()
            task = asyncio.ensure_future(arena_bot(address, token, live, table, event))
            welcomed[task] = event
            tasks.append(task)
        for task, event in welcomed.items():
            done, _ = await asyncio.wait(
                [task, asyncio.ensure_future(event.wait())], return_when=asyncio.FIRST_COMPLETED
            )
            if task in done:  # a stream that ended before its Welcome would wait forever
                raise RuntimeError(f"a bot's stream ended before its Welcome: {task.result()!r}")
    stats.connect_s = time.perf_counter() - connecting
    stop = asyncio.Event()
    sampler = asyncio.ensure_future(sample_server(pid, stats, stop))
    async with grpc.aio.insecure_channel(address) as channel:
        create = channel.unary_unary(
            "/bisca.v1.Arena/CreateMatch",
            request_serializer=pb.CreateMatchRequest.SerializeToString,
            response_deserializer=pb.MatchInfo.FromString,
        )
        cpu_before = cpu_seconds(pid)
        start = time.perf_counter()
        await asyncio.gather(
            *(
                create(
                    pb.CreateMatchRequest(
                        game=pb.GAME_BELOTE,
                        settings=pb.GameSettings(belote=belote_pb2.Settings(deals=deals)),
                        bots=names[4 * match : 4 * match + 4],
                        seed=match,
                    ),
                    metadata=[("authorization", f"Bearer {admin}")],
                )
                for match in range(matches)
            )
        )
        await table.finished.wait()
        stats.wall_s = time.perf_counter() - start
        stats.server_cpu_s = cpu_seconds(pid) - cpu_before
    stop.set()
    await sampler
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    stats.delays.sort()
    stats.playing_s = table.last_reply - (table.first_request or table.last_reply)
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


async def table_seat(
    address: str, table: int, seat: int, reply: bytes, game: TableGame, seated: asyncio.Event
) -> None:
    stats = game.stats
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        play = channel.stream_stream(
            "/bench.Echo/Table", request_serializer=lambda b: b, response_deserializer=_sized
        )
        call = play(metadata=(("table", str(table)), ("seat", str(seat))))
        responses = call.__aiter__()
        await responses.__anext__()  # the server's empty message: this stream is seated
        seated.set()
        await game.started.wait()
        if seat == 0:
            await call.write(reply)
        async for size, data in responses:
            stats.messages_in += 1
            stats.bytes_in += size
            if not data.startswith(b"q"):  # an event: only the request is answered
                continue
            stats.decisions += 1
            game.left[table] -= 1
            if game.left[table] == 0:
                game.tables_left -= 1
                if game.tables_left == 0:
                    game.finished.set()
                return
            stats.messages_out += 1
            stats.bytes_out += len(reply)
            await call.write(reply)


@dataclass
class TableGame:
    stats: Stats
    left: list[int]
    tables_left: int
    started: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)


async def run_tables(
    address: str, pid: int, tables: int, decisions: int, reply_bytes: int
) -> Stats:
    stats = Stats()
    game = TableGame(stats, [decisions] * tables, tables)
    reply = b"r" * reply_bytes
    tasks = []
    seated = []
    for table in range(tables):
        for seat in range(TABLE_SEATS):
            event = asyncio.Event()
            seated.append(event)
            tasks.append(
                asyncio.ensure_future(table_seat(address, table, seat, reply, game, event))
            )
    waiting = asyncio.gather(*(event.wait() for event in seated))
    racing: list[asyncio.Future[Any]] = [waiting, *tasks]
    done, _ = await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
    if waiting not in done:  # a stream ended before it was seated
        waiting.cancel()
        raise RuntimeError(f"a table's stream ended before it was seated: {done!r}")
    cpu_before = cpu_seconds(pid)
    start = time.perf_counter()
    game.started.set()
    await game.finished.wait()
    stats.wall_s = time.perf_counter() - start
    stats.server_cpu_s = cpu_seconds(pid) - cpu_before
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return stats


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "arena":
        address, admin, pid, matches, deals, delivery = argv[1:]
        if delivery not in ("carried", "live"):
            raise SystemExit(f"delivery must be carried or live, not {delivery!r}")
        pairs = [line.split("=", 1) for line in sys.stdin.read().split()]
        names = [name for name, _ in pairs]
        tokens = [token for _, token in pairs]
        stats = asyncio.run(
            run_arena(
                address,
                admin,
                int(pid),
                int(matches),
                int(deals),
                delivery == "live",
                tokens,
                names,
            )
        )
    elif mode == "table":
        tables, decisions, reply_bytes = (int(word) for word in argv[3:6])
        stats = asyncio.run(run_tables(argv[1], int(argv[2]), tables, decisions, reply_bytes))
    else:
        streams, decisions, reply_bytes, replies = (int(word) for word in argv[3:7])
        stats = asyncio.run(
            run_echo(argv[1], int(argv[2]), streams, decisions, reply_bytes, replies)
        )
    print(json.dumps(asdict(stats)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
