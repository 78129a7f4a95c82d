"""What ``arena.proto``'s comments promise bots, held against the referee: a re-sent request
keeps its attempt across a reconnect, and one connection holds several seats of one match."""

from __future__ import annotations

from pathlib import Path

import trio

from bisca.engine import GAMES
from bisca.server.referee import MatchPlan, Referee, ServerOptions, clock_settings
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import AutoBot, connect, hello
from tests.support.waiting import wait_until

BELOTE = GAMES["belote"].settings({"deals": 1})


def referee_in(tmp_path: Path) -> Referee:
    return Referee(
        Store.in_directory(tmp_path),
        ServerOptions(clock=clock_settings(20000, 0, "default"), join_timeout=10),
    )


def test_a_request_sent_again_after_a_reconnect_keeps_its_attempt(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = referee_in(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            names = ["a", "b", "c", "d"]
            bots = await connect(referee, names)
            old = bots["a"]
            old.playing = False
            runner = await referee.create_match(MatchPlan("belote", BELOTE, tuple(names), seed=3))
            await wait_until(lambda: old.of_kind("action_request"))
            first = old.of_kind("action_request")[0].action_request
            # Not an action of the game: rejected, and the request comes again as attempt 2.
            old.say(pb.BotMessage(action=pb.ActionReply(request_id=first.request_id)))
            await wait_until(lambda: len(old.of_kind("action_request")) == 2)
            again = old.of_kind("action_request")[1].action_request
            assert (again.request_id, again.attempt) == (first.request_id, 2)
            old.disconnect()
            new = AutoBot(referee, "conn-a-again")
            new.say(hello(referee.add_ephemeral_bot("a")))
            await wait_until(lambda: new.of_kind("action_request"))
            resent = new.of_kind("action_request")[0].action_request
            assert (resent.request_id, resent.attempt) == (first.request_id, 2)
            with trio.fail_after(60):
                await runner.done.wait()
            assert runner.status == "finished", runner.reason
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_one_connection_holds_several_seats_of_one_match(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = referee_in(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            bots = await connect(referee, ["a", "b"])
            runner = await referee.create_match(
                MatchPlan("belote", BELOTE, ("a", "b", "a", "b"), seed=5)
            )
            with trio.fail_after(60):
                await runner.done.wait()
            assert runner.status == "finished", runner.reason
            for name, seats in (("a", {0, 2}), ("b", {1, 3})):
                bot = bots[name]
                assert {m.match_started.seat for m in bot.of_kind("match_started")} == seats
                assert {m.action_request.seat for m in bot.of_kind("action_request")} == seats
            nursery.cancel_scope.cancel()

    trio.run(scenario)
