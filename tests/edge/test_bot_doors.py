"""Each sandboxed bot reaches the arena through a door of its own (``edge/_doors.py``): a unix
socket served by a small server of the arena's service.  A door holds only a few connections
(gRPC caps connections per server, and cannot tell one unix socket's peers apart), its bot's
streams count as that one bot's in the per-address limits, and a door closed is gone: its
socket removed, what held it cut."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc

from bisca.server.edge import DOOR_CONNECTIONS, ArenaServer, BotDoors, ServerConfig, running_server
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.support.waiting import loop_until

#: Streams one address may hold unanswered, in these tests.
CAP = 4
#: So that every channel is a connection of its own.
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]


@asynccontextmanager
async def arena_with_doors(tmp_path: Path) -> AsyncIterator[tuple[ArenaServer, BotDoors]]:
    folder = tmp_path / "doors"
    folder.mkdir(mode=0o700)
    config = ServerConfig(
        data_dir=tmp_path / "data",
        listen=["127.0.0.1:0"],
        admin_token="admin",
        max_unanswered_per_peer=CAP,
    )
    async with running_server(config) as server:
        doors = server.bot_doors(folder)
        try:
            yield server, doors
        finally:
            await doors.close()


def closed_by_the_server(connection: socket.socket) -> bool:
    connection.setblocking(False)
    try:
        return connection.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


async def welcomed(path: Path, token: str) -> bool:
    async with grpc.aio.insecure_channel(f"unix:{path}", options=OWN_CONNECTION) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        await call.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)))
        answer = await call.read()
        call.cancel()
        return answer is not grpc.aio.EOF and answer.WhichOneof("kind") == "welcome"


def test_a_door_holds_a_few_connections_and_the_other_doors_are_not_touched(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (server, doors):
            token = server.store.bots.add("honest")
            flooded, other = doors.open(), doors.open()
            flood = []
            for _ in range(DOOR_CONNECTIONS + 10):
                connection = socket.socket(socket.AF_UNIX)
                connection.connect(str(flooded.path))
                flood.append(connection)
            # What is over the door's cap is closed as it is accepted; the rest is held.
            await loop_until(
                lambda: sum(map(closed_by_the_server, flood)) == 10, "10 connections closed"
            )
            assert await welcomed(other.path, token), "the other door let nobody in"
            assert sum(map(closed_by_the_server, flood)) == 10, "the door dropped what it held"
            for connection in flood:
                connection.close()
            # The flood gone (once the server has seen it go), its own door takes its bot again.
            for _ in range(300):
                try:
                    assert await welcomed(flooded.path, token)
                    break
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(0.1)
            else:
                raise AssertionError("the door stayed full after its flood left")

    asyncio.run(scenario())


def test_a_doors_streams_count_as_its_own_bots(tmp_path: Path) -> None:
    """Every unix socket's peer is ``unix:`` to gRPC: without the door's name, one bot's
    silent streams would count against every sandboxed bot's."""

    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (server, doors):
            token = server.store.bots.add("honest")
            referee = server.referee
            noisy, quiet = doors.open(), doors.open()
            async with grpc.aio.insecure_channel(f"unix:{noisy.path}") as channel:
                stub = arena_pb2_grpc.ArenaStub(channel)
                silent = [stub.Play() for _ in range(CAP)]
                await loop_until(lambda: len(referee.connections) == CAP, f"{CAP} streams open")
                refused = stub.Play()
                assert await refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert f"unix:{noisy.path} has {CAP} streams" in await refused.details()
                assert await welcomed(quiet.path, token)
                for call in silent:
                    call.cancel()

    asyncio.run(scenario())


def test_a_closed_door_is_gone(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (server, doors):
            token = server.store.bots.add("honest")
            door, kept = doors.open(), doors.open()
            async with grpc.aio.insecure_channel(f"unix:{door.path}") as channel:
                call = arena_pb2_grpc.ArenaStub(channel).Play()
                await call.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)))
                assert (await call.read()).WhichOneof("kind") == "welcome"
                door.close()
                assert not door.path.exists()
                assert doors.open_doors == 1
                assert await call.code() == grpc.StatusCode.UNAVAILABLE  # cut
            door.close()  # twice is nothing
            assert await welcomed(kept.path, token)
            await doors.close()
            assert doors.open_doors == 0 and not kept.path.exists()

    asyncio.run(scenario())
