"""One server side of the protocol: ``bisca check-bot`` answers a bot's replies exactly as the
referee does, because both judge through the referee's judge and build with its builders.

A table of replies (legal, illegal, malformed, to a wrong request id, stale, and messages that
are no reply at all) is fed, for both games, to a real referee's match (driven in-process by
fake bots) and to the checker's judge holding the same request: each row must get the same
verdict from both, and the same bytes back (the ``ActionRejected`` or the ``Error``), which are
also those of the referee's pure :func:`judge_reply`.  A rejected row is judged on the
request's last attempt: every attempt the checker sends is its last (a refused answer fails
the check), so its rejections say ``attempts_left: 0``, as the referee's of a last attempt.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from bisca import wire
from bisca.engine import GAMES, Action, MatchState, belote, bestia
from bisca.server.conformance._arena import Received
from bisca.server.conformance._harness import Harness
from bisca.server.conformance._judge import Judge
from bisca.server.conformance._match import Ledger, Sent
from bisca.server.conformance._report import CheckFailed
from bisca.server.referee import (
    Inbound,
    Malformed,
    MatchPlan,
    Referee,
    ServerOptions,
    Verdict,
    clock_settings,
    judge_reply,
)
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import AutoBot
from tests.support.waiting import wait_until

SEED = 11
CARDS = {"belote": belote.DECK, "bestia": bestia.BestiaCard.DECK}
PLAY_CARD = {"belote": belote.PlayCard, "bestia": bestia.PlayCard}
OTHER_GAME = {"belote": "bestia", "bestia": "belote"}


@dataclass(frozen=True)
class Asking:
    """The request a row answers: its ``ActionRequest`` and the state it asks about."""

    game: str
    request: pb.ActionRequest
    state: MatchState


def illegal_action(asking: Asking) -> Action:
    """A well-formed action of the game that the rules forbid now: a card not to be played."""
    for card in CARDS[asking.game]:
        action = PLAY_CARD[asking.game](card)
        if asking.state.why_illegal(action) is not None:
            return action
    raise AssertionError("every card may be played")


def reply(request_id: str, action: pb.GameAction) -> pb.BotMessage:
    return pb.BotMessage(action=pb.ActionReply(request_id=request_id, action=action))


def answering(make: Callable[[Asking], pb.GameAction]) -> Callable[[Asking], Inbound]:
    return lambda asking: reply(asking.request.request_id, make(asking))


def legal(asking: Asking) -> pb.GameAction:
    return asking.request.legal_actions[-1]


def other_games_action(asking: Asking) -> pb.GameAction:
    other = OTHER_GAME[asking.game]
    card = CARDS[other][0]
    return wire.encode_game_action(other, PLAY_CARD[other](card))


@dataclass(frozen=True)
class Row:
    name: str
    message: Callable[[Asking], Inbound]
    verdict: Verdict
    #: Answered on the request's last attempt (two answers rejected before it).
    last_attempt: bool = False
    #: Answers the request the row before settled (a stale answer); other rows answer the
    #: open request (the next one, once the one before is settled).
    stale: bool = False


ROWS = [
    Row(
        "a reply to a request id never sent",
        lambda asking: reply("made-up-1", legal(asking)),
        Verdict.UNKNOWN_REQUEST,
    ),
    Row(
        "bytes that are not a BotMessage",
        lambda asking: Malformed(7, "Error parsing message"),
        Verdict.MALFORMED_MESSAGE,
    ),
    Row("an empty BotMessage", lambda asking: pb.BotMessage(), Verdict.MALFORMED_MESSAGE),
    Row(
        "a second Hello",
        lambda asking: pb.BotMessage(hello=pb.Hello(protocol_version=2)),
        Verdict.DUPLICATE_HELLO,
    ),
    Row(
        "a reply with no action",
        answering(lambda asking: pb.GameAction()),
        Verdict.MALFORMED_ACTION,
        last_attempt=True,
    ),
    Row(
        "the other game's action",
        answering(other_games_action),
        Verdict.MALFORMED_ACTION,
        last_attempt=True,
    ),
    Row(
        "an illegal action",
        answering(lambda asking: wire.encode_game_action(asking.game, illegal_action(asking))),
        Verdict.ILLEGAL_ACTION,
        last_attempt=True,
    ),
    Row("a legal action", answering(legal), Verdict.TAKEN),
    Row(
        "the same answer again (stale)",
        answering(legal),
        Verdict.UNKNOWN_REQUEST,
        stale=True,
    ),
]


def verdict_of(answer: bytes | None) -> Verdict:
    """What a referee's answer says of the reply it answers (none: the action was taken)."""
    if answer is None:
        return Verdict.TAKEN
    message = pb.ServerMessage.FromString(answer)
    if message.WhichOneof("kind") == "action_rejected":
        code = message.action_rejected.code
        return {
            pb.REJECT_CODE_MALFORMED_ACTION: Verdict.MALFORMED_ACTION,
            pb.REJECT_CODE_ILLEGAL_ACTION: Verdict.ILLEGAL_ACTION,
        }[code]
    return {
        pb.ERROR_CODE_UNKNOWN_REQUEST: Verdict.UNKNOWN_REQUEST,
        pb.ERROR_CODE_MALFORMED_MESSAGE: Verdict.MALFORMED_MESSAGE,
        pb.ERROR_CODE_DUPLICATE_HELLO: Verdict.DUPLICATE_HELLO,
    }[message.error.code]


class RecordingBot(AutoBot):
    """A fake bot that keeps the bytes it receives, and sends what it is told."""

    def __init__(self, referee: Referee, connection_id: str) -> None:
        self.raw: list[bytes] = []
        super().__init__(referee, connection_id, playing=False)

    def _receive(self, data: bytes) -> None:
        self.raw.append(data)
        super()._receive(data)

    def send(self, message: Inbound) -> None:
        self._token.run_sync_soon(self.referee.message_received, self.id, message)

    def answers_since(self, start: int) -> list[bytes]:
        """The errors and rejections received since the ``start``-th message."""
        return [
            data
            for data in self.raw[start:]
            if pb.ServerMessage.FromString(data).WhichOneof("kind") in ("error", "action_rejected")
        ]


class RecordingHarness(Harness):
    """The checker's harness with no bot process: what it sends is kept."""

    def __init__(self, log_dir: Path) -> None:
        super().__init__([], log_dir, SandboxPolicy())
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)


class RefereeSide:
    """A referee playing one match of the game between recording bots, one per seat."""

    def __init__(self, referee: Referee, game: str) -> None:
        self.referee = referee
        self.game = game
        self.bots: dict[str, RecordingBot] = {}
        self.seen: set[str] = set()

    async def start(self) -> None:
        settings = GAMES[self.game].settings({})
        names = [f"seat{n}" for n in range(GAMES[self.game].seats(settings))]
        for name in names:
            bot = self.bots[name] = RecordingBot(self.referee, f"conn-{name}")
            token = self.referee.add_ephemeral_bot(name)
            bot.send(
                pb.BotMessage(
                    hello=pb.Hello(
                        token=token, protocol_version=2, games=[wire.game_enum(self.game)]
                    )
                )
            )
        await wait_until(lambda: all(bot.of_kind("welcome") for bot in self.bots.values()))
        await self.referee.create_match(MatchPlan(self.game, settings, tuple(names), seed=SEED))

    async def next_request(self) -> tuple[RecordingBot, Asking]:
        """The next request the match opens, once its bot has it."""
        pending = self.referee.pending
        await wait_until(lambda: any(rid not in self.seen for rid in pending))
        (request_id,) = [rid for rid in pending if rid not in self.seen]
        self.seen.add(request_id)
        open_request = pending[request_id]
        bot = self.bots[open_request.match.seats[open_request.seat].bot]
        await wait_until(lambda: self._latest(bot, request_id) is not None)
        request = self._latest(bot, request_id)
        assert request is not None and open_request.match.state is not None
        return bot, Asking(self.game, request, open_request.match.state.copy())

    @staticmethod
    def _latest(bot: RecordingBot, request_id: str) -> pb.ActionRequest | None:
        requests = [
            m.action_request
            for m in bot.of_kind("action_request")
            if m.action_request.request_id == request_id
        ]
        return requests[-1] if requests else None

    async def to_last_attempt(self, bot: RecordingBot, asking: Asking) -> Asking:
        """Reject two answers, so that the next one is judged on the last attempt."""
        request_id = asking.request.request_id

        def at_attempt(attempt: int) -> bool:
            latest = self._latest(bot, request_id)
            return latest is not None and latest.attempt == attempt

        for attempt in (2, 3):
            bot.send(reply(request_id, pb.GameAction()))
            await wait_until(lambda: at_attempt(attempt))  # noqa: B023 (awaited at once)
        latest = self._latest(bot, request_id)
        assert latest is not None
        return Asking(asking.game, latest, asking.state)

    async def answer(
        self, bot: RecordingBot, message: Inbound, row: Row, asking: Asking
    ) -> bytes | None:
        """What the referee sends back to ``message`` (``None``: it took the action)."""
        start = len(bot.raw)
        bot.send(message)
        if row.verdict is Verdict.TAKEN:
            request_id = asking.request.request_id
            await wait_until(lambda: request_id not in self.referee.pending)
            assert bot.answers_since(start) == []
            return None
        await wait_until(lambda: bot.answers_since(start) != [])
        (answer,) = bot.answers_since(start)
        return answer


def kit_request(ledger: Ledger, asking: Asking, match_id: str) -> Sent:
    """The checker's record of the referee's request: the same ids, state and attempt."""
    request = asking.request
    settings = GAMES[asking.game].settings({})
    match = ledger.new_match(asking.game, settings, asking.state, SEED, [request.seat])
    match.id = match_id
    sent = Sent(
        request_id=request.request_id,
        match=match,
        seat=request.seat,
        attempt=request.attempt,
        legal=list(asking.state.legal_actions()),
        legal_messages=list(request.legal_actions),
        phase="",
        move_ms=request.clock.move_ms,
        sent_at=time.monotonic(),
    )
    ledger.requests[sent.request_id] = sent
    return sent


async def kit_answer(judge: Judge, harness: RecordingHarness, message: Inbound) -> bytes | None:
    """What the checker sends back to ``message`` (``None``: nothing, the answer is taken)."""
    start = len(harness.written)
    try:
        answer = await judge.judge(Received(message, time.monotonic()))
    except CheckFailed:
        answer = None
    else:
        assert answer is not None
    sent = harness.written[start:]
    assert len(sent) <= 1, sent
    return sent[0] if sent else None


def judge_of(asking: Asking, sent: Sent) -> Callable[[Inbound], bytes | None]:
    """The referee's pure judge, for the request as the referee's match holds it."""

    def judged(message: Inbound) -> bytes | None:
        asked = sent.asked if sent.status == "open" else None
        judgement = judge_reply(asked, message)
        return None if judgement.answer is None else judgement.answer.SerializeToString()

    return judged


@pytest.mark.parametrize("game", ["belote", "bestia"])
def test_the_checker_answers_every_reply_as_the_referee_does(tmp_path: Path, game: str) -> None:
    outcomes: list[tuple[str, Verdict, Verdict, bytes | None, bytes | None, bytes | None]] = []

    async def scenario() -> None:
        referee = Referee(
            Store.in_directory(tmp_path / "store"),
            ServerOptions(clock=clock_settings(60_000, 0, "default"), join_timeout=30),
        )
        harness = RecordingHarness(tmp_path / "check")
        ledger = Ledger(harness, move_ms=60_000)
        judge = Judge(harness, ledger)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            side = RefereeSide(referee, game)
            await side.start()
            bot, asking = await side.next_request()
            sent = None
            for row in ROWS:
                if not row.stale:
                    if asking.request.request_id not in referee.pending:  # settled
                        bot, asking = await side.next_request()
                    if row.last_attempt:
                        asking = await side.to_last_attempt(bot, asking)
                    match_id = referee.pending[asking.request.request_id].match.id
                    sent = kit_request(ledger, asking, match_id)
                assert sent is not None
                message = row.message(asking)
                pure = judge_of(asking, sent)(message)
                kit = await kit_answer(judge, harness, message)
                ours = await side.answer(bot, message, row, asking)
                outcomes.append((row.name, row.verdict, verdict_of(ours), ours, kit, pure))
            nursery.cancel_scope.cancel()

    trio.run(scenario)
    assert [name for name, *_ in outcomes] == [row.name for row in ROWS]
    for name, expected, verdict, ours, kit, pure in outcomes:
        assert verdict is expected, name
        assert kit == ours, (name, shown(kit), shown(ours))
        assert pure == ours, (name, shown(pure), shown(ours))


def shown(answer: bytes | None) -> pb.ServerMessage | None:
    return None if answer is None else pb.ServerMessage.FromString(answer)
