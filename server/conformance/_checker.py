"""``bisca check-bot -- CMD ...``: does a bot command speak the arena's protocol?

A bot author should learn that their bot mishandles a rejection, a second match on the same
connection or a dropped stream before a league does, and from a sentence, not from a forfeit.
So this runs the bot command against a scripted referee that plays it through the situations
the real one produces, checks every answer, and prints one line per check, PASS or FAIL, with
the messages involved.

How it works
    :class:`Checker` starts a bare Play endpoint (:mod:`._arena`) and the bot as a
    subprocess with ``BISCA_ADDRESS`` and ``BISCA_TOKEN``, then runs the checks one after the
    other on the bot's connection.  Each check is a short script of messages built from real
    engine states through the referee's codec (:mod:`._script`); every answer is
    judged on its request id, its action (decoded by the codec, one of the legal actions) and
    its time (within the request's clock, measured on arrival).  Every wait has a deadline:
    the request's clock for an answer, :data:`CONNECT_TIMEOUT_S` for the bot to start and say
    hello, :data:`RECONNECT_TIMEOUT_S` to come back after a drop.

    The checker answers mistakes as the referee would (an ``Error`` with the referee's code
    for bytes that are not a ``BotMessage``, an unknown request id, a second Hello), so a bot
    sees what it would see in a league; but where the referee would let a bot retry or play a
    default action, the check fails at once and says why.

What is strict, and why
    * A second answer to a request already answered fails: the referee drops it with
      ``ERROR_CODE_UNKNOWN_REQUEST``, and it means the bot answered something twice.
    * After a rejection the bot must answer with a *different* legal action: the referee only
      rejects actions it will reject again, so a bot that repeats itself burns its attempts.
    * An answer to a request withdrawn by a ``MatchEnded`` (the match that ends early) or
      after its clock ran out is tolerated, as the referee tolerates it: the bot may have sent
      it before the news arrived.

A check that leaves the bot disconnected does not sink the rest: the next check waits for the
bot to come back, or starts the command again if it exited (at most :data:`MAX_STARTS` times).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import secrets
import tempfile
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NoReturn, TypeVarTuple

from google.protobuf.message import Message

from bisca import wire
from bisca.engine import GAMES, Action, MalformedActionError, Settings
from bisca.server.league import BotProcess, BotStartError
from bisca.server.referee import (
    MAX_BOT_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    SERVER_VERSION,
    Malformed,
    TooLarge,
)
from bisca.v1 import arena_pb2 as pb

from . import _script as script
from ._arena import Ended, Link, LinkItem, ScriptedArena

Args = TypeVarTuple("Args")

#: The games checked, in the order they run, when no ``--game`` is given.
CHECKED_GAMES = ("belote", "bestia")
DEFAULT_TIMEOUT_S = 2.0
#: The clock of the short-clock check (or the answer time, if that is shorter).
SHORT_CLOCK_MS = 300
#: From starting the command to its Hello (interpreters and gRPC take a while to load).
CONNECT_TIMEOUT_S = 15.0
#: From dropping the stream to the Hello on the new one.
RECONNECT_TIMEOUT_S = 10.0
#: How long to listen for a second answer after a corrected one, and for a crash after a
#: match ends early.
SETTLE_S = 0.25
#: How long to listen after each check for a second answer sent at once (a later one fails
#: the check in which it arrives, naming the check it belongs to).
END_QUIET_S = 0.03
#: How long the bot has to exit once the server closed its stream at the end.
EXIT_GRACE_S = 3.0
MAX_STARTS = 4
#: Requests per match in "two matches at once", and answers in "events between requests".
TWO_MATCH_ROUNDS = 3
EVENT_CHECK_ANSWERS = 4
EVENTS_SEED = 3

_REJECTED_ON_PURPOSE = (
    "bisca check-bot refuses this answer on purpose: answer the request again, with another "
    "of its legal actions"
)


class CheckFailed(Exception):
    """Why a check failed: a sentence, then the messages involved (one per line)."""

    def __init__(self, reason: str, *details: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details = list(details)


@dataclass
class CheckResult:
    name: str
    passed: bool
    text: str
    details: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        head = f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.text}"
        return [head, *(f"      {detail}" for detail in self.details)]


@dataclass
class Report:
    command: str
    games: list[str]
    stderr_path: Path
    results: list[CheckResult] = field(default_factory=list)
    process_end: str = ""

    @property
    def passed(self) -> int:
        return sum(1 for result in self.results if result.passed)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def exit_code(self) -> int:
        return 0 if self.results and not self.failed else 1

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"


# --------------------------------------------------------------------------------------------
# Requests, answers and matches as the checker keeps them


@dataclass
class Sent:
    """An ``ActionRequest`` sent to the bot, and what became of it."""

    request_id: str
    match: ScriptedMatch
    seat: int
    attempt: int
    legal: list[Action]
    legal_messages: list[pb.GameAction]
    phase: str
    move_ms: int
    sent_at: float
    status: Literal["open", "answered", "withdrawn"] = "open"
    answered_with: str = ""
    rejected: Action | None = None  # an action refused on purpose, which must not come back
    ended_by_match: bool = False  # withdrawn because its match ended
    check: str = ""  # the name of the check that sent it

    @property
    def deadline(self) -> float:
        return self.sent_at + self.move_ms / 1000

    def describe(self) -> str:
        sent = "sent (then withdrawn by MatchEnded)" if self.ended_by_match else "sent"
        return (
            f"{sent}: ActionRequest {self.request_id} (match {self.match.id}, seat {self.seat}, "
            f"attempt {self.attempt}, {self.match.game} {self.phase}, clock {self.move_ms} ms), "
            f"legal: {script.actions_text(self.legal_messages)}"
        )


@dataclass
class Answer:
    sent: Sent
    action: Action
    message: pb.GameAction
    elapsed_ms: float

    @property
    def text(self) -> str:
        return script.action_text(self.message)


class ScriptedMatch:
    """A match the checker plays with the bot: a real engine state and the bot's seats."""

    def __init__(
        self,
        checker: Checker,
        game: str,
        settings: Settings,
        state: script.State,
        seed: int,
        bot_seats: Sequence[int],
        move_ms: int,
    ) -> None:
        self.checker = checker
        self.id = "m-" + secrets.token_hex(4)
        self.game = game
        self.settings = settings
        self.state = state
        self.seed = seed
        self.bot_seats = sorted(set(bot_seats))
        self.move_ms = move_ms
        self.names = [
            checker.bot_name if seat in self.bot_seats else f"scripted-{seat}"
            for seat in range(state.num_seats)
        ]
        self.delivered = 0
        self.ended = False
        self.requests: list[Sent] = []

    def start(self, *, resumed: bool = False) -> None:
        for seat in self.bot_seats:
            self.checker.send(
                script.match_started(
                    self.id,
                    self.game,
                    self.settings,
                    seat,
                    self.names,
                    self.move_ms,
                    resumed=resumed,
                )
            )

    def history(self) -> None:
        """Every event so far that each bot seat may see, one batch per seat: how the referee
        brings a resumed seat up to date, and how a scripted situation starts mid-match."""
        self.delivered = 0
        self.events()

    def events(self, *, split: bool = False) -> int:
        """Send the events since the last call; returns the number of batches."""
        batches = script.event_batches(
            self.id, self.game, self.state, self.delivered, self.bot_seats, split=split
        )
        for message in batches:
            self.checker.send(message)
        self.delivered = self.state.event_count
        return len(batches)

    def request(self, move_ms: int | None = None) -> Sent:
        seat = self.state.to_act
        assert seat is not None and seat in self.bot_seats, "not the bot's turn"
        sent = Sent(
            check=self.checker.current_check,
            request_id=self.checker.new_request_id(),
            match=self,
            seat=seat,
            attempt=1,
            legal=list(self.state.legal_actions()),
            legal_messages=[],
            phase=script.phase_name(self.state),
            move_ms=move_ms or self.move_ms,
            sent_at=0.0,
        )
        self.requests.append(sent)
        self.checker.requests[sent.request_id] = sent
        self.send_request(sent)
        return sent

    def send_request(self, sent: Sent, *, attempt: int | None = None) -> None:
        """(Re)send ``sent`` with a fresh clock (and a new attempt number)."""
        if attempt is not None:
            sent.attempt = attempt
        message = script.action_request(
            sent.request_id, self.id, self.game, self.state, sent.move_ms, sent.attempt
        )
        sent.legal_messages = list(message.action_request.legal_actions)
        sent.status = "open"
        sent.sent_at = time.monotonic()
        self.checker.send(message)

    def apply(self, answer: Answer) -> None:
        self.state.apply(answer.action)

    def play_scripted(self, rng: random.Random, *, split: bool = False) -> int:
        """Play random legal actions for the scripted seats, sending the bot every step's
        events, until a bot seat is to act or the match is over; returns the batches sent."""
        batches = self.events(split=split)
        while self.state.to_act is not None and self.state.to_act not in self.bot_seats:
            self.state.apply(rng.choice(self.state.legal_actions()))
            batches += self.events(split=split)
        return batches

    def finish(self) -> None:
        self.events()
        for seat in self.bot_seats:
            self.checker.send(
                script.match_ended(
                    self.id,
                    seat,
                    pb.MATCH_STATUS_FINISHED,
                    state=self.state,
                    names=self.names,
                    seed=self.seed,
                )
            )
        self.ended = True

    def abort(self, reason: str) -> None:
        """End the match as failed, withdrawing its open requests."""
        for sent in self.requests:
            if sent.status == "open":
                sent.status = "withdrawn"
                sent.ended_by_match = True
        for seat in self.bot_seats:
            self.checker.send(
                script.match_ended(self.id, seat, pb.MATCH_STATUS_FAILED, reason=reason)
            )
        self.ended = True


# --------------------------------------------------------------------------------------------
# The checker


class Checker:
    """Runs every check against one bot command."""

    def __init__(
        self, argv: Sequence[str], games: Sequence[str], timeout_s: float, log_dir: Path
    ) -> None:
        self.games = list(games)
        self.move_ms = max(1, round(timeout_s * 1000))
        self.token = "bisca_check_" + secrets.token_urlsafe(12)
        self.arena = ScriptedArena()
        self.log_dir = log_dir
        self.argv = list(argv)
        self.process: BotProcess | None = None
        self.link: Link | None = None
        self.bot_name = "bot"
        self.requests: dict[str, Sent] = {}
        self.matches: list[ScriptedMatch] = []
        self.unreachable = ""
        self.current_check = ""
        #: The last messages sent, named in the report when the bot drops its stream.
        self.recent: deque[str] = deque(maxlen=3)
        self._request_numbers = 0

    # ---- ids, sending, matches ------------------------------------------------------------

    def new_request_id(self) -> str:
        self._request_numbers += 1
        return f"r{self._request_numbers}-{secrets.token_hex(2)}"

    def send(self, message: pb.ServerMessage) -> None:
        if self.link is not None and self.link.open:
            self.link.send(message)
            self.recent.append(message_summary(message))

    def error(self, code: pb.ErrorCode, message: str, *, fatal: bool = False, **where: str) -> None:
        self.send(
            pb.ServerMessage(error=pb.Error(code=code, message=message, fatal=fatal, **where))
        )

    def new_match(
        self,
        game: str,
        settings: Settings,
        state: script.State,
        seed: int,
        bot_seats: Sequence[int],
        move_ms: int | None = None,
    ) -> ScriptedMatch:
        match = ScriptedMatch(self, game, settings, state, seed, bot_seats, move_ms or self.move_ms)
        self.matches.append(match)
        return match

    def situation_match(self, game: str, label: str, move_ms: int | None = None) -> ScriptedMatch:
        """A match in the situation ``label``, the bot in the seat to act, started and brought
        up to date with its history."""
        found = script.situation(game, label)
        state = found.state()
        assert state.to_act is not None
        match = self.new_match(game, found.settings, state, found.seed, [state.to_act], move_ms)
        match.start()
        match.history()
        return match

    @property
    def _process(self) -> BotProcess:
        assert self.process is not None, "the bot was never started"
        return self.process

    # ---- the run --------------------------------------------------------------------------

    async def run(self, emit: Callable[[str], None]) -> Report:
        """Run every check, emitting each report line as soon as it is known."""
        address = await self.arena.start()
        env = {**os.environ, "BISCA_ADDRESS": address, "BISCA_TOKEN": self.token}
        self.process = BotProcess(self.argv, env, self.log_dir / "bot")
        report = Report(self.process.command, self.games, self.process.stderr_path)
        emit(f"bisca check-bot: {report.command}")
        emit(
            f"games {', '.join(self.games)}; {self.move_ms} ms per answer; "
            f"bot stderr in {self.process.stderr_path}"
        )
        try:
            self.process.start()  # BotStartError: the command cannot be run (the caller says so)
            checks: list[tuple[str, Callable[[], Awaitable[str]], bool]] = [
                ("hello", self.check_hello, False)
            ]
            for game in self.games:
                checks.extend(self.checks_of(game))
            for name, check, needs_link in checks:
                result = await self.run_check(name, check, needs_link)
                report.results.append(result)
                for line in result.lines():
                    emit(line)
            if not self._process.running:
                report.process_end = f"{self._process.describe_exit()} before the checks ended"
            else:
                if self.link is not None:
                    self.link.close()
                report.process_end = await stop_process(self._process, EXIT_GRACE_S)
        finally:
            self._process.kill()
            await self.arena.stop()
        emit(f"bot process: {report.process_end}")
        emit(report.summary())
        return report

    def checks_of(self, game: str) -> list[tuple[str, Callable[[], Awaitable[str]], bool]]:
        def bind(
            function: Callable[[*Args], Awaitable[str]], *args: *Args
        ) -> Callable[[], Awaitable[str]]:
            return lambda: function(*args)

        checks = [(f"{game}: full match", bind(self.check_full_match, game), True)]
        for label in script.PHASES[game]:
            checks.append((f"{game}: phase {label}", bind(self.check_phase, game, label), True))
        checks += [
            (f"{game}: rejected action corrected", bind(self.check_rejection, game), True),
            (f"{game}: short clock", bind(self.check_short_clock, game), True),
            (f"{game}: events between requests", bind(self.check_events, game), True),
            (f"{game}: two matches at once", bind(self.check_two_matches, game), True),
            (f"{game}: match that ends early", bind(self.check_ends_early, game), True),
            (f"{game}: reconnect", bind(self.check_reconnect, game), True),
        ]
        return checks

    async def run_check(
        self, name: str, check: Callable[[], Awaitable[str]], needs_link: bool
    ) -> CheckResult:
        note = ""
        self.current_check = name
        try:
            if needs_link:
                note = await self.ensure_link()
            text = await check()
            if self.link is not None and self.link.open:
                await self.quiet(END_QUIET_S)  # a second answer, sent at once, fails here
            result = CheckResult(name, True, text + (f" ({note})" if note else ""))
        except CheckFailed as failure:
            details = [*failure.details, *([note] if note else [])]
            result = CheckResult(name, False, failure.reason, details)
        finally:
            for match in self.matches:
                if not match.ended:
                    match.abort("bisca check-bot: this check is over")
            self.matches = []
        return result

    # ---- connections ----------------------------------------------------------------------

    async def await_link(self, seconds: float, after: str) -> Link:
        """The next stream the bot opens within ``seconds``; fails when the process exits or
        the time is up (``after`` says since when, for the report)."""
        process = self._process
        deadline = time.monotonic() + seconds
        while True:
            with contextlib.suppress(asyncio.QueueEmpty):
                link = self.arena.links.get_nowait()
                if link.open:
                    return link
                continue
            if not process.running:
                raise CheckFailed(
                    f"the bot process {process.describe_exit()} without connecting {after}",
                    *self.stderr_lines(),
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CheckFailed(f"the bot did not connect within {seconds:g} s {after}")
            with contextlib.suppress(TimeoutError):
                link = await asyncio.wait_for(self.arena.links.get(), min(remaining, 0.05))
                if link.open:
                    return link

    async def handshake(self, link: Link, seconds: float) -> pb.Hello:
        """Read the Hello that must open ``link`` within ``seconds`` and answer Welcome, or
        fail (with the error the referee would send, and the stream closed, when the referee
        would refuse it)."""
        item = await next_item(link, time.monotonic() + seconds)
        if item is None:
            link.close()
            raise CheckFailed(f"the bot opened a stream but sent no Hello within {seconds:.1f} s")
        if isinstance(item, Ended):
            raise CheckFailed(f"the stream ended before a Hello: {item.reason}")

        def refuse(code: pb.ErrorCode, reason: str, *details: str) -> NoReturn:
            link.send(pb.ServerMessage(error=pb.Error(code=code, message=reason, fatal=True)))
            link.close()
            raise CheckFailed(reason, *details)

        message = item.message
        if isinstance(message, Malformed | TooLarge):
            refuse(
                pb.ERROR_CODE_HELLO_REQUIRED,
                "the first message is not a Hello: " + inbound_text(message),
            )
        if message.WhichOneof("kind") != "hello":
            refuse(
                pb.ERROR_CODE_HELLO_REQUIRED,
                "the first message is not a Hello",
                "got: " + script.one_line(message),
            )
        hello: pb.Hello = message.hello
        got = "got: Hello " + script.one_line(hello_without_token(hello))
        if hello.protocol_version != PROTOCOL_VERSION:
            refuse(
                pb.ERROR_CODE_UNSUPPORTED_PROTOCOL,
                f"the Hello says protocol_version {hello.protocol_version}; the arena speaks "
                f"{PROTOCOL_VERSION} (PROTOCOL_VERSION_CURRENT)",
                got,
            )
        if hello.token != self.token:
            refuse(
                pb.ERROR_CODE_UNKNOWN_TOKEN,
                "the Hello's token is not the one in BISCA_TOKEN",
                got,
            )
        for number in hello.games:
            try:
                wire.game_name(number)
            except ValueError:
                refuse(
                    pb.ERROR_CODE_UNSUPPORTED_GAME,
                    f"the Hello names game {number}, which is not a game of the arena",
                    got,
                )
        self.bot_name = hello.bot_name or "bot"
        link.send(
            pb.ServerMessage(
                welcome=pb.Welcome(
                    protocol_version=PROTOCOL_VERSION,
                    bot_name=self.bot_name,
                    server_version=SERVER_VERSION,
                    connection_id=f"check-{link.number}",
                )
            )
        )
        return hello

    async def ensure_link(self) -> str:
        """A live, welcomed connection for the next check: the current one, or the bot back
        after it dropped or exited; returns a note when the command had to be started again."""
        if self.link is not None and self.link.open:
            return ""
        if self.unreachable:
            raise CheckFailed(f"not run: {self.unreachable}")
        self.link = None
        process = self._process
        note = ""
        if process.running:
            seconds, after = RECONNECT_TIMEOUT_S, "after its stream ended"
        else:
            if process.starts >= MAX_STARTS:
                self.unreachable = (
                    f"the bot was started {process.starts} times; its process "
                    f"{process.describe_exit()} the last time"
                )
                raise CheckFailed(f"not run: {self.unreachable}")
            note = f"the bot process {process.describe_exit()} and was started again"
            try:
                process.start()
            except BotStartError as problem:
                self.unreachable = f"the command could not be started again: {problem}"
                raise CheckFailed(f"not run: {self.unreachable}") from None
            seconds, after = CONNECT_TIMEOUT_S, "after it was started again"
        try:
            link = await self.await_link(seconds, after)
        except CheckFailed as failure:
            if process.running:
                self.unreachable = "the bot stopped connecting"
            raise CheckFailed(f"not run: {failure.reason}", *failure.details) from None
        await self.handshake(link, CONNECT_TIMEOUT_S)
        self.link = link
        return note

    def stderr_lines(self) -> list[str]:
        tail = self._process.stderr_tail(5)
        if not tail:
            return [f"(nothing on stderr: {self._process.stderr_path})"]
        return [f"stderr ({self._process.stderr_path}), last lines:", *(f"  {t}" for t in tail)]

    # ---- reading the bot ------------------------------------------------------------------

    async def lost(self, ended: Ended) -> NoReturn:
        self.link = None
        process = self._process
        sent = "last messages sent to the bot: " + "; ".join(self.recent)
        if await wait_exit(process, 0.5) is None:
            raise CheckFailed(
                f"the stream ended ({ended.reason}); the bot process is still running", sent
            )
        raise CheckFailed(
            f"the stream ended ({ended.reason}): the bot process {process.describe_exit()}",
            sent,
            *self.stderr_lines(),
        )

    async def judge(self, item: LinkItem) -> Answer | None:
        """What one item from the bot means: an answer to an open request (checked), a late
        answer the referee would tolerate (``None``), or a failure."""
        if isinstance(item, Ended):
            await self.lost(item)
        message = item.message
        if isinstance(message, Malformed | TooLarge):
            code = (
                pb.ERROR_CODE_MESSAGE_TOO_LARGE
                if isinstance(message, TooLarge)
                else pb.ERROR_CODE_MALFORMED_MESSAGE
            )
            self.error(code, inbound_text(message) + "; they were ignored")
            raise CheckFailed("the bot sent " + inbound_text(message), *self.open_lines())
        kind = message.WhichOneof("kind")
        if kind == "hello":
            self.error(pb.ERROR_CODE_DUPLICATE_HELLO, "this stream already said hello")
            raise CheckFailed(
                "the bot sent a second Hello on a stream that was already welcomed",
                *self.open_lines(),
            )
        if kind is None:
            self.error(pb.ERROR_CODE_MALFORMED_MESSAGE, "an empty BotMessage (no hello, no action)")
            raise CheckFailed(
                "the bot sent an empty BotMessage (no hello, no action)", *self.open_lines()
            )
        reply = message.action
        got = f"got: ActionReply {reply.request_id!r} {script.action_text(reply.action)}"
        sent = self.requests.get(reply.request_id)
        if sent is None or sent.status != "open":
            self.error(
                pb.ERROR_CODE_UNKNOWN_REQUEST,
                f"no open action request {reply.request_id!r}; the reply was discarded",
                request_id=reply.request_id,
            )
        if sent is None:
            raise CheckFailed(
                f"a reply with request id {reply.request_id!r}, which no request had",
                got,
                *self.open_lines(),
            )
        if sent.status == "withdrawn":
            return None
        if sent.status == "answered" or item.at < sent.sent_at:
            # (An answer that arrived before the request was re-sent answers an earlier
            # attempt, already answered.)
            owner = "" if sent.check == self.current_check else f" (of the check {sent.check!r})"
            raise CheckFailed(
                f"a second answer to request {sent.request_id}{owner}, which was already answered",
                sent.describe(),
                f"first answer: {sent.answered_with}",
                got,
            )
        elapsed_ms = (item.at - sent.sent_at) * 1000
        got += f" after {elapsed_ms:.0f} ms"
        try:
            action = wire.decode_game_action(sent.match.game, reply.action)
        except MalformedActionError as problem:
            self.refuse(sent, pb.REJECT_CODE_MALFORMED_ACTION, str(problem))
            raise CheckFailed(
                f"the answer to {sent.request_id} is not a {sent.match.game} action: {problem}",
                sent.describe(),
                got,
            ) from None
        if action not in sent.legal:
            why = sent.match.state.why_illegal(action) or "not in the request's legal actions"
            self.refuse(sent, pb.REJECT_CODE_ILLEGAL_ACTION, why)
            raise CheckFailed(
                f"the answer to {sent.request_id} is not one of its legal actions ({why})",
                sent.describe(),
                got,
            )
        if sent.rejected is not None and action == sent.rejected:
            self.refuse(sent, pb.REJECT_CODE_ILLEGAL_ACTION, "this action was just rejected")
            raise CheckFailed(
                f"attempt {sent.attempt} of {sent.request_id} repeats the action just rejected",
                sent.describe(),
                got,
            )
        if item.at > sent.deadline:
            sent.status = "withdrawn"
            raise CheckFailed(
                f"the answer to {sent.request_id} came after {elapsed_ms:.0f} ms; its clock "
                f"gave {sent.move_ms} ms",
                sent.describe(),
                got,
            )
        sent.status = "answered"
        sent.answered_with = got.removeprefix("got: ")
        return Answer(sent, action, reply.action, elapsed_ms)

    def refuse(self, sent: Sent, code: pb.RejectCode, why: str) -> None:
        """Reject an answer as the referee would, with no attempts left: the check is over."""
        sent.status = "withdrawn"
        self.send(
            pb.ServerMessage(
                action_rejected=pb.ActionRejected(
                    request_id=sent.request_id,
                    match_id=sent.match.id,
                    seat=sent.seat,
                    code=code,
                    message=why,
                    attempts_left=0,
                )
            )
        )

    def open_lines(self) -> list[str]:
        """The requests of the running check not answered yet, for a failure's details."""
        return [
            sent.describe()
            for match in self.matches
            for sent in match.requests
            if sent.status != "answered"
        ]

    async def collect(self, requests: Sequence[Sent]) -> list[Answer]:
        """Wait for an answer to each of ``requests`` (in any order), each within its clock."""
        answers: dict[str, Answer] = {}
        assert self.link is not None
        while len(answers) < len(requests):
            waiting = [sent for sent in requests if sent.request_id not in answers]
            first = min(waiting, key=lambda sent: sent.deadline)
            item = await next_item(self.link, first.deadline)
            if item is None:
                first.status = "withdrawn"
                raise CheckFailed(
                    f"no answer to request {first.request_id} within {first.move_ms} ms",
                    first.describe(),
                    *(
                        f"answered: {sent.request_id} with {answer.text}"
                        for sent in requests
                        if (answer := answers.get(sent.request_id)) is not None
                    ),
                )
            answer = await self.judge(item)
            if answer is not None:
                answers[answer.sent.request_id] = answer
        return [answers[sent.request_id] for sent in requests]

    async def answer(self, sent: Sent) -> Answer:
        (answer,) = await self.collect([sent])
        return answer

    async def quiet(self, seconds: float) -> int:
        """Listen for ``seconds`` with no request open: anything but a tolerated late answer
        fails; returns how many late answers came."""
        assert self.link is not None
        deadline = time.monotonic() + seconds
        late = 0
        while (item := await next_item(self.link, deadline)) is not None:
            await self.judge(item)
            late += 1
        return late

    # ---- the checks -----------------------------------------------------------------------

    async def check_hello(self) -> str:
        """The command connects, says a valid Hello with the token, and is welcomed."""
        try:
            link = await self.await_link(CONNECT_TIMEOUT_S, "to BISCA_ADDRESS after it started")
        except CheckFailed:
            if self._process.running:
                self.unreachable = "the bot never connected"
            raise
        hello = await self.handshake(link, CONNECT_TIMEOUT_S)
        self.link = link
        named = [wire.game_name(number) for number in hello.games]
        text = (
            f"Hello from {hello.bot_name!r} version {hello.bot_version!r}, protocol "
            f"{hello.protocol_version}, games {', '.join(named) or 'none'}; answered Welcome"
        )
        if not named:
            return text + " (the Hello lists no games: the arena cannot tell what it plays)"
        missing = [game for game in self.games if game not in named]
        if missing:
            raise CheckFailed(
                f"the Hello does not list {', '.join(missing)}, which is checked "
                "(list every game the bot plays, or check only those with --game)",
                "got: Hello " + script.one_line(hello_without_token(hello)),
            )
        return text

    async def check_full_match(self, game: str) -> str:
        """A whole short match with the bot in every seat, on this one connection (the
        referee seats a bot's seats on its connections, so one stream may hold them all)."""
        settings, state = script.full_match_state(game)
        match = self.new_match(
            game, settings, state, script.FULL_MATCH_SEED, range(state.num_seats)
        )
        match.start()
        answered = 0
        slowest = 0.0
        while not state.is_over:
            match.events()
            sent = match.request()
            try:
                answer = await self.answer(sent)
            except CheckFailed as failure:
                failure.reason = f"at request {answered + 1} of the match: {failure.reason}"
                raise
            match.apply(answer)
            answered += 1
            slowest = max(slowest, answer.elapsed_ms)
        match.finish()
        outcome = state.outcome
        assert outcome is not None
        return (
            f"{state.num_seats} seats, {describe_settings(game, settings)}: {answered} requests "
            f"answered (slowest {slowest:.0f} ms), MatchEnded FINISHED, scores "
            f"{list(outcome.scores)}"
        )

    async def check_phase(self, game: str, label: str) -> str:
        """One request in the phase ``label``, from a match joined mid-way: each phase has
        its own kinds of action (and observation fields), and a bot that only ever saw card
        play would meet a Bestia controbuio call for the first time in a league."""
        match = self.situation_match(game, label)
        sent = match.request()
        answer = await self.answer(sent)
        return (
            f"request {sent.request_id} (seat {sent.seat}, {len(sent.legal)} legal) answered in "
            f"{answer.elapsed_ms:.0f} ms with {answer.text}"
        )

    async def check_rejection(self, game: str) -> str:
        """The first answer is refused (``ActionRejected``, then the request again with
        attempt 2, as the referee does); the bot must answer again, legally and differently,
        and only once."""
        match = self.situation_match(game, "a choice of cards")
        sent = match.request()
        first = await self.answer(sent)
        await self.quiet(END_QUIET_S)
        sent.rejected = first.action
        self.send(
            pb.ServerMessage(
                action_rejected=pb.ActionRejected(
                    request_id=sent.request_id,
                    match_id=match.id,
                    seat=sent.seat,
                    code=pb.REJECT_CODE_ILLEGAL_ACTION,
                    message=_REJECTED_ON_PURPOSE,
                    attempts_left=2,
                )
            )
        )
        match.send_request(sent, attempt=2)
        try:
            second = await self.answer(sent)
        except CheckFailed as failure:
            failure.details.append(f"rejected on purpose: {first.text}")
            raise
        await self.quiet(SETTLE_S)
        return (
            f"{first.text} was rejected on purpose; request {sent.request_id} attempt 2 was "
            f"answered in {second.elapsed_ms:.0f} ms with {second.text}"
        )

    async def check_short_clock(self, game: str) -> str:
        """A request whose clock (in ``MatchStarted`` and in the request) is 300 ms, with no
        bank: a bot must read the clock rather than assume its usual thinking time."""
        move_ms = min(SHORT_CLOCK_MS, self.move_ms)
        match = self.situation_match(game, "short clock", move_ms)
        sent = match.request()
        answer = await self.answer(sent)
        return (
            f"request {sent.request_id} with a {move_ms} ms clock answered in "
            f"{answer.elapsed_ms:.0f} ms"
        )

    async def check_events(self, game: str) -> str:
        """Requests with event batches (one event each) before and between them, the bot in
        a seat that acts third: a bot must take events as news, not as questions."""
        settings = GAMES[game].settings(script.SITUATION_SETTINGS[game])
        state = GAMES[game].new_match(settings, EVENTS_SEED)
        seat = ((state.to_act or 0) + 2) % state.num_seats  # two others act before it
        match = self.new_match(game, settings, state, EVENTS_SEED, [seat])
        match.start()
        rng = random.Random(EVENTS_SEED)
        answered = batches = 0
        while answered < EVENT_CHECK_ANSWERS:
            batches += match.play_scripted(rng, split=True)
            if state.is_over:
                break
            answer = await self.answer(match.request())
            match.apply(answer)
            answered += 1
        return f"{answered} requests answered after {batches} event batches (one event each)"

    async def check_two_matches(self, game: str) -> str:
        """Two matches on the connection, a request of each open at the same time."""
        first = self.situation_match(game, "first match")
        second = self.situation_match(game, "second match")
        rng = random.Random(7)
        answered = 0
        for _ in range(TWO_MATCH_ROUNDS):
            if first.state.is_over or second.state.is_over:
                break
            requests = [first.request(), second.request()]
            for answer in await self.collect(requests):
                answer.sent.match.apply(answer)
                answered += 1
            first.play_scripted(rng)
            second.play_scripted(rng)
        return (
            f"matches {first.id} and {second.id}: {answered} requests sent two at a time (one "
            "per match), each answered under its own id"
        )

    async def check_ends_early(self, game: str) -> str:
        """``MatchEnded`` FAILED while a request is open; the bot must survive it and play the
        next match."""
        match = self.situation_match(game, "first match")
        sent = match.request()
        match.abort("the referee aborted the match (bisca check-bot: a match that ends early)")
        late = await self.quiet(SETTLE_S)
        following = self.situation_match(game, "second match")
        answer = await self.answer(following.request())
        left = "answered it anyway, tolerated" if late else "left it"
        return (
            f"match {match.id} ended FAILED with request {sent.request_id} open (the bot {left}); "
            f"the next match's request was answered in {answer.elapsed_ms:.0f} ms"
        )

    async def check_reconnect(self, game: str) -> str:
        """The stream is dropped with a request open; the bot must connect again with its
        token, get ``MatchStarted`` resumed=true and the request again, and answer it."""
        match = self.situation_match(game, "reconnect")
        sent = match.request()
        old = self.link
        assert old is not None
        old.drop("bisca check-bot dropped the stream on purpose (reconnect check)")
        self.link = None
        dropped = time.monotonic()
        link = await self.await_link(RECONNECT_TIMEOUT_S, "after the server dropped its stream")
        await self.handshake(link, max(0.0, dropped + RECONNECT_TIMEOUT_S - time.monotonic()))
        back = time.monotonic() - dropped
        self.link = link
        match.start(resumed=True)
        match.history()
        match.send_request(sent)
        answer = await self.answer(sent)
        return (
            f"Hello again with the same token {back:.2f} s after the drop; after MatchStarted "
            f"resumed=true, request {sent.request_id} was answered in {answer.elapsed_ms:.0f} ms"
        )


# --------------------------------------------------------------------------------------------
# Helpers


async def next_item(link: Link, deadline: float) -> LinkItem | None:
    """The next item from ``link``, or ``None`` once ``deadline`` (monotonic) has passed."""
    with contextlib.suppress(asyncio.QueueEmpty):
        return link.inbox.get_nowait()
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return None
    try:
        return await asyncio.wait_for(link.inbox.get(), remaining)
    except TimeoutError:
        return None


def message_summary(message: pb.ServerMessage) -> str:
    """A server message in a few words: its kind and ids."""
    kind = message.WhichOneof("kind")
    if kind is None:
        return "an empty ServerMessage"
    body: Message = getattr(message, kind)
    words = [MESSAGE_NAMES.get(kind, kind)]
    if kind == "action_request":
        words.append(message.action_request.request_id)
    elif kind == "action_rejected":
        words.append(message.action_rejected.request_id)
    where = [
        f"{name} {getattr(body, field)}"
        for field, name in (("match_id", "match"), ("seat", "seat"))
        if field in body.DESCRIPTOR.fields_by_name
    ]
    if kind == "events":
        where.append(f"{len(message.events.events)} event(s)")
    if kind == "match_ended":
        where.append(pb.MatchStatus.Name(message.match_ended.status).removeprefix("MATCH_STATUS_"))
    return " ".join(words) + (f" ({', '.join(where)})" if where else "")


MESSAGE_NAMES = {
    "welcome": "Welcome",
    "match_started": "MatchStarted",
    "events": "EventBatch",
    "action_request": "ActionRequest",
    "action_rejected": "ActionRejected",
    "match_ended": "MatchEnded",
    "error": "Error",
}


def inbound_text(message: Malformed | TooLarge) -> str:
    if isinstance(message, TooLarge):
        return f"a message of {message.size} bytes, over the {MAX_BOT_MESSAGE_BYTES}-byte limit"
    return f"{message.size} bytes that are not a bisca.v1.BotMessage ({message.reason})"


def hello_without_token(hello: pb.Hello) -> pb.Hello:
    shown = pb.Hello()
    shown.CopyFrom(hello)
    if shown.token:
        shown.token = "…"
    return shown


def describe_settings(game: str, settings: Settings) -> str:
    """The settings the full match sets, as ``name=value`` words."""
    return ", ".join(
        f"{name}={getattr(settings, name)}" for name in script.FULL_MATCH_SETTINGS[game]
    )


# --------------------------------------------------------------------------------------------
# The command


async def check_bot(
    argv: Sequence[str],
    games: Sequence[str] = CHECKED_GAMES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    log_dir: Path | None = None,
    emit: Callable[[str], None] = print,
) -> Report:
    """Check the bot command ``argv``; emits the report's lines and returns it.  Raises
    ``OSError`` when the command cannot be started at all."""
    directory = log_dir or Path(tempfile.mkdtemp(prefix="bisca-check-bot-"))
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    return await Checker(argv, games, timeout_s, directory).run(emit)


# --------------------------------------------------------------------------------------------
# Waiting for the bot's process on asyncio (the harness runs on grpc.aio's loop)


async def wait_exit(process: BotProcess, seconds: float) -> int | None:
    """Wait up to ``seconds`` for the process to end; its exit code, or ``None``."""
    deadline = time.monotonic() + seconds
    while process.running and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return process.exit_code


async def stop_process(process: BotProcess, grace: float) -> str:
    """Let the process exit on its own for ``grace`` seconds, then terminate it, then kill
    it; says how it ended."""
    if process.popen is None:
        return "never started"
    if await wait_exit(process, grace) is not None:
        return f"{process.describe_exit()} after the server closed its stream"
    process.terminate()
    if await wait_exit(process, 1.0) is None:
        process.kill()
        await wait_exit(process, 1.0)
    return f"still running {grace:g} s after the server closed the stream; stopped"
