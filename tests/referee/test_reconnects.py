"""Seats follow their bot's live connections, whatever order connections come and go in."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from bisca.engine import GAMES
from bisca.server.referee import MatchPlan, Referee, ServerOptions, clock_settings
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import AutoBot, connect, hello
from tests.support.waiting import run_on_mock_clock, wait_until


@pytest.mark.parametrize("other_game_first", [False, True], ids=["alone", "after-a-bestia-one"])
def test_a_reconnect_seen_before_the_old_stream_closes_keeps_the_seat(
    tmp_path: Path, other_game_first: bool
) -> None:
    """The bot's new connection is welcomed while the server still holds its old one (a
    network cut the server has not noticed yet); when the old one closes, the seat moves to
    the new one instead of waiting for a reconnect that already happened.  The bot may hold a
    connection for another game too, older than the new one: the seat goes to the
    connection that plays its game, not to the bot's first."""

    async def scenario() -> None:
        referee = Referee(
            Store.in_directory(tmp_path),
            ServerOptions(clock=clock_settings(5000, 0, "default"), join_timeout=10),
        )
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            names = ["a", "b", "c", "d"]
            bots = await connect(referee, names)
            old = bots["a"]
            old.playing = False  # the match waits on its seat when it comes to it
            if other_game_first:
                bestia = AutoBot(referee, "conn-a-bestia")
                bestia.say(hello(referee.add_ephemeral_bot("a"), pb.GAME_BESTIA))
                await wait_until(lambda: bestia.of_kind("welcome"))
            runner = await referee.create_match(
                MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), tuple(names), seed=3)
            )
            await wait_until(lambda: old.of_kind("action_request"))
            new = AutoBot(referee, "conn-a-again")
            new.say(hello(referee.add_ephemeral_bot("a")))
            await wait_until(lambda: new.of_kind("welcome"))
            old.disconnect()
            # Well within the 5 s the open request may last: it is sent again at once.
            await wait_until(lambda: new.of_kind("action_request"), timeout=4)
            with trio.fail_after(60):
                await runner.done.wait()
            assert runner.status == "finished", runner.reason
            started = [m.match_started for m in new.of_kind("match_started")]
            assert [(s.seat, s.resumed) for s in started] == [(0, True)]
            assert new.of_kind("action_request"), "the seat's requests reach the new connection"
            clock = runner.seats[0].clock
            assert (clock.timeouts, clock.defaults_played) == (0, 0)
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_second_hello_before_the_welcome_is_a_duplicate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the mock clock: a one-time token is checked without the store (no thread)."""

    async def scenario() -> None:
        referee = Referee(Store.in_directory(tmp_path), ServerOptions(hello_timeout=30))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            eager = AutoBot(referee, "eager")
            token = referee.add_ephemeral_bot("eager")
            eager.say(hello(token))
            eager.say(hello(token))  # before the first one is answered
            await wait_until(lambda: eager.of_kind("welcome") and eager.of_kind("error"))
            await trio.testing.wait_all_tasks_blocked()
            assert len(eager.of_kind("welcome")) == 1
            assert [m.error.code for m in eager.of_kind("error")] == [pb.ERROR_CODE_DUPLICATE_HELLO]
            assert len(referee.online["eager"]) == 1
            eager.disconnect()
            await wait_until(lambda: "eager" not in referee.online)
            nursery.cancel_scope.cancel()

    run_on_mock_clock(scenario, monkeypatch)
