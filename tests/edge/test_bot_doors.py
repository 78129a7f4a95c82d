"""Each sandboxed bot reaches the arena through a door of its own (``edge/_doors.py``): a unix
socket served by a small server of the arena's service.  A door holds only a few connections
(gRPC caps connections per server, and cannot tell one unix socket's peers apart), its bot's
streams count as that one bot's in the per-address limits, and a door closed is gone: its
socket removed, what held it cut."""

from __future__ import annotations

import asyncio
import re
import resource
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest

from bisca.server.edge import (
    CALLS_LIMIT_REASON,
    DESCRIPTOR_RESERVE,
    DOOR_CALL_BURST,
    DOOR_CALLS_PER_S,
    DOOR_CONNECTIONS,
    DOOR_DESCRIPTORS,
    DOOR_UNANSWERED_STREAMS,
    ArenaServer,
    BotDoors,
    CallBudget,
    ServerConfig,
    running_server,
)
from bisca.server.errors import ConfigError
from bisca.server.sandbox import BotLauncher, BotStartError, SandboxPolicy
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.support.waiting import loop_until

#: So that every channel is a connection of its own.
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]


@asynccontextmanager
async def arena_with_doors(tmp_path: Path) -> AsyncIterator[tuple[ArenaServer, BotDoors]]:
    folder = tmp_path / "doors"
    folder.mkdir(mode=0o700)
    config = ServerConfig(
        data_dir=tmp_path / "data", listen=["127.0.0.1:0"], admin_token="admin", bot_doors=True
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


def test_a_doors_streams_count_as_its_own_bots_and_only_a_few(tmp_path: Path) -> None:
    """Every unix socket's peer is one address to gRPC: without the door's name, one bot's
    silent streams would count against every sandboxed bot's.  And a door holds only a few
    unanswered (review 39: at 256 a door, 16 flooding bots filled the server's total of 4,096
    and every bot, sandboxed or not, was refused)."""

    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (server, doors):
            token = server.store.bots.add("honest")
            referee = server.referee
            noisy, quiet = doors.open(), doors.open()
            cap = DOOR_UNANSWERED_STREAMS
            target = f"unix:{noisy.path}"
            async with (
                grpc.aio.insecure_channel(target, options=OWN_CONNECTION) as channel,
                grpc.aio.insecure_channel(target, options=OWN_CONNECTION) as another,
            ):
                stub = arena_pb2_grpc.ArenaStub(channel)
                silent = [stub.Play() for _ in range(cap)]
                await loop_until(lambda: len(referee.connections) == cap, f"{cap} streams open")
                refused = arena_pb2_grpc.ArenaStub(another).Play()
                assert await refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert f"door:{noisy.path} has {cap} streams" in await refused.details()
                assert await welcomed(quiet.path, token)
                for call in silent:
                    call.cancel()

    asyncio.run(scenario())


def test_a_call_budget_lets_a_burst_in_then_a_few_a_second() -> None:
    budget = CallBudget(4, 2.0, now=100.0)
    assert [budget.take(100.0) for _ in range(5)] == [True] * 4 + [False]
    assert not budget.take(100.4)  # 0.8 of a call back
    assert budget.take(100.5) and not budget.take(100.5)
    assert [budget.take(1000.0) for _ in range(5)] == [True] * 4 + [False]  # the burst, no more


def test_a_bot_opening_calls_on_its_door_in_a_loop_loses_its_door_and_is_stopped(
    tmp_path: Path,
) -> None:
    """Each call costs the arena its set-up, whatever its method: one bot opening calls in a
    loop slowed every match of its arena (review 39b).  Its door lets in a burst, then a few
    a second; the first call past them is refused with the reason, the door is closed and
    the bot's process told to stop, once; the other doors go on."""

    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (server, doors):
            token = server.store.bots.add("honest")
            flooded, other = doors.open(), doors.open()
            stopped: list[str] = []
            flooded.on_flood(stopped.append)
            codes = []
            started = asyncio.get_running_loop().time()
            async with grpc.aio.insecure_channel(f"unix:{flooded.path}") as channel:
                stub = arena_pb2_grpc.ArenaStub(channel)
                for _ in range(10 * DOOR_CALL_BURST):
                    try:
                        await stub.ListMatches(pb.ListMatchesRequest())  # no admin token
                    except grpc.aio.AioRpcError as refused:
                        codes.append(refused.code())
                        if refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                            assert CALLS_LIMIT_REASON in str(refused.details())
                            break
            elapsed = asyncio.get_running_loop().time() - started
            served = codes.count(grpc.StatusCode.UNAUTHENTICATED)
            assert codes[-1] == grpc.StatusCode.RESOURCE_EXHAUSTED, codes
            assert DOOR_CALL_BURST <= served <= DOOR_CALL_BURST + elapsed * DOOR_CALLS_PER_S + 1
            assert stopped == [CALLS_LIMIT_REASON]
            assert not flooded.path.exists() and doors.open_doors == 1
            assert flooded.admit_call(), "a closed door lets nothing in"
            assert stopped == [CALLS_LIMIT_REASON], "the bot is stopped once"
            assert await welcomed(other.path, token)

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


def test_door_names_are_all_one_length_and_a_folder_too_long_for_them_is_refused_at_once(
    tmp_path: Path,
) -> None:
    """A socket's path holds 107 bytes: the doors' names do not grow with their count (review
    39: ``bot<N>.sock`` grew at the 10th, 100th... door, and an arena whose first doors opened
    failed later at a tenth), so a folder is refused when the doors are made, naming it."""

    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (server, doors):
            opened = [doors.open() for _ in range(18)]
            assert len({len(str(door.path)) for door in opened}) == 1
            long = tmp_path / ("d" * (107 - len(str(tmp_path))))
            long.mkdir()
            with pytest.raises(ConfigError, match="a unix socket's path is at most 107") as refused:
                server.bot_doors(long)
            assert str(long) in str(refused.value)

    asyncio.run(scenario())


@pytest.mark.system  # (the launcher asks the interpreter where it lives)
def test_a_door_that_cannot_be_made_is_an_os_error_and_a_bot_start_error(tmp_path: Path) -> None:
    """A folder gone under the arena (a cleaner of /tmp): grpc raises ``RuntimeError``, which
    got past every handler of a bot that cannot start (review 39)."""

    async def scenario() -> None:
        async with arena_with_doors(tmp_path) as (server, doors):
            (tmp_path / "doors").rmdir()
            with pytest.raises(OSError, match="cannot listen on unix:"):
                doors.open()
            launcher = BotLauncher(server.address, doors, SandboxPolicy(), hidden=[])
            process = launcher.process([sys.executable, "-c", "pass"], "t", tmp_path / "bot")
            with pytest.raises(BotStartError, match="cannot listen on unix:"):
                await server.in_trio(trio_call, process.start)
            assert doors.open_doors == 0

    asyncio.run(scenario())


async def trio_call(function: Callable[[], object]) -> object:
    return function()


#: How each arena run in a process of its own begins (a process's open-files limit is its
#: own, and a crash takes only it): ``@LIMIT@`` the open-files limit set first, ``tmp`` its
#: folder (its first argument) and ``config`` an arena that launches bots.
CHILD_ARENA = """
import asyncio, os, resource, subprocess, sys
from pathlib import Path

resource.setrlimit(resource.RLIMIT_NOFILE, @LIMIT@)
from bisca.server.edge import DOOR_CONNECTIONS, ServerConfig, running_server
from bisca.server.sandbox import BotLauncher, BotStartError, SandboxPolicy

tmp = Path(sys.argv[1])
(tmp / "doors").mkdir(mode=0o700)
config = ServerConfig(
    data_dir=tmp / "data", listen=["127.0.0.1:0"], admin_token="a", bot_doors=True
)
"""


def run_child_arena(
    tmp_path: Path, script: str, limit: str = "resource.getrlimit(resource.RLIMIT_NOFILE)"
) -> subprocess.CompletedProcess[str]:
    """``script`` after :data:`CHILD_ARENA`, in a process of its own at ``limit`` (a Python
    expression: soft and hard)."""
    return subprocess.run(
        [sys.executable, "-c", CHILD_ARENA.replace("@LIMIT@", limit) + script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[2],
    )


#: An arena at 1,024 open files (the usual soft limit, and the case its reserve's "half of a
#: smaller limit" is for) whose bots all hold their doors: as many doors as the doors' half of
#: the connections allows, each flooded past its cap; then what the arena may still open.
AT_1024_OPEN_FILES = """
def files_left(most):
    held = []
    try:
        while len(held) < most:
            held.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    finally:
        for fd in held:
            os.close(fd)
    return len(held)


async def main():
    async with running_server(config) as server:
        doors = server.bot_doors(tmp / "doors")
        opened = []
        try:
            while True:
                opened.append(doors.open())
        except OSError as refused:
            print("doors:", len(opened), "then:", refused, flush=True)
        flood = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.edge.door_flooder", "3", str(2 * DOOR_CONNECTIONS), "1",
            *(str(door.path) for door in opened), stdout=subprocess.PIPE
        )
        await asyncio.sleep(2)  # the flood is in place (opened in well under a second)
        print("files the arena can still open:", files_left(128), flush=True)
        said, _ = await flood.communicate()
        print(said.decode().strip(), flush=True)
        await doors.close()

asyncio.run(main())
"""


@pytest.mark.system
def test_the_doors_hold_no_more_connections_than_were_kept_for_them(tmp_path: Path) -> None:
    """Door connections were counted in no cap (review 39): at 1,024 open files, 62 bots
    holding 16 connections each left the arena unable to open 64 files (gRPC: ``File
    descriptor limit reached``).  An arena that launches bots now shares its connections half
    and half between its server and the doors: a door past the doors' half is refused, naming
    the limit to raise, and a flood of every door leaves the arena its own files."""
    child = run_child_arena(tmp_path, AT_1024_OPEN_FILES, limit="(1024, 1024)")
    assert child.returncode == 0, child.stdout + child.stderr[-3000:]
    doors = (1024 - 512) // 2 // DOOR_DESCRIPTORS
    assert f"doors: {doors} then: " in child.stdout, child.stdout
    assert "no descriptors are left for another" in child.stdout
    flood = re.search(r"(\d+) connections opened, (\d+) still open", child.stdout)
    assert flood, child.stdout
    # (a connection over a door's cap may be refused before it is accepted, or closed after)
    assert int(flood[1]) > int(flood[2]) == DOOR_CONNECTIONS * doors, flood[0]
    assert "files the arena can still open: 128" in child.stdout, child.stdout
    assert "File descriptor limit reached" not in child.stderr


#: A door closed in the turn of the loop it was opened in, as when the sandbox refuses a bot
#: whose door is open already (its folder is a shared one): run in a process of its own, as
#: the arena crashed (SIGSEGV: grpc.aio's server stopped while it started, review 39).
CLOSED_AS_IT_OPENS = """
async def main():
    async with running_server(config) as server:
        doors = server.bot_doors(tmp / "doors")
        for _ in range(20):
            doors.open().close()
        launcher = BotLauncher(server.address, doors, SandboxPolicy(), hidden=[])
        process = launcher.process(["/usr/bin/true"], "t", tmp / "bot", folder=Path("/tmp"))

        async def start():
            try:
                process.start()
            except BotStartError as refused:
                print("refused:", refused, flush=True)

        await server.in_trio(start)
        print("doors open:", doors.open_doors, flush=True)
        await doors.close()
    print("the arena ended", flush=True)

asyncio.run(main())
"""


@pytest.mark.system
def test_a_door_closed_as_it_opens_leaves_the_arena_running(tmp_path: Path) -> None:
    child = run_child_arena(tmp_path, CLOSED_AS_IT_OPENS)
    assert child.returncode == 0, f"exit status {child.returncode}: {child.stderr[-3000:]}"
    assert "refused:" in child.stdout and "shared folder" in child.stdout, child.stdout
    assert "doors open: 0" in child.stdout and "the arena ended" in child.stdout


#: An arena started at a soft limit of 1,024 open files and a higher hard limit (a shell's
#: usual): it raises the soft limit to the hard one, and counts its connections after.
FROM_A_LOW_SOFT_LIMIT = """
async def main():
    async with running_server(config) as server:
        doors = server.bot_doors(tmp / "doors")
        print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], doors.most, flush=True)
        await doors.close()

asyncio.run(main())
"""


@pytest.mark.system
def test_the_doors_are_counted_from_the_raised_open_files_limit(tmp_path: Path) -> None:
    """Review 39b: counted before the arena raised its soft limit, a tournament started from a
    shell at 1,024 had 64 doors at a hard limit of 20,000, and its 65th bot failed to start."""
    hard = "resource.getrlimit(resource.RLIMIT_NOFILE)[1]"
    child = run_child_arena(tmp_path, FROM_A_LOW_SOFT_LIMIT, limit=f"(1024, {hard})")
    assert child.returncode == 0, child.stderr[-3000:]
    soft, most = (int(word) for word in child.stdout.split())
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert soft == (1024 if hard == resource.RLIM_INFINITY else hard)  # (no maximum: kept)
    assert most == (soft - min(DESCRIPTOR_RESERVE, soft // 2)) // 2 // DOOR_DESCRIPTORS
