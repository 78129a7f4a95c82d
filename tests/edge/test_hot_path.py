"""A served match's decisions never cross into trio: a welcomed bot's replies are judged,
applied, logged and answered in the asyncio loop's own turn, and a seat's deadline is a loop
timer (a real server on loopback, a real gRPC bot)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc

from bisca.engine import GAMES
from bisca.server.edge import ServerConfig, running_server
from bisca.server.records import MatchStatus
from bisca.server.referee import MatchPlan, ServerOptions, clock_settings
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.support.served import asked_match, count_handed


def test_replies_are_taken_in_the_loops_turn_and_deadlines_are_loop_timers(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path,
            listen=["127.0.0.1:0"],
            admin_token="admin",
            options=ServerOptions(clock=clock_settings(50, 0, "default")),
        )
        async with running_server(config) as server:
            token = server.store.bots.add("half")
            referee = server.referee
            handed = count_handed(referee)
            crossed, in_turn = handed.crossed, handed.in_turn
            async with grpc.aio.insecure_channel(server.address) as channel:
                call = arena_pb2_grpc.ArenaStub(channel).Play()
                await call.write(
                    pb.BotMessage(
                        hello=pb.Hello(token=token, protocol_version=2, games=[pb.GAME_BELOTE])
                    )
                )
                assert (await call.read()).WhichOneof("kind") == "welcome"
                plan = MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), ("half",) * 4)
                runner = await server.in_trio(referee.create_match, plan)
                # The bot holds the four seats and answers every seat but seat 0, whose
                # requests run out of time (50 ms, no bank): the loop's timers end them.
                ended = None
                silent_requests = 0
                while ended is None:
                    message = await asyncio.wait_for(call.read(), 30)
                    assert message is not grpc.aio.EOF
                    kind = message.WhichOneof("kind")
                    if kind == "match_ended":
                        ended = message.match_ended
                    elif kind == "action_request" and message.action_request.seat == 0:
                        silent_requests += 1
                    elif kind == "action_request":
                        request = message.action_request
                        await call.write(
                            pb.BotMessage(
                                action=pb.ActionReply(
                                    request_id=request.request_id,
                                    action=request.legal_actions[0],
                                )
                            )
                        )
                call.cancel()
            assert runner.status is MatchStatus.FINISHED, runner.reason
            # Every request of the silent seat ended at its deadline.  (The answered seats
            # are not asked to beat 50 ms: on a loaded machine a reply may come late, and
            # then it is refused as any late reply is, still in the loop's turn.)
            timed_out = runner.results[0]
            assert timed_out.timeouts >= 1
            assert timed_out.timeouts == timed_out.defaults_played == silent_requests
            assert crossed == ["c1"]  # the Hello crossed into trio; no reply did
            # Every reply was taken in the loop's turn: all of them, but for late ones the
            # server may not have read before the stream closed.
            answered = runner.steps - silent_requests
            late = sum(result.timeouts for result in runner.results[1:])
            assert answered - late <= len(in_turn) <= answered

    asyncio.run(scenario())


def test_a_served_matchs_log_reaches_the_disk_while_its_bot_thinks(tmp_path: Path) -> None:
    """The log's records wait for a batch's write at most ``FLUSH_AFTER_S``, on the loop's own
    timer, even when no record follows (the bot asked thinks for seconds)."""

    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path,
            listen=["127.0.0.1:0"],
            admin_token="admin",
            options=ServerOptions(clock=clock_settings(5_000, 0, "default")),
        )
        async with running_server(config) as server, asked_match(server, "thinker") as runner:
            writer = runner.journal._writer
            assert writer is not None and writer.records >= 2  # the header and the deal

            async def written() -> None:
                while writer.partial_path.stat().st_size < writer.bytes_written:
                    await asyncio.sleep(0.01)

            # Within the 5 s the bot may think, well after the batch's 0.1 s.
            await asyncio.wait_for(written(), 4)
            assert not writer.waiting

    asyncio.run(scenario())
