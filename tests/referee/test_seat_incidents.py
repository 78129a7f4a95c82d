"""What went wrong for a seat is counted in its result, the log's footer and the store: its
bot's crash, its rejected answers, beside its timeouts and defaults (in-process referee)."""

from __future__ import annotations

from pathlib import Path

import trio

from bisca.engine import GAMES
from bisca.server.referee import MatchPlan, Referee, ServerOptions, clock_settings
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import connect
from tests.support.waiting import wait_until


def test_a_rejected_answer_and_a_crash_are_counted_for_the_seat(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = Store.in_directory(tmp_path)
        referee = Referee(
            store, ServerOptions(clock=clock_settings(30000, 0, "default"), join_timeout=10)
        )
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            names = ["a", "b", "c", "d"]
            bots = await connect(referee, names)
            broken = bots["a"]
            broken.playing = False
            runner = await referee.create_match(
                MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), tuple(names), seed=3)
            )
            await wait_until(lambda: broken.of_kind("action_request"))
            request = broken.of_kind("action_request")[0].action_request
            empty = pb.ActionReply(request_id=request.request_id, action=pb.GameAction())
            broken.say(pb.BotMessage(action=empty))
            await wait_until(lambda: broken.of_kind("action_rejected"))
            # What the sandbox does when the bot's process ends during the match.
            runner.forfeit_seat(0, "its bot process exited with code 1", crashed=True)
            with trio.fail_after(60):
                await runner.done.wait()
            assert runner.status == "finished", runner.reason
            first = runner.results[0]
            assert (first.crashes, first.illegal_moves) == (1, 1)
            assert first.forfeited and first.defaults_played >= 1
            assert all((r.crashes, r.illegal_moves) == (0, 0) for r in runner.results[1:])
            stored = store.matches.get(runner.id)
            assert stored is not None
            assert (stored.seats[0].crashes, stored.seats[0].illegal_moves) == (1, 1)
            # The log's footer and the MatchEnded carry them too.
            await wait_until(lambda: bots["b"].of_kind("match_ended"))
            ended = bots["b"].of_kind("match_ended")[0].match_ended
            assert (ended.seats[0].crashes, ended.seats[0].illegal_moves) == (1, 1)
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_reply_the_referee_reads_after_the_seats_clock_ran_out_is_late(tmp_path: Path) -> None:
    """The referee is held up while a seat's clock runs out, so the reply is read before the
    timer's turn comes (here the runner's clock is moved on past the deadline, which no timer
    of the match's sees): it is late, the forfeit policy applies, and its action is not
    played (the runner hands ``MatchCore.reply`` the time it reads the reply at)."""

    async def scenario() -> None:
        referee = Referee(
            Store.in_directory(tmp_path),
            ServerOptions(clock=clock_settings(5_000, 0, "forfeit"), join_timeout=10),
        )
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            names = ["a", "b", "c", "d"]
            bots = await connect(referee, names, playing=False)
            runner = await referee.create_match(
                MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), tuple(names), seed=1)
            )
            await wait_until(lambda: any(b.of_kind("action_request") for b in bots.values()))
            assert runner.state is not None and runner.state.to_act is not None
            seat = runner.state.to_act
            bot = bots[names[seat]]
            request = bot.of_kind("action_request")[-1].action_request
            held_up = runner._now
            runner._now = lambda: held_up() + 6.0  # type: ignore[method-assign]
            reply = pb.ActionReply(request_id=request.request_id, action=request.legal_actions[0])
            referee.message_received(bot.id, pb.BotMessage(action=reply))
            clock = runner.seats[seat].clock
            assert runner.steps == 1 and clock.forfeited and clock.timeouts == 1
            assert bot.of_kind("error")[-1].error.code == pb.ERROR_CODE_UNKNOWN_REQUEST
            nursery.cancel_scope.cancel()

    trio.run(scenario)
