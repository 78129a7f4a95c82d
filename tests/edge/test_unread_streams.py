"""A stream whose peer does not read what the server answers costs the server a bounded
amount, before and after its Hello (a real server on loopback, raw gRPC clients)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import socket
import struct
from pathlib import Path

import grpc
import pytest

from bisca.server.edge import ArenaServer, ServerConfig, running_server
from bisca.v1 import arena_pb2 as pb
from tests.sandbox.bots.abuser import PLAY_HEADERS, http2_frame
from tests.support.refusals import ENDLESS_REFUSALS
from tests.support.served import count_handed

#: A client that reads little: a small window, no growing it.
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 4096)]


def _short_grace(data_dir: Path) -> ServerConfig:
    """A server whose streams' close grace is half a second, and whose bots' refused messages
    are answered without end (the deaf bots here send them to pile answers up)."""
    return ServerConfig(
        data_dir=data_dir,
        listen=["127.0.0.1:0"],
        admin_token="admin",
        close_grace_s=0.5,
        options=ENDLESS_REFUSALS,
    )


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
        config = _short_grace(tmp_path)
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


class _WindowShutClient:
    """An HTTP/2 client of its own bytes (gRPC's clients cannot be made to read nothing):
    ``Play`` calls with a receive window of 0, so the server's first write to each stays in
    flight until :meth:`open_window`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._next_stream = 1

    @classmethod
    async def connect(cls, address: str) -> _WindowShutClient:
        host, port = address.rsplit(":", 1)
        client = cls(*await asyncio.open_connection(host, int(port)))
        window_zero = (4).to_bytes(2, "big") + (0).to_bytes(4, "big")  # INITIAL_WINDOW_SIZE
        client.writer.write(
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + http2_frame(0x4, 0, 0, window_zero)
        )
        await client.writer.drain()
        return client

    async def play(self, token: str) -> int:
        """A new ``Play`` call saying its Hello; returns its stream."""
        stream, self._next_stream = self._next_stream, self._next_stream + 2
        self.writer.write(http2_frame(0x1, 0x4, stream, PLAY_HEADERS))
        hello = pb.Hello(token=token, protocol_version=2, games=[pb.GAME_BELOTE])
        self.send(pb.BotMessage(hello=hello), stream)
        await self.writer.drain()
        return stream

    def send(self, message: pb.BotMessage, stream: int = 1) -> None:
        body = message.SerializeToString()
        self.writer.write(
            http2_frame(0x0, 0, stream, b"\x00" + len(body).to_bytes(4, "big") + body)
        )

    def open_window(self, stream: int = 1) -> None:
        more = (1 << 20).to_bytes(4, "big")
        self.writer.write(http2_frame(0x8, 0, 0, more) + http2_frame(0x8, 0, stream, more))

    def reset(self) -> None:
        """Drop the connection with a TCP reset (no goodbye of any kind)."""
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()

    async def frames_until_the_call_ends(self, stream: int = 1) -> tuple[list[int], dict[str, str]]:
        """The kinds of the frames of ``stream`` up to its end, and its trailers (``{}``: a
        reset)."""
        kinds = []
        while True:
            head = await self.reader.readexactly(9)
            length, kind, flags = int.from_bytes(head[:3], "big"), head[3], head[4]
            on = int.from_bytes(head[5:9], "big") & 0x7FFF_FFFF
            payload = await self.reader.readexactly(length)
            if kind == 0x4 and not flags & 0x1:  # the server's SETTINGS: acknowledged
                self.writer.write(http2_frame(0x4, 0x1, 0, b""))
            elif kind == 0x6 and not flags & 0x1:  # PING
                self.writer.write(http2_frame(0x6, 0x1, 0, payload))
            if on == stream:
                kinds.append(kind)
                if kind == 0x3:
                    return kinds, {}
                if kind == 0x1 and flags & 0x1:
                    return kinds, _literal_headers(payload)


def _literal_headers(block: bytes) -> dict[str, str]:
    """The ``grpc-`` fields of a trailers block as gRPC's encoder writes them: literals with
    plain (not Huffman) strings under 127 bytes (RFC 7541 6.2); anything else is skipped."""
    fields = {}
    for found in re.finditer(rb"(grpc-[a-z]+)([\x00-\x7e])", block):
        start = found.end()
        fields[found.group(1).decode()] = block[start : start + found.group(2)[0]].decode()
    return fields


def test_a_stream_cut_off_at_its_close_grace_ends_without_an_error_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A welcomed bot whose receive window stays shut: the server's Welcome stays in flight,
    its answers to five stray replies wait behind it, and the referee ends the stream.  When
    the close grace runs out what waits is dropped, but the write gRPC has in flight cannot be
    taken back: ending the call under it made gRPC log two ERRORs (its status could not be
    sent: ``GRPC_CALL_ERROR_TOO_MANY_OPERATIONS``, review 43's G2) and the bot never heard the
    end.  Now the call ends once that write is read: ``ABORTED``, naming what was dropped."""
    caplog.set_level(logging.WARNING)

    async def scenario() -> tuple[list[int], dict[str, str]]:
        config = _short_grace(tmp_path)
        async with running_server(config) as server:
            token = server.store.bots.add("deaf")
            referee = server.referee
            handed = count_handed(referee)
            client = await _WindowShutClient.connect(server.address)
            await client.play(token)
            assert await _until(lambda: len(referee.connections) == 1, 30)
            for _ in range(5):
                client.send(pb.BotMessage(action=pb.ActionReply(request_id="r-stray")))
            assert await _until(lambda: len(handed.all) == 6, 30)
            (connection,) = referee.connections.values()
            connection.close()
            assert await _until(lambda: not referee.connections, 30)
            await asyncio.sleep(1.0)  # past the grace: the call was ended here
            errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
            assert not errors, [record.getMessage() for record in errors]
            client.open_window()
            ended = await asyncio.wait_for(client.frames_until_the_call_ends(), 30)
            client.writer.close()
            return ended

    kinds, trailers = asyncio.run(scenario())
    assert kinds[-2:] == [0x0, 0x1], f"the Welcome's DATA, then the trailers: {kinds}"
    assert trailers.get("grpc-status") == str(grpc.StatusCode.ABORTED.value[0]), trailers
    assert "5 messages that waited 0.5 s" in trailers.get("grpc-message", ""), trailers
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]


async def _parked_streams(
    server: ArenaServer, client: _WindowShutClient, token: str, count: int
) -> None:
    """``count`` streams of ``client`` welcomed, ended by the referee and left unread past the
    close grace: each holds its Welcome in flight, and the refusals of three stray replies
    waited behind it (dropped at the grace)."""
    referee = server.referee
    before = len(referee.connections)
    stray = pb.BotMessage(action=pb.ActionReply(request_id="r-stray"))
    for _ in range(count):
        stream = await client.play(token)
        for _ in range(3):
            client.send(stray, stream)
    assert await _until(lambda: len(referee.connections) == before + count, 30)
    await asyncio.sleep(0.2)  # (their strays read and refused)
    for connection in list(referee.connections.values())[before:]:
        connection.close()
    assert await _until(lambda: len(referee.connections) == before, 30)
    await asyncio.sleep(0.7)  # past the grace


def test_streams_cut_off_then_dropped_with_their_connection_end_without_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Cut-off streams whose bot resets its connection: the write in flight fails, and ending
    the call after it with a status (ABORTED, or OK) raced gRPC's own cancellation and now
    and then logged TOO_MANY_OPERATIONS as an ERROR (review 44's F1: about one stream in a
    hundred).  Five connections of twenty such streams each."""
    caplog.set_level(logging.WARNING)

    async def scenario() -> None:
        async with running_server(_short_grace(tmp_path)) as server:
            token = server.store.bots.add("deaf")
            for _ in range(5):
                client = await _WindowShutClient.connect(server.address)
                await _parked_streams(server, client, token, 20)
                client.reset()
            await asyncio.sleep(1.0)

    asyncio.run(scenario())
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]


def test_an_address_holds_a_bounded_number_of_cut_off_streams(tmp_path: Path) -> None:
    """Each cut-off stream that its bot never reads is kept by gRPC until its connection goes
    (~47 KB); review 44 parked 4,703 from one client.  Past ``max_parked_per_peer`` the
    address's new bot streams are refused, until it reads or drops those it holds."""

    async def scenario() -> None:
        config = dataclasses.replace(_short_grace(tmp_path), max_parked_per_peer=3)
        async with running_server(config) as server:
            token = server.store.bots.add("deaf")
            deaf = await _WindowShutClient.connect(server.address)
            await _parked_streams(server, deaf, token, 3)
            async with grpc.aio.insecure_channel(server.address) as channel:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await _welcomed_raw_stream(channel, token)
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "holds 3 streams the server ended" in (refused.value.details() or "")
                deaf.reset()  # its streams go with it: the address is let in again
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 30
                while True:
                    try:
                        call = await _welcomed_raw_stream(channel, token)
                        break
                    except grpc.aio.AioRpcError as still:
                        assert still.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, still
                        assert loop.time() < deadline, "the dropped streams are still counted"
                        await asyncio.sleep(0.05)
                call.cancel()

    asyncio.run(scenario())
