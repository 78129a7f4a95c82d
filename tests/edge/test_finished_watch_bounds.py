"""Watching a finished match costs the server a bounded amount whatever its client does (review
F1: a ``WatchMatch`` of a finished match pushed the whole replayed log at once into an
unbounded queue, read or not; 400 calls that never read held 260 MB).

Its view of the log is handed to the transport one update at a time, each once the one before
is written: a client that reads nothing makes the server hold that view's serialized rest and
no more, until it is cut (``WATCH_STALL_S``); the watchers of finished matches are counted, per
address and in all, and one too many is refused (``RESOURCE_EXHAUSTED``; the web: 429); a
watcher that reads gets every update, as before.  A real in-process server on loopback, a real
finished match's log, raw gRPC clients that read nothing and a small window (what a hostile
client announces), and the web app on the same arena."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
from aiohttp.web_protocol import RequestHandler

import bisca.server.edge._spectator as spectator  # its limits, patched; its counts, read
from bisca.server.edge import ArenaServer, ServerConfig, running_server
from bisca.server.logs import log_updates, read_log
from bisca.server.records import MatchStatus
from bisca.server.web import Backend, serving_web, to_json
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.edge.test_watch_sealed_twin import _play as play  # a bot that bids
from tests.support.waiting import loop_until

#: Deals of the watched match: its public view (~400 updates, ~13 KB; its log ~230 KB) is far
#: more than the small window below lets the server write to a client that reads nothing.
DEALS = 12
#: Deals of the match watched on the web: its omniscient view as JSON (~440 KB) is more than the
#: kernel's buffers (made small below) and aiohttp's (~250 KB written ahead before a send waits)
#: hold for a page that reads nothing.
WEB_DEALS = 40
#: The send buffer of the web's sockets in that test: on loopback the kernel's own starts at
#: ~1.3 MB (twice ten segments of 64 KB), more than a view short enough for the suite.
SMALL_SEND_BUFFER = 4096
#: A client that reads little: a small window, no growing it (as ``test_unread_streams``).
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 4096)]
ADMIN = [("authorization", "Bearer admin")]


async def _finished_match(server: ArenaServer, deals: int = DEALS) -> tuple[str, Path]:
    """A Belote match of ``deals`` deals played to its end over gRPC by bots that bid (so
    cards are played): its id, and its log once the store records it and the referee has let
    the match go (it is watched from its log then)."""
    names = [f"player{seat}" for seat in range(4)]
    tokens = [server.store.bots.add(name) for name in names]
    settings = pb.GameSettings()
    settings.belote.deals = deals
    create = pb.CreateMatchRequest(
        game=pb.GAME_BELOTE, settings=settings, bots=names, join_timeout_ms=120_000
    )
    async with grpc.aio.insecure_channel(server.address) as channel:
        created = await arena_pb2_grpc.ArenaStub(channel).CreateMatch(create, metadata=ADMIN)
    match_id = created.match_id
    await asyncio.wait_for(asyncio.gather(*(play(server.address, t) for t in tokens)), 120)

    def recorded() -> bool:
        record = server.store.matches.get(match_id)
        return (
            record is not None
            and record.status == MatchStatus.FINISHED
            and bool(record.log_path)
            and match_id not in server.referee.matches
        )

    await loop_until(recorded, f"match {match_id} finished and recorded", timeout=120)
    record = server.store.matches.get(match_id)
    assert record is not None
    return match_id, Path(record.log_path)


def _view(log: Path, omniscient: bool) -> list[pb.WatchUpdate]:
    """What a watcher of the finished match sees: its log's updates, as the replay makes them."""
    return list(log_updates(read_log(log).entries(), omniscient))


def _watch(
    channel: grpc.aio.Channel, match_id: str, metadata: list[tuple[str, str]], **request: Any
) -> grpc.aio.UnaryStreamCall:
    watch = channel.unary_stream(
        "/bisca.v1.Arena/WatchMatch",
        request_serializer=pb.WatchMatchRequest.SerializeToString,
        response_deserializer=pb.WatchUpdate.FromString,
    )
    return watch(pb.WatchMatchRequest(match_id=match_id, **request), metadata=metadata)


async def _read_all(call: grpc.aio.UnaryStreamCall) -> list[pb.WatchUpdate]:
    return [update async for update in call]


@contextlib.asynccontextmanager
async def _unread_watches(
    server: ArenaServer, match_id: str, count: int
) -> AsyncIterator[list[grpc.aio.UnaryStreamCall]]:
    """``count`` watches of the match that read nothing, on one connection with a small
    window, once the server counts each; cancelled when the block ends."""
    spectator_token = [("authorization", f"Bearer {server.spectator_token}")]
    watchers = spectator.arena_watchers(server.referee)
    async with grpc.aio.insecure_channel(server.address, options=SMALL_WINDOW) as channel:
        calls = [_watch(channel, match_id, spectator_token) for _ in range(count)]
        try:
            await loop_until(
                lambda: len(watchers.views) >= count, f"{count} watchers of {match_id} counted"
            )
            yield calls
        finally:
            for call in calls:
                call.cancel()


def _config(data_dir: Path) -> ServerConfig:
    return ServerConfig(data_dir=data_dir, listen=["127.0.0.1:0"], admin_token="admin")


def test_a_watcher_that_reads_nothing_holds_its_view_until_it_is_cut_then_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each unread watch gets updates only as they are written: it never has the whole view
    handed over, holds the rest of it serialized, and once cut holds none of it; its call ends
    (ABORTED) once it reads the update under way, with the updates before it; its place in
    the counts is freed when the calls end."""
    monkeypatch.setattr(spectator, "WATCH_STALL_S", 1.0)  # cut soon: none of them reads
    unread = 6

    async def scenario() -> None:
        async with running_server(_config(tmp_path)) as server:
            match_id, log = await _finished_match(server)
            expected = _view(log, omniscient=False)
            watchers = spectator.arena_watchers(server.referee)
            async with _unread_watches(server, match_id, unread) as calls:
                views = list(watchers.views)
                # Before the cut: at most the view's serialized rest, never the log.
                assert all(view.held_bytes < log.stat().st_size // 10 for view in views)
                await loop_until(
                    lambda: all(view.cut for view in views), "every unread watcher cut"
                )
                for view in views:
                    assert view.size == len(expected)
                    assert view.handed < view.size, (
                        f"{view.handed} of {view.size} updates were handed to a stream whose "
                        "client read none"
                    )
                    assert view.held_bytes == 0
                handed = {view.handed for view in views}
                # The one that reads now gets what was written, then the cut.
                read: list[pb.WatchUpdate] = []
                with pytest.raises(grpc.aio.AioRpcError) as cut:
                    async for update in calls[0]:
                        read.append(update)
                assert cut.value.code() == grpc.StatusCode.ABORTED
                assert "read nothing for 1 s" in str(cut.value.details())
                assert len(read) in handed and read == expected[: len(read)]
            await loop_until(
                lambda: not watchers.views and not watchers.by_peer,
                "the watchers' places freed once their calls ended",
            )

    asyncio.run(scenario())


def test_watchers_of_finished_matches_are_capped_per_address_and_in_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One too many from an address (over gRPC and the web together: one client, one count),
    or from all (the web's watchers count with the gRPC service's: one arena), is refused
    before its log is read: RESOURCE_EXHAUSTED, the web's 429, saying which bound; once the
    unread ones go, watchers that read get every update of their view, public or omniscient,
    over gRPC and the web, as before."""
    monkeypatch.setattr(spectator, "MAX_FINISHED_WATCHERS_PER_PEER", 3)

    async def scenario() -> None:
        async with running_server(_config(tmp_path)) as server:
            match_id, log = await _finished_match(server)
            watchers = spectator.arena_watchers(server.referee)
            backend = Backend.of_server(server)
            async with (
                serving_web(backend, None, "127.0.0.1", 0) as url,
                grpc.aio.insecure_channel(server.address) as channel,
            ):
                socket = f"{url.replace('http://', 'ws://')}api/matches/{match_id}/watch"
                spectator_token = [("authorization", f"Bearer {server.spectator_token}")]
                async with _unread_watches(server, match_id, 3):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await _read_all(_watch(channel, match_id, spectator_token))
                    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    per_address = "127.0.0.1 watches 3 finished matches already"
                    assert str(refused.value.details()).startswith(per_address)
                    # The web counts the same client as gRPC does: one address, one count.
                    frames = await _web_watch(socket, server.spectator_token, {})
                    assert frames == [{"error": frames[0]["error"], "status": 429}]
                    assert frames[0]["error"].startswith(per_address)
                    monkeypatch.setattr(spectator, "MAX_FINISHED_WATCHERS_PER_PEER", 10)
                    monkeypatch.setattr(spectator, "MAX_FINISHED_WATCHERS", 3)
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await _read_all(_watch(channel, match_id, spectator_token))
                    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    in_all = "the server streams 3 finished matches already"
                    assert in_all in str(refused.value.details())
                    frames = await _web_watch(socket, server.spectator_token, {})
                    assert frames == [{"error": frames[0]["error"], "status": 429}]
                    assert in_all in frames[0]["error"]
                    assert len(watchers.views) == 3  # the refused ones hold nothing
                await loop_until(lambda: not watchers.by_peer, "the unread watchers gone")
                for omniscient, metadata in ((False, spectator_token), (True, ADMIN)):
                    expected = _view(log, omniscient)
                    assert expected[0].HasField("start") and expected[-1].HasField("end")
                    call = _watch(channel, match_id, metadata, omniscient=omniscient)
                    assert await _read_all(call) == expected
                    token = server.spectator_token if not omniscient else "admin"
                    frames = await _web_watch(socket, token, {"omniscient": omniscient})
                    assert frames == [{"update": to_json(update)} for update in expected]
            await loop_until(lambda: not watchers.by_peer, "the readers' places freed")

    asyncio.run(scenario())


async def _web_watch(url: str, token: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Every frame of the web's watch socket, read to its end."""
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as socket:
        await socket.send_json({"token": token, "request": request})
        return [json.loads(message.data) async for message in socket]


def test_a_web_watcher_that_reads_nothing_is_cut_and_its_place_freed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web's watch of a finished match whose page reads nothing (a socket with a tiny
    receive buffer, never read) is written a few updates ahead, and holds its view only until
    it is cut (``WATCH_STALL_S``): then its connection is aborted, what it held is dropped,
    and its place in the counts is freed at once (an aborted socket has no write under way
    left to wait for)."""
    monkeypatch.setattr(spectator, "WATCH_STALL_S", 1.0)  # cut soon: the page reads nothing
    made = RequestHandler.connection_made

    def with_a_small_send_buffer(handler: RequestHandler, transport: asyncio.BaseTransport) -> None:
        sent = transport.get_extra_info("socket")
        sent.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_SEND_BUFFER)
        made(handler, transport)

    monkeypatch.setattr(RequestHandler, "connection_made", with_a_small_send_buffer)

    async def scenario() -> None:
        async with running_server(_config(tmp_path)) as server:
            match_id, _ = await _finished_match(server, WEB_DEALS)
            watchers = spectator.arena_watchers(server.referee)
            backend = Backend.of_server(server)
            async with serving_web(backend, None, "127.0.0.1", 0) as url:
                host, port = url.removeprefix("http://").rstrip("/").split(":")
                # The omniscient view: its JSON is far more than a socket that reads nothing
                # lets through the kernel's and the server's buffers.
                first = {"token": "admin", "request": {"omniscient": True}}
                page = await asyncio.to_thread(
                    _unread_web_socket, host, int(port), f"/api/matches/{match_id}/watch", first
                )
                try:
                    await loop_until(lambda: len(watchers.views) == 1, "the web watcher counted")
                    [view] = list(watchers.views)
                    await loop_until(lambda: view.cut, "the unread web watcher cut", timeout=60)
                    assert view.held_bytes == 0
                    # A few updates written ahead (WATCH_WRITE_AHEAD), not aiohttp's ~250 KB: with
                    # aiohttp's own limits 795 of this view's 1,323 went before a send waited.
                    assert view.handed * 5 < view.size, (view.handed, view.size)
                    await loop_until(
                        lambda: not watchers.views and not watchers.by_peer,
                        "the cut web watcher's place freed",
                    )
                    # The page's connection is gone: what it reads now ends, short of the view.
                    received = await asyncio.to_thread(_read_to_the_end, page)
                    assert b'"end"' not in received
                    assert 0 < len(received) < 200_000, len(received)
                finally:
                    page.close()

    asyncio.run(scenario())


def _unread_web_socket(host: str, port: int, path: str, first: dict[str, Any]) -> socket.socket:
    """A WebSocket to ``path`` that sends ``first`` and then reads nothing, with the smallest
    receive buffer the kernel allows (set before connecting, so the window stays small)."""
    page = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    page.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    page.settimeout(30)
    page.connect((host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    page.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += page.recv(1)  # byte by byte: nothing of the first frame is read with it
    assert answer.startswith(b"HTTP/1.1 101"), answer
    payload = json.dumps(first).encode()
    mask = os.urandom(4)
    assert len(payload) < 126
    masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
    page.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
    return page


def _read_to_the_end(page: socket.socket) -> bytes:
    """What is left to read on ``page`` until its peer closed or reset it."""
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := page.recv(65536):
            received += chunk
    return received
