"""One match between bots: waiting for them, asking for actions under the clock, results.

The runner owns the engine state of its match.  Each step it hands every seat the new events it
may see, sends the seat to act an ``ActionRequest`` (observation, legal actions, clock) and waits
for a legal answer inside a cancel scope sized by the seat's clock (``_decide``).  A seat whose
connection asked for live events is sent them at once (an ``EventBatch``); any other seat's
events wait in ``Seat.unsent`` and travel inside its next request or its ``MatchEnded``, so a
decision costs one message out.  Every message is built from parts serialized once
(``_outgoing.py``): the bytes of a request's observation and legal actions are those of its log
step, and an event's bytes serve every seat, the log and the spectators.  Illegal or
malformed answers are rejected and may be corrected within the same clock; three rejections, or
no answer in time, apply the match's timeout policy.  A bot that disconnects keeps its seat: if
it connects again with the same token it is sent the match again, its whole event history (at
once, or inside its next message) and the open request, and the clock never stops for it.

The runner's collaborators each keep one concern: the :class:`MatchJournal` its log, the
:class:`Audience` its spectators, the :class:`SeatClock` of each seat its time, and the
:class:`MatchHost` (the referee) the connections and the routing of replies.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import trio

from bisca import wire
from bisca.engine import ENGINE_VERSION, GAMES, Action, MatchState, Outcome, Settings
from bisca.server import metrics
from bisca.server.datadir import log_file
from bisca.server.errors import MatchFailed
from bisca.server.logs import FORMAT_VERSION, Audience, Push, ServerKey, Watcher
from bisca.server.records import MatchStatus, SeatEnd, SeatRecord, places, rank_with_forfeits
from bisca.server.store import Store
from bisca.server.text import printable
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

from . import _messages as messages
from . import _outgoing as outgoing
from ._clock import ClockSettings, SeatClock
from ._connection import Connection
from ._journal import MatchJournal
from ._judge import MAX_REJECTIONS, Asked, RejectedReply, verify_action
from ._messages import clock_message
from ._sealing import Deal, SealedDeals

#: The logger of every match (started, lost seats, forfeits, failures).
#: Seconds a match's end may wait for the store to say whether its deal is shared.
SEALING_CHECK_S = 5.0

MATCH_LOGGER = "bisca.server.match"
log = logging.getLogger(MATCH_LOGGER)
#: Exactly one line when a match starts and one when it ends (finished or failed): what a
#: standing server prints about the matches it plays (``bisca serve`` shows it by default).
#: A child of :data:`MATCH_LOGGER`, so quieting that quiets these too.
MATCH_LINES_LOGGER = MATCH_LOGGER + ".lines"
match_lines = logging.getLogger(MATCH_LINES_LOGGER)

_STATUS_NUMBERS = {
    MatchStatus.WAITING: pb.MATCH_STATUS_WAITING,
    MatchStatus.RUNNING: pb.MATCH_STATUS_RUNNING,
    MatchStatus.FINISHED: pb.MATCH_STATUS_FINISHED,
    MatchStatus.FAILED: pb.MATCH_STATUS_FAILED,
}


@dataclass(frozen=True)
class MatchPlan:
    """What a match is to be: its game and settings, its bots in seat order, and how it is
    played.  ``None`` takes the referee's default (a fresh random seed, the server's clock and
    join timeout, an id of the referee's making)."""

    game: str
    settings: Settings
    bots: tuple[str, ...]
    seed: int | None = None
    clock: ClockSettings | None = None
    join_timeout: float | None = None
    match_id: str | None = None
    #: A rated match updates its game's ratings in the transaction that records its result.
    rated: bool = False


class MatchHost(Protocol):
    """What a match needs of the referee that hosts it."""

    store: Store
    signer: ServerKey | None

    def connections_of(self, bot: str) -> list[Connection]: ...

    async def wait_bots_changed(self) -> None: ...

    def new_request_id(self) -> str: ...

    def open_request(self, pending: Pending) -> None: ...

    def close_request(self, request_id: str) -> None: ...

    def forget_match(self, match_id: str) -> None: ...

    async def sealed_deals(self, *, besides: str | None = None) -> SealedDeals: ...


@dataclass
class Seat:
    number: int
    bot: str
    clock: SeatClock
    connection: Connection | None = None
    bot_version: str = ""
    request: OpenRequest | None = None
    request_started: float | None = None
    #: Where the answers to the open request arrive (closed to withdraw it).
    inbox: trio.MemorySendChannel[pb.GameAction] | None = None
    #: Serialized ``GameEvent`` values this seat may see that its connection was not sent
    #: yet: its next request or its ``MatchEnded`` carries them (never with live events).
    unsent: list[bytes] = field(default_factory=list)
    #: What went wrong for the seat (its result counts them): its bot process ending during
    #: the match, and answers rejected.
    crashes: int = 0
    illegal_moves: int = 0

    def send(self, message: pb.ServerMessage) -> None:
        """Send to the seat's connection, if it has one now (a seat without one waits for its
        bot to come back; the clock runs meanwhile)."""
        if self.connection is not None:
            self.connection.send(message)

    def take_unsent(self) -> list[bytes]:
        """The events the seat's next message carries (and forget them: they are sent)."""
        events, self.unsent = self.unsent, []
        return events


@dataclass
class OpenRequest:
    """The request a seat is asked: its serialized ids and question (observation and legal
    actions, the very bytes of its log step), and the attempt."""

    head: bytes
    question: bytes
    attempt: int = 1


@dataclass
class Pending:
    """An action request waiting for its seat's answer."""

    match: MatchRunner
    seat: int
    request_id: str
    inbox: trio.MemorySendChannel[pb.GameAction]

    @property
    def asked(self) -> Asked:
        """The request as the judge sees it (``_judge.py``): the attempt it is at now."""
        state, request = self.match.state, self.match.seats[self.seat].request
        assert state is not None and request is not None, "the request is not open"
        return Asked(
            self.request_id, self.match.id, self.seat, self.match.game, state, request.attempt
        )


@dataclass
class _Answer:
    """How a request was answered: the legal action chosen (``None``: none in time), the
    rejected attempts before it."""

    action: Action | None = None
    rejections: int = 0
    rejected: list[log_pb2.RejectedAttempt] = field(default_factory=list)


class MatchRunner:
    def __init__(
        self,
        host: MatchHost,
        plan: MatchPlan,
        *,
        match_id: str,
        seed: int,
        clock: ClockSettings,
        join_timeout: float,
        match_dir: Path | None,
    ) -> None:
        self.host = host
        self.id = match_id
        self.game = plan.game
        self.settings = plan.settings
        self.seed = seed
        self.bots = list(plan.bots)
        self.clock_settings = clock
        self.join_timeout = join_timeout
        self.match_dir = match_dir
        self.seats = [Seat(n, bot, SeatClock.start(clock)) for n, bot in enumerate(self.bots)]
        self.status = MatchStatus.WAITING
        self._counted_running = False
        self.reason = ""
        self.steps = 0
        self.state: MatchState | None = None
        self.results: list[SeatRecord] = []
        self.done = trio.Event()
        self.audience = Audience(len(self.seats))
        self.encoder = outgoing.GameEncoder(plan.game)
        #: Every event so far as ``(audience, serialized GameEvent)``: a resumed seat's history.
        self.events: list[tuple[int, bytes]] = []
        self.journal = MatchJournal(
            match_id,
            None if match_dir is None else log_file(match_dir, match_id),
            host.store,
            host.signer,
        )
        # Verifiable dealing: committed to before the first card, revealed at the end.
        self.deal_salt = secrets.token_bytes(16)
        self.deal_commitment = wire.deal_commitment(self.deal_salt, seed, match_id)
        self._waiting: trio.CancelScope | None = None
        self._abort_reason: str | None = None

    @property
    def log_path(self) -> Path | None:
        return self.journal.path

    @property
    def status_number(self) -> pb.MatchStatus:
        return _STATUS_NUMBERS[self.status]

    # ---- connections ------------------------------------------------------------------------

    def why_illegal(self, seat: int, actions: Sequence[Action]) -> list[str | None]:
        """A query of the live match, for a trio task of the referee (the state it reads is
        only moved on by this runner, in trio): why ``seat`` may not play each of ``actions``
        now, ``None`` for a legal one.  Empty when the seat is not to act (the match not
        started, over, or another seat's turn): nothing is illegal then, nothing is asked."""
        state = self.state
        if state is None or state.is_over or state.to_act != seat:
            return []
        return [state.why_illegal(action) for action in actions]

    def connection_of(self, seat: int) -> Connection | None:
        return self.seats[seat].connection

    def connection_lost(self, connection: Connection) -> None:
        """A connection closed: its seats go to another live connection of their bot if it has
        one (a reconnect seen before the old stream closed, or a bot with several
        connections); otherwise they wait for the bot to connect again."""
        lost = False
        for seat in self.seats:
            if seat.connection is connection:
                seat.connection = None
                lost = True
                if self.status is MatchStatus.RUNNING:
                    log.info("%s: seat %d (%s) lost its connection", self.id, seat.number, seat.bot)
        if lost and connection.bot is not None:
            for other in self.host.connections_of(connection.bot)[:1]:
                self.connection_gained(other)

    def connection_gained(self, connection: Connection) -> None:
        """A bot (re)connected: give it back its seats that have no live connection."""
        if self.status is not MatchStatus.RUNNING:
            return
        if self.game not in connection.games:
            return
        for seat in self.seats:
            if seat.bot == connection.bot and (
                seat.connection is None or not seat.connection.alive
            ):
                seat.connection = connection
                seat.bot_version = connection.bot_version or seat.bot_version
                log.info("%s: seat %d (%s) resumed", self.id, seat.number, seat.bot)
                self._send_start(seat, resumed=True)
                self._send_history(seat)
                if seat.request is not None:
                    self._send_request(seat)

    def _bind_seats(self) -> bool:
        """Give each seat a live connection of its bot, spreading a bot's seats over its
        connections; ``False`` while some bot has none.  Only a connection whose Hello lists
        this match's game is seated: a bot connected for other games only fails the match."""
        by_bot: dict[str, list[Connection]] = {}
        for bot in sorted(set(self.bots)):
            connections = self.host.connections_of(bot)
            if not connections:
                return False
            playing = [c for c in connections if self.game in c.games]
            if not playing:
                listed = sorted({game for c in connections for game in c.games})
                raise MatchFailed(
                    f"bot {bot} does not play {self.game}: its Hello lists "
                    f"{', '.join(listed) or 'no game'}"
                )
            by_bot[bot] = playing
        used: dict[str, int] = {}
        for seat in self.seats:
            index = used.get(seat.bot, 0)
            connections = by_bot[seat.bot]
            seat.connection = connections[index % len(connections)]
            seat.bot_version = seat.connection.bot_version
            used[seat.bot] = index + 1
        return True

    # ---- the match --------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            await self._wait_for_bots()
            await self._play()
        except MatchFailed as failure:
            await self._fail(str(failure))
        except Exception as error:  # a bug must not take the server down with it
            log.exception("%s: match aborted", self.id)
            await self._fail(f"internal error: {error!r}")
        finally:
            if self._counted_running:
                metrics.MATCHES_RUNNING.labels(self.game).dec()
            self.done.set()
            self.host.forget_match(self.id)

    def forfeit_seat(self, number: int, reason: str, *, crashed: bool = False) -> None:
        """The seat's bot cannot play on (its process ended, a limit killed it: ``crashed``,
        which the seat's result counts): the seat is forfeited now, with ``reason``, and a
        default player finishes it."""
        seat = self.seats[number]
        if self.status.is_over:
            return
        if crashed:
            seat.crashes += 1
        if seat.clock.forfeited:
            return
        seat.clock.forfeit(reason)
        metrics.FORFEITS.labels(metrics.ForfeitCause.BOT_GONE).inc()
        log.info("%s: seat %d (%s) forfeits: %s", self.id, number, seat.bot, reason)
        if seat.inbox is not None:
            seat.inbox.close()  # the open request ends at once instead of on the clock

    def forfeit_bot(self, bot: str, reason: str, *, crashed: bool = False) -> None:
        """:meth:`forfeit_seat` for every seat of ``bot``."""
        for seat in self.seats:
            if seat.bot == bot:
                self.forfeit_seat(seat.number, reason, crashed=crashed)

    def abort_waiting(self, reason: str) -> None:
        """Fail the match now if it still waits for its bots (one of them cannot come: its
        process ended before connecting, ...); once it runs, the clocks decide."""
        if self.status is MatchStatus.WAITING and self._abort_reason is None:
            self._abort_reason = reason
            if self._waiting is not None:
                self._waiting.cancel()

    async def _wait_for_bots(self) -> None:
        with trio.move_on_after(self.join_timeout) as self._waiting:
            while self._abort_reason is None and not self._bind_seats():
                await self.host.wait_bots_changed()
        if self._abort_reason is not None:
            raise MatchFailed(self._abort_reason)
        if not self._waiting.cancelled_caught:
            return
        missing = sorted({bot for bot in self.bots if not self.host.connections_of(bot)})
        raise MatchFailed(f"bots not connected after {self.join_timeout:g} s: {', '.join(missing)}")

    async def _play(self) -> None:
        self.status = MatchStatus.RUNNING
        metrics.MATCHES_RUNNING.labels(self.game).inc()
        self._counted_running = True
        await trio.to_thread.run_sync(self.host.store.matches.mark_running, self.id)
        self.state = state = GAMES[self.game].new_match(self.settings, self.seed)
        match_lines.info("%s: %s started, seats %s", self.id, self.game, ", ".join(self.bots))
        self.journal.open(self._header())
        for seat in self.seats:
            self._send_start(seat, resumed=False)
        while not state.is_over:
            self._hand_out_events()
            to_act = state.to_act
            assert to_act is not None
            action, step, question = await self._decide(state, self.seats[to_act])
            state.apply(action)
            step.step = self.steps
            self.journal.write_entry(outgoing.log_step(step, question, self.encoder.action(action)))
            self.steps += 1
            metrics.DECISIONS.labels(self.game, metrics.DecisionSource.of(step.substituted)).inc()
        self._hand_out_events()
        await self._finish(state.outcome)

    # ---- one decision -----------------------------------------------------------------------

    async def _decide(self, state: MatchState, seat: Seat) -> tuple[Action, log_pb2.LogStep, bytes]:
        """The seat's action for this step, the log's account of how it was decided (without
        the question and the action) and the question's bytes."""
        question = self.encoder.question(state.observation(seat.number), state.legal_actions())
        step = log_pb2.LogStep(seat=seat.number, requested_at_us=_now_us())
        if seat.clock.forfeited:
            reason = "forfeited seat: the default player acts"
            return *self._substitute(state, seat, step, reason), question
        step.request_id = self.host.new_request_id()
        started = trio.current_time()
        answer = await self._ask(seat, step.request_id, question)
        used = trio.current_time() - started
        metrics.DECISION_SECONDS.labels(self.game).observe(used)
        seat.clock.charge(used)
        step.rejected.extend(answer.rejected)
        step.used_us = int(used * 1_000_000)
        step.bank_left_us = int(seat.clock.bank_ms * 1000)
        if answer.action is not None:
            step.answered_at_us = _now_us()
            return answer.action, step, question
        if seat.clock.forfeited:  # forfeited while it was asked (its bot is gone)
            reason = f"forfeited seat: {seat.clock.forfeit_reason}"
            return *self._substitute(state, seat, step, reason), question
        return *self._substitute(state, seat, step, self._time_out(seat, answer)), question

    async def _ask(self, seat: Seat, request_id: str, question: bytes) -> _Answer:
        """Send the request and judge the answers until a legal one, the clock or the last
        rejection ends it; the request is open (routable) exactly while this runs."""
        inbox, replies = trio.open_memory_channel[pb.GameAction](MAX_REJECTIONS * 4)
        seat.request = request = OpenRequest(
            outgoing.request_head(request_id, self.id, seat.number), question
        )
        pending = Pending(self, seat.number, request_id, inbox)
        self.host.open_request(pending)
        seat.inbox = inbox
        seat.request_started = trio.current_time()
        answer = _Answer()
        try:
            self._send_request(seat)
            with trio.move_on_at(seat.request_started + seat.clock.budget_seconds()):
                async for reply in replies:
                    try:
                        answer.action = verify_action(pending.asked, reply)
                        break
                    except RejectedReply as rejected:
                        metrics.REJECTIONS.labels(pb.RejectCode.Name(rejected.code)).inc()
                        answer.rejections += 1
                        seat.illegal_moves += 1
                        answer.rejected.append(
                            log_pb2.RejectedAttempt(
                                action=reply,
                                code=rejected.code,
                                message=rejected.reason,
                                at_us=_now_us(),
                            )
                        )
                        seat.send(rejected.answer)
                    if answer.rejections >= MAX_REJECTIONS:
                        break
                    request.attempt = answer.rejections + 1
                    self._send_request(seat)
        finally:
            self.host.close_request(request_id)
            seat.request = seat.request_started = seat.inbox = None
        return answer

    def _time_out(self, seat: Seat, answer: _Answer) -> str:
        """Apply the timeout policy to a seat that gave no legal answer; returns why the
        default action is played."""
        clock = seat.clock
        if answer.rejections >= MAX_REJECTIONS:
            reason = f"{MAX_REJECTIONS} rejected actions for one request"
        else:
            reason = f"no legal action within {clock.settings.move_ms} ms + bank"
            metrics.TIMEOUTS.labels(self.game).inc()
        if not clock.time_out(reason):
            return reason
        metrics.FORFEITS.labels(metrics.forfeit_cause(answer.rejections >= MAX_REJECTIONS)).inc()
        log.info("%s: seat %d (%s) forfeits: %s", self.id, seat.number, seat.bot, reason)
        if seat.connection is not None:
            seat.connection.error(
                pb.ERROR_CODE_FORFEITED,
                f"seat {seat.number} forfeited match {self.id}: {reason}; "
                "a default player finishes the seat",
                match_id=self.id,
            )
        return reason + "; the seat forfeits"

    @staticmethod
    def _substitute(
        state: MatchState, seat: Seat, step: log_pb2.LogStep, reason: str
    ) -> tuple[Action, log_pb2.LogStep]:
        """The referee plays the game's default action for the seat."""
        seat.clock.defaults_played += 1
        step.substituted = True
        step.substitution_reason = reason
        return state.default_action(), step

    def _send_request(self, seat: Seat) -> None:
        """Send the open request with the clock as it stands now (what is left of the move
        time and of the bank) and the events the seat was not sent yet."""
        request, connection = seat.request, seat.connection
        assert request is not None and seat.request_started is not None
        if connection is None:  # the seat waits for its bot to come back
            return
        clock = seat.clock
        elapsed_ms = (trio.current_time() - seat.request_started) * 1000
        move_left = max(0.0, clock.settings.move_ms - elapsed_ms)
        bank_left = clock.bank_ms - max(0.0, elapsed_ms - clock.settings.move_ms)
        connection.write(
            outgoing.action_request(
                request.head,
                request.question,
                int(move_left),
                max(0, int(bank_left)),
                request.attempt,
                seat.take_unsent(),
            )
        )

    # ---- what seats are sent ----------------------------------------------------------------

    def seat_infos(self) -> list[pb.SeatInfo]:
        return [
            pb.SeatInfo(seat=s.number, bot_name=s.bot, bot_version=s.bot_version)
            for s in self.seats
        ]

    def _send_start(self, seat: Seat, *, resumed: bool) -> None:
        seat.send(
            messages.match_started(
                self.id,
                self.game,
                self.settings,
                seat.number,
                self.seat_infos(),
                clock_message(self.clock_settings),
                resumed=resumed,
                deal_commitment=self.deal_commitment,
            )
        )

    def _hand_out_events(self) -> None:
        """The engine's new events: serialized once, logged, shown to the spectators, and
        handed to every seat that may see them (sent now with live events, else kept for the
        seat's next message)."""
        assert self.state is not None
        start = len(self.events)
        events = self.state.all_events(start)
        if not events:
            return
        encoded = [
            (start + offset, audience, self.encoder.event(start + offset, event))
            for offset, (audience, event) in enumerate(events)
        ]
        self.events.extend((audience, data) for _, audience, data in encoded)
        batch = outgoing.log_events(self.steps, encoded)
        self.journal.write_entry(outgoing.log_events_entry(batch))
        self.audience.publish(batch, self.steps, self.steps)
        for seat in self.seats:
            mask = 1 << seat.number
            visible = [data for _, audience, data in encoded if audience & mask]
            if visible:
                self._hand_to(seat, visible)

    def _hand_to(self, seat: Seat, events: list[bytes]) -> None:
        connection = seat.connection
        if connection is None:
            return  # a seat that comes back is given its whole history
        if connection.live_events:
            connection.write(outgoing.event_batch(self.id, seat.number, events))
        else:
            seat.unsent.extend(events)

    def _send_history(self, seat: Seat) -> None:
        """A resumed seat's whole event history, so it can rebuild what it missed: sent at
        once with live events, else carried by its next message."""
        seat.unsent = []
        mask = 1 << seat.number
        history = [data for audience, data in self.events if audience & mask]
        if history:
            self._hand_to(seat, history)

    # ---- spectators -------------------------------------------------------------------------

    def watch(self, omniscient: bool, delay_steps: int, push: Push) -> Watcher:
        start = pb.WatchUpdate(
            start=pb.WatchStart(
                match_id=self.id,
                game=wire.game_enum(self.game),
                settings=wire.encode_game_settings(self.game, self.settings),
                seats=self.seat_infos(),
                omniscient=omniscient,
                delay_steps=delay_steps,
                live=True,
            )
        )
        return self.audience.join(start, omniscient, delay_steps, push, self.steps)

    def unwatch(self, watcher: Watcher) -> None:
        self.audience.leave(watcher)

    # ---- the end ----------------------------------------------------------------------------

    def _ranked(self, outcome: Outcome) -> list[SeatRecord]:
        forfeited = [seat.clock.forfeited for seat in self.seats]
        ranks = rank_with_forfeits(outcome.scores, forfeited)
        return [
            SeatRecord(
                seat=seat.number,
                bot_name=seat.bot,
                bot_version=seat.bot_version,
                score=outcome.scores[seat.number],
                rank=ranks[seat.number],
                end=SeatEnd.FORFEITED if seat.clock.forfeited else SeatEnd.COMPLETED,
                forfeit_reason=seat.clock.forfeit_reason,
                timeouts=seat.clock.timeouts,
                defaults_played=seat.clock.defaults_played,
                crashes=seat.crashes,
                illegal_moves=seat.illegal_moves,
            )
            for seat in self.seats
        ]

    def _header(self) -> log_pb2.LogHeader:
        return log_pb2.LogHeader(
            format_version=FORMAT_VERSION,
            engine_version=ENGINE_VERSION,
            match_id=self.id,
            game=wire.game_enum(self.game),
            settings=wire.encode_game_settings(self.game, self.settings),
            seed=self.seed,
            seats=self.seat_infos(),
            clock=clock_message(self.clock_settings),
            started_at_us=_now_us(),
            deal_salt=self.deal_salt,
            deal_commitment=self.deal_commitment,
        )

    def _footer(self, status: MatchStatus, reason: str) -> log_pb2.LogFooter:
        return log_pb2.LogFooter(
            status=_STATUS_NUMBERS[status],
            seats=[result_message(r) for r in self.results],
            reason=reason,
            ended_at_us=_now_us(),
            steps=self.steps,
        )

    async def _finish(self, outcome: Outcome | None) -> None:
        assert outcome is not None
        self.results = self._ranked(outcome)
        # Shielded: a server that stops now must not leave a complete FINISHED log beside a
        # match the store says is running (both steps are short: a sync and one transaction).
        with trio.CancelScope(shield=True):
            await self.journal.close(self._footer(MatchStatus.FINISHED, ""))
            await trio.to_thread.run_sync(
                self.host.store.matches.finish_and_rate, self.id, self.steps, self.results
            )
        self.status = MatchStatus.FINISHED
        metrics.MATCHES_FINISHED.labels(self.game).inc()
        match_lines.info(
            "%s: finished after %d steps: %s",
            self.id,
            self.steps,
            ", ".join(
                f"{r.bot_name} {r.score} (place {place})"
                for r, place in zip(
                    self.results, places(self.results, GAMES[self.game].side_of), strict=True
                )
            ),
        )
        await self._send_end("")

    async def _fail(self, reason: str) -> None:
        """Record the failure as well as the disk and the store allow; never raises (a match
        that fails must not take the referee down with it).  A failure the store could not
        record leaves the match 'running' there; the next server start marks it failed."""
        self.status = MatchStatus.FAILED
        metrics.MATCHES_FAILED.labels(self.game).inc()
        # A failure's reason may carry a bot's stderr: cleaned here, before the log, the store
        # and every screen get it.
        self.reason = reason = printable(reason)
        match_lines.warning("%s: failed: %s", self.id, reason)
        with trio.CancelScope(shield=True):
            try:
                await self.journal.close(self._footer(MatchStatus.FAILED, reason))
            except MatchFailed as problem:
                self.reason = reason = f"{reason}; {problem}"
            except Exception:
                log.exception("%s: the log of the failed match could not be closed", self.id)
            try:
                await trio.to_thread.run_sync(
                    self.host.store.matches.fail, self.id, reason, self.steps
                )
            except Exception:
                log.exception("%s: the store could not record the failure", self.id)
        await self._send_end(reason)

    async def _deal_sealed(self) -> bool:
        """Whether another match dealt from this one's seed is not over: its bots may not learn
        the seed yet (``_sealing.py``).  Asked as the match ends, shielded and bounded (the
        bots get their ``MatchEnded`` even when the server is stopping); a store that cannot
        answer in time seals the deal: withholding is the safe side."""
        with trio.CancelScope(shield=True, deadline=trio.current_time() + SEALING_CHECK_S):
            try:
                sealed = await self.host.sealed_deals(besides=self.id)
            except Exception:
                log.exception("%s: the store could not say whether the deal is shared", self.id)
                return True
            return Deal(self.game, self.seed) in sealed
        return True

    async def _send_end(self, reason: str) -> None:
        sealed = await self._deal_sealed()
        status = self.status_number
        seat_results = [result_message(r) for r in self.results]
        self.audience.close(
            pb.WatchUpdate(
                end=pb.WatchEnd(status=status, seats=seat_results, reason=reason, steps=self.steps)
            ),
            self.steps,
        )
        for seat in self.seats:
            connection = seat.connection
            if connection is None or not connection.alive:
                continue
            ended = pb.MatchEnded(
                match_id=self.id,
                seat=seat.number,
                status=status,
                seats=seat_results,
                reason=reason,
                seed=0 if sealed else self.seed,
                deal_salt=b"" if sealed else self.deal_salt,
                deal_sealed=sealed,
            )
            connection.write(outgoing.match_ended(ended, seat.take_unsent()))


def status_message(status: MatchStatus) -> pb.MatchStatus:
    """The protocol's number of a match status."""
    return _STATUS_NUMBERS[status]


def status_of_message(number: int) -> MatchStatus | None:
    """The match status of a protocol number (``None`` for one that is not a status)."""
    for status, known in _STATUS_NUMBERS.items():
        if known == number:
            return status
    return None


def result_message(record: SeatRecord) -> pb.SeatResult:
    return pb.SeatResult(
        seat=record.seat,
        bot_name=record.bot_name,
        score=record.score,
        rank=record.rank,
        end=pb.SEAT_END_FORFEITED if record.forfeited else pb.SEAT_END_COMPLETED,
        forfeit_reason=record.forfeit_reason,
        timeouts=record.timeouts,
        defaults_played=record.defaults_played,
        crashes=record.crashes,
        illegal_moves=record.illegal_moves,
    )


def _now_us() -> int:
    return time.time_ns() // 1000
