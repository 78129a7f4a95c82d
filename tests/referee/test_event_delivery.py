"""How a seat gets its events: inside its next request or its end (protocol 2's default), or
as they happen (protocol 1, or 2 with live events); exactly once per connection either way, and
the whole history again after a reconnect."""

from __future__ import annotations

from pathlib import Path

import trio

from bisca.engine import GAMES
from bisca.server.referee import MatchPlan, MatchRunner, Referee, ServerOptions, clock_settings
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import AutoBot
from tests.support.waiting import wait_until

NAMES = ["a", "b", "c", "d"]


def hello(token: str, protocol: int = pb.PROTOCOL_VERSION_2, live: bool = False) -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(
            token=token, protocol_version=protocol, games=[pb.GAME_BELOTE], live_events=live
        )
    )


def _referee(tmp_path: Path) -> Referee:
    return Referee(
        Store.in_directory(tmp_path),
        ServerOptions(clock=clock_settings(5000, 0, "default"), join_timeout=10),
    )


async def _connect(referee: Referee, modes: dict[str, tuple[int, bool]]) -> dict[str, AutoBot]:
    bots = {}
    for name, (protocol, live) in modes.items():
        bots[name] = bot = AutoBot(referee, f"conn-{name}")
        bot.say(hello(referee.add_ephemeral_bot(name), protocol, live))
    await wait_until(lambda: all(bot.of_kind("welcome") for bot in bots.values()))
    return bots


async def _play(referee: Referee, seed: int = 3) -> MatchRunner:
    runner = await referee.create_match(
        MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), tuple(NAMES), seed=seed)
    )
    with trio.fail_after(60):
        await runner.done.wait()
    assert runner.status == "finished", runner.reason
    return runner


def visible(runner: MatchRunner, seat: int) -> list[int]:
    """The indices of the events seat ``seat`` may see, in order."""
    assert runner.state is not None
    return [i for i, (audience, _) in enumerate(runner.state.all_events()) if audience >> seat & 1]


def carried(bot: AutoBot) -> list[int]:
    """The indices of the events ``bot`` got inside requests and ends, in order."""
    indices = []
    for message in bot.received:
        kind = message.WhichOneof("kind")
        if kind == "action_request":
            indices += [event.index for event in message.action_request.events]
        elif kind == "match_ended":
            indices += [event.index for event in message.match_ended.events]
    return indices


def batched(bot: AutoBot) -> list[int]:
    return [event.index for m in bot.of_kind("events") for event in m.events.events]


def test_by_default_events_travel_inside_requests_and_the_end(tmp_path: Path) -> None:
    """One message out per decision: each bot gets its Welcome, the start, its requests and
    its end, nothing else, and every event it may see comes inside them exactly once."""

    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            bots = await _connect(referee, {name: (2, False) for name in NAMES})
            runner = await _play(referee)
            requests = 0
            for seat, name in enumerate(NAMES):
                bot = bots[name]
                [welcome] = [m.welcome for m in bot.of_kind("welcome")]
                assert (welcome.protocol_version, welcome.live_events) == (2, False)
                kinds = [m.WhichOneof("kind") for m in bot.received]
                assert set(kinds) == {"welcome", "match_started", "action_request", "match_ended"}
                assert carried(bot) == visible(runner, seat)
                assert bot.of_kind("match_ended")[0].match_ended.events, "the last trick's"
                requests += kinds.count("action_request")
            assert requests == runner.steps  # no request was sent twice
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_live_events_and_protocol_1_get_each_steps_events_at_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            modes = {"a": (1, False), "b": (2, True), "c": (2, False), "d": (1, True)}
            bots = await _connect(referee, modes)
            runner = await _play(referee)
            for seat, name in enumerate(NAMES):
                bot = bots[name]
                live = modes[name][0] == 1 or modes[name][1]
                assert bot.of_kind("welcome")[0].welcome.live_events is live
                if live:
                    assert batched(bot) == visible(runner, seat) and carried(bot) == []
                    # Each request comes after the batch of the events before it.
                    kinds = [m.WhichOneof("kind") for m in bot.received]
                    assert kinds.index("events") < kinds.index("action_request")
                else:
                    assert carried(bot) == visible(runner, seat) and batched(bot) == []
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_reconnected_seat_gets_its_whole_history_inside_the_open_request(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            bots = await _connect(referee, {name: (2, False) for name in NAMES})
            old = bots["a"]
            old.playing = False
            runner = await referee.create_match(
                MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), tuple(NAMES), seed=8)
            )
            await wait_until(lambda: old.of_kind("action_request"))
            old.disconnect()
            new = AutoBot(referee, "conn-a-again")
            new.say(hello(referee.add_ephemeral_bot("a")))
            with trio.fail_after(60):
                await runner.done.wait()
            assert runner.status == "finished", runner.reason
            kinds = [m.WhichOneof("kind") for m in new.received]
            assert kinds[:3] == ["welcome", "match_started", "action_request"]
            assert new.received[1].match_started.resumed
            history = [e.index for e in new.received[2].action_request.events]
            assert history and history == visible(runner, 0)[: len(history)]
            assert carried(new) == visible(runner, 0)  # the history, then the rest, once
            nursery.cancel_scope.cancel()

    trio.run(scenario)
