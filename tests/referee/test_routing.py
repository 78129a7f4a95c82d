"""The referee's routing without a network: connections are plain callables here
(``tests/support/fake_bots.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from bisca.engine import GAMES
from bisca.server.referee import (
    Malformed,
    MatchPlan,
    Referee,
    ServerOptions,
    TooLarge,
    clock_settings,
)
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import AutoBot, connect, hello
from tests.support.waiting import run_on_mock_clock, wait_until


def test_replies_are_routed_only_from_the_seat_owner(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = Referee(
            Store.in_directory(tmp_path),
            ServerOptions(clock=clock_settings(2000, 0, "forfeit"), hello_timeout=5),
        )
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            names = ["a", "b", "c", "d"]
            bots = await connect(referee, names, playing=False)
            runner = await referee.create_match(
                MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), tuple(names), seed=1)
            )
            await wait_until(lambda: any(b.of_kind("action_request") for b in bots.values()))
            first = runner.state.to_act
            owner, intruder = bots[names[first]], bots[names[(first + 1) % 4]]
            request = owner.of_kind("action_request")[-1].action_request
            stolen = pb.BotMessage(
                action=pb.ActionReply(
                    request_id=request.request_id, action=request.legal_actions[0]
                )
            )
            referee.message_received(intruder.id, stolen)
            errors = [m.error for m in intruder.of_kind("error")]
            # Another bot's request is as unknown to it as one never sent (no match named).
            assert errors and errors[-1].code == pb.ERROR_CODE_UNKNOWN_REQUEST
            assert not errors[-1].match_id
            # The owner's bot on another connection, which does not hold the seat, is told so.
            second = AutoBot(referee, "conn-second", playing=False)
            second.say(hello(referee.add_ephemeral_bot(names[first])))
            await wait_until(lambda: second.of_kind("welcome"))
            referee.message_received(second.id, stolen)
            told = second.of_kind("error")[-1].error
            assert told.code == pb.ERROR_CODE_NOT_YOUR_SEAT and told.match_id == runner.id
            assert runner.steps == 0  # neither answer was played
            referee.message_received(intruder.id, TooLarge(100_000))
            referee.message_received(intruder.id, Malformed(7, "truncated"))
            referee.message_received(intruder.id, pb.BotMessage())
            codes = [m.error.code for m in intruder.of_kind("error")][-3:]
            assert codes == [
                pb.ERROR_CODE_MESSAGE_TOO_LARGE,
                pb.ERROR_CODE_MALFORMED_MESSAGE,
                pb.ERROR_CODE_MALFORMED_MESSAGE,
            ]
            assert not intruder.closed
            referee.message_received(owner.id, stolen)
            await wait_until(lambda: runner.steps == 1)
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_stream_that_does_not_start_with_hello_is_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the mock clock: the hello timeout is the referee's own (no store, no thread)."""

    async def scenario() -> None:
        referee = Referee(Store.in_directory(tmp_path), ServerOptions(hello_timeout=0.2))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            rude = AutoBot(referee, "rude", playing=False)
            referee.message_received("rude", pb.BotMessage(action=pb.ActionReply(request_id="x")))
            assert (
                rude.closed and rude.of_kind("error")[0].error.code == pb.ERROR_CODE_HELLO_REQUIRED
            )
            silent = AutoBot(referee, "silent", playing=False)
            await wait_until(lambda: silent.closed)
            assert silent.of_kind("error")[0].error.code == pb.ERROR_CODE_HELLO_TIMEOUT
            nursery.cancel_scope.cancel()

    run_on_mock_clock(scenario, monkeypatch)
