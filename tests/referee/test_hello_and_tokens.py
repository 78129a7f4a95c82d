"""The Hello: messages pipelined right after it wait for it, and wrong tokens cost time.

No network: connections are callables on the referee's entry points, and time is trio's mock
clock (the delays here are minutes of virtual time, over in milliseconds).
"""

from __future__ import annotations

import math
from pathlib import Path

import trio
import trio.testing

from bisca.server.referee import (
    FREE_FAILURES,
    MAX_DELAY_S,
    Referee,
    ServerOptions,
    WrongTokenThrottle,
)
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb


class Peer:
    """One stream: what it received, and when (on the referee's clock)."""

    def __init__(self, referee: Referee, connection_id: str, peer: str) -> None:
        self.id = connection_id
        self.received: list[tuple[float, pb.ServerMessage]] = []
        referee.connection_opened(connection_id, self._receive, lambda: None, peer)

    def _receive(self, data: bytes) -> None:
        self.received.append((trio.current_time(), pb.ServerMessage.FromString(data)))

    def kinds(self) -> list[str]:
        return [str(message.WhichOneof("kind")) for _, message in self.received]

    def first(self, kind: str) -> tuple[float, pb.ServerMessage] | None:
        return next((item for item in self.received if item[1].WhichOneof("kind") == kind), None)


def hello(token: str) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token=token, protocol_version=1, games=[pb.GAME_BELOTE]))


def _referee(tmp_path: Path) -> Referee:
    # No hello timeout: the mock clock jumps to the next deadline whenever every task waits.
    return Referee(Store.in_directory(tmp_path), ServerOptions(hello_timeout=math.inf))


def test_messages_sent_right_after_the_hello_wait_for_the_welcome(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            token = referee.store.bots.add("eager")
            bot = Peer(referee, "c1", "ipv4:127.0.0.1:4000")
            # Hello, then at once an action reply and an empty message, before any Welcome.
            referee.message_received("c1", hello(token))
            stray = pb.ActionReply(request_id="r-none")
            referee.message_received("c1", pb.BotMessage(action=stray))
            referee.message_received("c1", pb.BotMessage())
            while len(bot.received) < 3:
                await trio.sleep(0.01)
            assert bot.kinds() == ["welcome", "error", "error"]
            codes = [message.error.code for _, message in bot.received[1:]]
            # Played after the Welcome, in order, as a welcomed bot's messages.
            assert codes == [pb.ERROR_CODE_UNKNOWN_REQUEST, pb.ERROR_CODE_MALFORMED_MESSAGE]
            nursery.cancel_scope.cancel()

    trio.run(scenario, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_message_before_any_hello_is_still_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            bot = Peer(referee, "c1", "ipv4:127.0.0.1:4000")
            referee.message_received("c1", pb.BotMessage(action=pb.ActionReply(request_id="x")))
            assert bot.kinds() == ["error"]
            assert bot.received[0][1].error.code == pb.ERROR_CODE_HELLO_REQUIRED
            nursery.cancel_scope.cancel()

    trio.run(scenario, clock=trio.testing.MockClock(autojump_threshold=0))


def test_wrong_tokens_from_one_address_cost_more_and_more_time(tmp_path: Path) -> None:
    guesses = 40

    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            start = trio.current_time()
            # A guesser opens many streams at once from one address (different ports).
            guessers = [Peer(referee, f"g{n}", f"ipv4:10.0.0.9:{5000 + n}") for n in range(guesses)]
            for number, guesser in enumerate(guessers):
                referee.message_received(guesser.id, hello(f"bisca_guess_{number}"))
            # Meanwhile a bot with its right token, through the same address, and one elsewhere.
            honest = Peer(referee, "h1", "ipv4:10.0.0.9:6000")
            referee.message_received("h1", hello(referee.add_ephemeral_bot("honest")))
            other = Peer(referee, "o1", "ipv4:10.0.0.7:7000")
            referee.message_received("o1", hello("bisca_wrong_elsewhere"))
            while not all(g.received for g in guessers) or not other.received:
                await trio.sleep(60)  # virtual seconds
            answered = sorted(g.received[0][0] - start for g in guessers)
            assert all(g.kinds() == ["error"] for g in guessers)
            assert all(g.received[0][1].error.code == pb.ERROR_CODE_UNKNOWN_TOKEN for g in guessers)
            welcome = honest.first("welcome")
            assert welcome is not None and welcome[0] - start < 0.001  # not slowed at all
            # The first few are free; then each waits its turn after the one before, for a
            # delay that doubles up to a cap: 40 guesses take minutes, not milliseconds.
            throttle = WrongTokenThrottle()
            assert answered[FREE_FAILURES - 1] < 1
            for failures in range(FREE_FAILURES + 1, guesses + 1):
                gap = answered[failures - 1] - answered[failures - 2]
                assert gap >= throttle.delay(failures) - 1e-6, (failures, gap)
            assert answered[-1] > (guesses - 15) * MAX_DELAY_S
            # Another address is not held up behind the guesser's queue.
            held_up = sum(throttle.delay(n) for n in range(1, FREE_FAILURES + 9))
            assert other.received[0][0] - start < held_up
            nursery.cancel_scope.cancel()

    # Jump only after 50 ms of idleness: the store's lookups of wrong tokens run in threads.
    trio.run(scenario, clock=trio.testing.MockClock(autojump_threshold=0.05))


def test_the_wait_for_a_hello_ends_once_welcomed_or_gone(tmp_path: Path) -> None:
    """A stream's Hello timer holds its connection only until the Hello is answered or the
    stream closes (a server whose bots reconnect often keeps nothing of the closed streams for
    the rest of the timeout); one that says nothing is still refused at the timeout."""

    def waiting_for_hellos(referee: Referee) -> int:
        assert referee.nursery is not None
        return sum("_expect_hello" in task.name for task in referee.nursery.child_tasks)

    async def scenario() -> None:
        referee = Referee(Store.in_directory(tmp_path), ServerOptions(hello_timeout=60))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            welcomed = Peer(referee, "c1", "ipv4:127.0.0.1:4000")
            Peer(referee, "c2", "ipv4:127.0.0.1:4001")
            silent = Peer(referee, "c3", "ipv4:127.0.0.1:4002")
            await trio.sleep(0)
            assert waiting_for_hellos(referee) == 3
            referee.message_received("c1", hello(referee.add_ephemeral_bot("quick")))
            referee.connection_closed("c2")
            await trio.sleep(1)  # virtual: far less than the timeout
            assert welcomed.kinds() == ["welcome"]
            assert waiting_for_hellos(referee) == 1
            await trio.sleep(60)
            assert silent.kinds() == ["error"]
            assert silent.received[0][1].error.code == pb.ERROR_CODE_HELLO_TIMEOUT
            assert waiting_for_hellos(referee) == 0
            nursery.cancel_scope.cancel()

    trio.run(scenario, clock=trio.testing.MockClock(autojump_threshold=0))
