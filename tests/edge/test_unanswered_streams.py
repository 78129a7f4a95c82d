"""Bot streams cannot pile up.  One address may hold only so many streams the referee has not
answered yet (neither welcomed nor refused): before that cap, one client that opened 20,000
silent streams grew the server by ~256 MB for the ten seconds of their Hello timeout, and could
open them again.  All addresses together may hold only so many more (a client with many
addresses, an IPv6 network's, is not bounded by the first cap).  And one bot may hold only so
many welcomed connections."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bisca.server.edge import ServerConfig, running_server
from bisca.server.referee import ServerOptions
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.sandbox.bots.abuser import PREFACE, silent_calls
from tests.support.waiting import loop_until

CAP = 4


def test_an_address_holds_only_so_many_streams_the_referee_has_not_answered(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path,
            listen=["127.0.0.1:0"],
            admin_token="admin",
            max_unanswered_per_peer=CAP,
        )
        async with running_server(config) as server:
            token = server.store.bots.add("known")
            referee = server.referee
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = arena_pb2_grpc.ArenaStub(channel)
                silent = [stub.Play() for _ in range(CAP)]
                await loop_until(lambda: len(referee.connections) == CAP, f"{CAP} streams open")

                refused = stub.Play()
                assert await refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                details = await refused.details()
                assert "ipv4:127.0.0.1 has 4 streams the server has not answered yet" in details
                assert f"at most {CAP}" in details
                assert len(referee.connections) == CAP, "the refused stream reached the referee"

                # A stream that leaves unanswered frees its place, and a welcomed stream
                # no longer counts against its address.
                silent.pop().cancel()
                await loop_until(lambda: len(referee.connections) == CAP - 1, "the stream closed")
                bot = stub.Play()
                await bot.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)))
                assert (await bot.read()).WhichOneof("kind") == "welcome"
                one_more = stub.Play()
                await loop_until(lambda: len(referee.connections) == CAP + 1, "one more stream")
                again = stub.Play()
                assert await again.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

                # A stream the referee refuses (its first word is not a Hello) is answered:
                # its place is free at once, whether or not it has closed yet.
                await one_more.write(pb.BotMessage(action=pb.ActionReply(request_id="r1")))
                assert (await one_more.read()).WhichOneof("kind") == "error"
                another = stub.Play()
                await loop_until(lambda: len(referee.connections) >= CAP + 1, "another stream open")
                await another.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)))
                assert (await another.read()).WhichOneof("kind") == "welcome"
                for call in (*silent, bot, one_more, another):
                    call.cancel()

    asyncio.run(scenario())


def test_all_addresses_together_hold_only_so_many_streams_the_referee_has_not_answered(
    tmp_path: Path,
) -> None:
    """Two addresses (loopback TCP and the unix socket), each below its own cap: the stream
    over the server's total is ended with UNAVAILABLE (the SDKs retry it with backoff), and a
    place freed on one address is taken from the other."""

    async def scenario() -> None:
        socket = tmp_path / "arena.sock"
        config = ServerConfig(
            data_dir=tmp_path,
            listen=["127.0.0.1:0", f"unix:{socket}"],
            admin_token="admin",
            max_unanswered_per_peer=CAP,
            max_unanswered_streams=CAP + 1,
        )
        async with running_server(config) as server:
            token = server.store.bots.add("known")
            referee = server.referee
            async with (
                grpc.aio.insecure_channel(server.address) as tcp_channel,
                grpc.aio.insecure_channel(f"unix:{socket}") as unix_channel,
            ):
                tcp, unix = (arena_pb2_grpc.ArenaStub(c) for c in (tcp_channel, unix_channel))
                silent = [tcp.Play() for _ in range(CAP)]
                await loop_until(lambda: len(referee.connections) == CAP, f"{CAP} streams open")
                silent.append(unix.Play())
                await loop_until(lambda: len(referee.connections) == CAP + 1, "one on the socket")

                refused = unix.Play(timeout=30)  # (were it let in, it would wait for a Hello)
                assert await refused.code() == grpc.StatusCode.UNAVAILABLE
                details = await refused.details()
                assert "the server has 5 bot streams it has not answered yet" in details
                assert f"at most {CAP + 1} from all addresses" in details
                assert len(referee.connections) == CAP + 1, "the refused stream reached it"

                silent.pop(0).cancel()  # a TCP stream leaves: the socket's bot gets in
                await loop_until(lambda: len(referee.connections) == CAP, "the stream closed")
                bot = unix.Play()
                await bot.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)))
                assert (await bot.read()).WhichOneof("kind") == "welcome"
                for call in (*silent, bot):
                    call.cancel()

    asyncio.run(scenario())


def test_a_bot_holds_only_so_many_welcomed_connections(tmp_path: Path) -> None:
    """A token is all a stranger needs to open welcomed streams: one bot holds at most
    ``max_connections_per_bot`` of them, and a place freed is taken again."""

    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path,
            listen=["127.0.0.1:0"],
            admin_token="admin",
            options=ServerOptions(max_connections_per_bot=2),
        )
        async with running_server(config) as server:
            token = server.store.bots.add("many")
            hello = pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2))
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = arena_pb2_grpc.ArenaStub(channel)

                async def connect() -> tuple[grpc.aio.StreamStreamCall, pb.ServerMessage]:
                    call = stub.Play()
                    await call.write(hello)
                    return call, await call.read()

                first, welcome = await connect()
                assert welcome.WhichOneof("kind") == "welcome"
                second, welcome = await connect()
                assert welcome.WhichOneof("kind") == "welcome"
                third, answer = await connect()
                assert answer.error.fatal
                assert "bot many holds 2 connections already (at most 2)" in answer.error.message
                assert len(server.referee.online["many"]) == 2

                first.cancel()
                await loop_until(lambda: len(server.referee.online["many"]) == 1, "one closed")
                fourth, welcome = await connect()
                assert welcome.WhichOneof("kind") == "welcome"
                for call in (second, third, fourth):
                    call.cancel()

    asyncio.run(scenario())


def test_a_connection_with_no_call_open_is_closed_after_the_idle_time(tmp_path: Path) -> None:
    """A connection costs the server a descriptor before any call says whose it is: one whose
    calls have all ended (a client that answers the server's pings, so keepalive keeps it) is
    closed after ``connection_idle_s``, while a connection with a call open stays."""

    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path, listen=["127.0.0.1:0"], admin_token="admin", connection_idle_s=0.5
        )
        async with running_server(config) as server:
            token = server.store.bots.add("known")
            # Each channel on a connection of its own (grpc shares them between channels).
            own = [("grpc.use_local_subchannel_pool", 1)]
            async with (
                grpc.aio.insecure_channel(server.address, options=own) as idle,
                grpc.aio.insecure_channel(server.address, options=own) as busy,
            ):
                health = health_pb2_grpc.HealthStub(idle)
                await health.Check(health_pb2.HealthCheckRequest())  # connected, then no call
                assert idle.get_state() is grpc.ChannelConnectivity.READY
                playing = arena_pb2_grpc.ArenaStub(busy).Play()
                await playing.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)))
                assert (await playing.read()).WhichOneof("kind") == "welcome"
                # The server's GOAWAY takes the idle channel back to IDLE.
                async with asyncio.timeout(30):
                    await idle.wait_for_state_change(grpc.ChannelConnectivity.READY)
                assert idle.get_state() is not grpc.ChannelConnectivity.READY
                # The bot's stream, open all along, is not closed.
                assert busy.get_state() is grpc.ChannelConnectivity.READY
                assert not playing.done()
                playing.cancel()

    asyncio.run(scenario())


def test_the_clients_of_a_unix_socket_are_one_address_whatever_path_they_bind(
    tmp_path: Path,
) -> None:
    """gRPC names a unix socket's peer by the path its client bound its end to, which the
    client chooses: each bound path was an address of its own, past the per-address cap (and
    with a wrong-token budget of its own; review 39).  They are one address, ``unix``."""

    async def scenario() -> None:
        arena = tmp_path / "arena.sock"
        config = ServerConfig(
            data_dir=tmp_path / "data",
            listen=["127.0.0.1:0", f"unix:{arena}"],
            admin_token="admin",
            max_unanswered_per_peer=CAP,
        )
        async with running_server(config) as server:
            referee = server.referee
            bound = []
            for number in range(CAP):
                client = socket.socket(socket.AF_UNIX)
                client.bind(str(tmp_path / f"client{number}"))  # an address of its choosing
                client.connect(str(arena))
                client.sendall(PREFACE + silent_calls(1))
                bound.append(client)
            await loop_until(lambda: len(referee.connections) == CAP, f"{CAP} streams open")
            async with grpc.aio.insecure_channel(f"unix:{arena}") as channel:
                # (were it let in, it would wait for a Hello)
                refused = arena_pb2_grpc.ArenaStub(channel).Play(timeout=30)
                assert await refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert f"unix has {CAP} streams" in await refused.details()
            for client in bound:
                client.close()

    asyncio.run(scenario())
