"""One match between bots: waiting for them, asking for actions under the clock, results.

The runner owns the engine state of its match.  Each step it sends every seat the new events it
may see, sends the seat to act an ``ActionRequest`` (observation, legal actions, clock) and waits
for a legal answer inside a cancel scope sized by the seat's clock.  Illegal or malformed answers
are rejected and may be corrected within the same clock; three rejections, or no answer in
time, apply the match's timeout policy.  A bot that disconnects keeps its seat: if it connects
again with the same token it is sent the match again, its whole event history and the open
request, and the clock never stops for it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from bisca.engine import ENGINE_VERSION, GAMES, MalformedActionError, Outcome
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

from . import codec
from .clock import ClockSettings, Policy, SeatClock
from .matchlog import FORMAT_VERSION, LogWriter, log_file
from .referee import Connection, Pending, Referee
from .spectate import Push, Watcher
from .store import SeatRecord

log = logging.getLogger("bisca.server.match")

MAX_REJECTIONS = 3
Problem = tuple[pb.RejectCode, str]
_POLICY_NUMBERS = {
    Policy.DEFAULT: pb.TIMEOUT_POLICY_DEFAULT,
    Policy.FORFEIT: pb.TIMEOUT_POLICY_FORFEIT,
    Policy.STRIKES: pb.TIMEOUT_POLICY_STRIKES,
}


@dataclass
class Seat:
    number: int
    bot: str
    clock: SeatClock
    connection: Connection | None = None
    bot_version: str = ""
    request: pb.ServerMessage | None = None
    request_started: float | None = None


class MatchFailed(Exception):
    """The match could not be played (its bots never all connected, ...)."""


class MatchRunner:
    def __init__(
        self,
        *,
        referee: Referee,
        match_id: str,
        game: str,
        settings: Any,
        seed: int,
        bots: list[str],
        clock: ClockSettings,
        join_timeout: float,
        match_dir: Path | None,
    ) -> None:
        self.referee = referee
        self.id = match_id
        self.game = game
        self.settings = settings
        self.seed = seed
        self.bots = bots
        self.clock_settings = clock
        self.join_timeout = join_timeout
        self.match_dir = match_dir
        self.seats = [Seat(n, bot, SeatClock.start(clock)) for n, bot in enumerate(bots)]
        self.status = "waiting"
        self.reason = ""
        self.steps = 0
        self.state: Any = None
        self.results: list[SeatRecord] = []
        self.done = trio.Event()
        self._codec = codec.codec(game)
        self._log_writer: LogWriter | None = None
        #: Every batch of events so far, for spectators who join late.
        self.history: list[log_pb2.LogEvents] = []
        self.watchers: list[Watcher] = []
        self.log_path: Path | None = None
        self.log_hash: str | None = None
        self._waiting: trio.CancelScope | None = None
        self._abort_reason: str | None = None

    # ---- connections ------------------------------------------------------------------------

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
                if self.status == "running":
                    log.info("%s: seat %d (%s) lost its connection", self.id, seat.number, seat.bot)
        if lost and connection.bot is not None:
            for other in self.referee.connections_of(connection.bot)[:1]:
                self.connection_gained(other)

    def connection_gained(self, connection: Connection) -> None:
        """A bot (re)connected: give it back its seats that have no live connection."""
        if self.status != "running":
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
                    connection.send(self._refresh_request(seat))

    def _bind_seats(self) -> bool:
        """Give each seat a live connection of its bot, spreading a bot's seats over its
        connections; ``False`` while some bot has none."""
        by_bot: dict[str, list[Connection]] = {}
        for bot in set(self.bots):
            connections = self.referee.connections_of(bot)
            if not connections:
                return False
            by_bot[bot] = connections
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
            self.done.set()
            self.referee.forget_match(self.id)

    def abort_waiting(self, reason: str) -> None:
        """Fail the match now if it still waits for its bots (one of them cannot come: its
        process ended before connecting, ...); once it runs, the clocks decide."""
        if self.status == "waiting" and self._abort_reason is None:
            self._abort_reason = reason
            if self._waiting is not None:
                self._waiting.cancel()

    async def _wait_for_bots(self) -> None:
        with trio.move_on_after(self.join_timeout) as self._waiting:
            while self._abort_reason is None and not self._bind_seats():
                await self.referee.wait_bots_changed()
        if self._abort_reason is not None:
            raise MatchFailed(self._abort_reason)
        if not self._waiting.cancelled_caught:
            return
        missing = sorted({bot for bot in self.bots if not self.referee.connections_of(bot)})
        raise MatchFailed(f"bots not connected after {self.join_timeout:g} s: {', '.join(missing)}")

    async def _play(self) -> None:
        self.status = "running"
        await trio.to_thread.run_sync(self.referee.store.mark_running, self.id)
        self.state = state = GAMES[self.game].new_match(self.settings, self.seed)
        log.info("%s: %s started, seats %s", self.id, self.game, ", ".join(self.bots))
        self._open_log()
        for seat in self.seats:
            self._send_start(seat, resumed=False)
        delivered = 0
        while not state.is_over:
            delivered = self._send_events(delivered)
            to_act = state.to_act
            assert to_act is not None
            action, step = await self._decide(self.seats[to_act])
            state.apply(action)
            step.step = self.steps
            step.action.CopyFrom(codec.encode_game_action(self.game, action))
            self._log(log_pb2.LogEntry(step=step))
            self.steps += 1
        self._send_events(delivered)
        await self._finish(state.outcome)

    async def _decide(self, seat: Seat) -> tuple[Any, log_pb2.LogStep]:
        """The seat's action for this step, and the log's account of how it was decided."""
        state = self.state
        clock = seat.clock
        observation = codec.encode_game_observation(self.game, state.observation(seat.number))
        legal = [codec.encode_game_action(self.game, a) for a in state.legal_actions()]
        step = log_pb2.LogStep(
            seat=seat.number,
            observation=observation,
            legal_actions=legal,
            requested_at_us=_now_us(),
        )
        if clock.forfeited:
            clock.defaults_played += 1
            step.substituted = True
            step.substitution_reason = "forfeited seat: the default player acts"
            return state.default_action(), step
        request_id = step.request_id = self.referee.new_request_id()
        inbox, replies = trio.open_memory_channel[pb.GameAction](MAX_REJECTIONS * 4)
        seat.request = pb.ServerMessage(
            action_request=pb.ActionRequest(
                request_id=request_id,
                match_id=self.id,
                seat=seat.number,
                observation=observation,
                legal_actions=legal,
                attempt=1,
            )
        )
        self.referee.pending[request_id] = Pending(
            self, seat.number, request_id, inbox, seat.request
        )
        started = seat.request_started = trio.current_time()
        deadline = started + clock.budget_seconds()
        chosen = None
        rejections = 0
        try:
            if seat.connection is not None:
                seat.connection.send(self._refresh_request(seat))
            with trio.move_on_at(deadline):
                async for reply in replies:
                    chosen, problem = self._judge(reply)
                    if chosen is not None:
                        step.answered_at_us = _now_us()
                        break
                    rejections += 1
                    step.rejected.append(
                        log_pb2.RejectedAttempt(
                            action=reply, code=problem[0], message=problem[1], at_us=_now_us()
                        )
                    )
                    self._reject(seat, request_id, problem, rejections)
                    if rejections >= MAX_REJECTIONS:
                        break
                    seat.request.action_request.attempt = rejections + 1
                    if seat.connection is not None:
                        seat.connection.send(self._refresh_request(seat))
        finally:
            del self.referee.pending[request_id]
            seat.request = seat.request_started = None
        used = trio.current_time() - started
        clock.charge(used)
        step.used_us = int(used * 1_000_000)
        step.bank_left_us = int(clock.bank_ms * 1000)
        if chosen is not None:
            return chosen, step
        if rejections >= MAX_REJECTIONS:
            reason = f"{MAX_REJECTIONS} rejected actions for one request"
        else:
            reason = f"no legal action within {clock.settings.move_ms} ms + bank"
        if clock.time_out(reason):
            log.info("%s: seat %d (%s) forfeits: %s", self.id, seat.number, seat.bot, reason)
            if seat.connection is not None:
                seat.connection.error(
                    pb.ERROR_CODE_FORFEITED,
                    f"seat {seat.number} forfeited match {self.id}: {reason}; "
                    "a default player finishes the seat",
                    match_id=self.id,
                )
            reason += "; the seat forfeits"
        clock.defaults_played += 1
        step.substituted = True
        step.substitution_reason = reason
        return state.default_action(), step

    def _judge(self, reply: pb.GameAction) -> tuple[Any, Problem]:
        """The reply's action when it is legal, else ``None`` and (reject code, reason)."""
        try:
            action = codec.decode_game_action(self.game, reply)
        except MalformedActionError as problem:
            return None, (pb.REJECT_CODE_MALFORMED_ACTION, str(problem))
        reason = self.state.why_illegal(action)
        if reason is None:
            return action, (pb.REJECT_CODE_UNSPECIFIED, "")
        return None, (pb.REJECT_CODE_ILLEGAL_ACTION, reason)

    def _reject(self, seat: Seat, request_id: str, problem: Problem, count: int) -> None:
        if seat.connection is None:
            return
        code, reason = problem
        seat.connection.send(
            pb.ServerMessage(
                action_rejected=pb.ActionRejected(
                    request_id=request_id,
                    match_id=self.id,
                    seat=seat.number,
                    code=code,
                    message=reason,
                    attempts_left=MAX_REJECTIONS - count,
                )
            )
        )

    def _refresh_request(self, seat: Seat) -> pb.ServerMessage:
        """The open request with the clock as it stands now: what is left of the move time
        and of the bank."""
        assert seat.request is not None and seat.request_started is not None
        clock = seat.clock
        elapsed_ms = (trio.current_time() - seat.request_started) * 1000
        move_left = max(0.0, clock.settings.move_ms - elapsed_ms)
        bank_left = clock.bank_ms - max(0.0, elapsed_ms - clock.settings.move_ms)
        seat.request.action_request.clock.CopyFrom(
            pb.ClockState(move_ms=int(move_left), bank_ms=max(0, int(bank_left)))
        )
        return seat.request

    # ---- what seats are sent ----------------------------------------------------------------

    def _seat_infos(self) -> list[pb.SeatInfo]:
        return [
            pb.SeatInfo(seat=s.number, bot_name=s.bot, bot_version=s.bot_version)
            for s in self.seats
        ]

    def _send_start(self, seat: Seat, *, resumed: bool) -> None:
        if seat.connection is None:
            return
        seat.connection.send(
            pb.ServerMessage(
                match_started=pb.MatchStarted(
                    match_id=self.id,
                    game=codec.game_enum(self.game),
                    settings=codec.encode_game_settings(self.game, self.settings),
                    seat=seat.number,
                    seats=self._seat_infos(),
                    clock=clock_message(self.clock_settings),
                    resumed=resumed,
                )
            )
        )

    def _send_events(self, start: int) -> int:
        """Send every seat the events from ``start`` on that it may see; returns the end."""
        events = self.state.all_events(start)
        if not events:
            return start
        batches: list[list[pb.GameEvent]] = [[] for _ in self.seats]
        logged = log_pb2.LogEvents(after_step=self.steps)
        for offset, (audience, event) in enumerate(events):
            message = codec.encode_game_event(self.game, start + offset, event)
            logged.events.append(
                log_pb2.LoggedEvent(index=start + offset, audience=audience, event=message)
            )
            for seat in self.seats:
                if audience >> seat.number & 1:
                    batches[seat.number].append(message)
        self._log(log_pb2.LogEntry(events=logged))
        self.history.append(logged)
        for watcher in self.watchers:
            watcher.feed(self.history, self.steps, final=False)
        for seat, batch in zip(self.seats, batches, strict=True):
            if batch and seat.connection is not None:
                seat.connection.send(
                    pb.ServerMessage(
                        events=pb.EventBatch(match_id=self.id, seat=seat.number, events=batch)
                    )
                )
        return start + len(events)

    def _send_history(self, seat: Seat) -> None:
        """A resumed seat's whole event history, so it can rebuild what it missed."""
        if seat.connection is None or self.state is None:
            return
        batch = [
            codec.encode_game_event(self.game, index, event)
            for index, (audience, event) in enumerate(self.state.all_events())
            if audience >> seat.number & 1
        ]
        if batch:
            seat.connection.send(
                pb.ServerMessage(
                    events=pb.EventBatch(match_id=self.id, seat=seat.number, events=batch)
                )
            )

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
                forfeited=seat.clock.forfeited,
                forfeit_reason=seat.clock.forfeit_reason,
                timeouts=seat.clock.timeouts,
                defaults_played=seat.clock.defaults_played,
            )
            for seat in self.seats
        ]

    # ---- spectators -------------------------------------------------------------------------

    def watch(self, omniscient: bool, delay_steps: int, push: Push) -> Watcher:
        watcher = Watcher(omniscient, delay_steps, push, len(self.seats))
        push(
            pb.WatchUpdate(
                start=pb.WatchStart(
                    match_id=self.id,
                    game=codec.game_enum(self.game),
                    settings=codec.encode_game_settings(self.game, self.settings),
                    seats=self._seat_infos(),
                    omniscient=omniscient,
                    delay_steps=delay_steps,
                    live=True,
                )
            )
        )
        watcher.feed(self.history, self.steps, final=False)
        self.watchers.append(watcher)
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        if watcher in self.watchers:
            self.watchers.remove(watcher)
        watcher.closed = True

    def _close_watchers(self, status: pb.MatchStatus, reason: str) -> None:
        end = pb.WatchUpdate(
            end=pb.WatchEnd(
                status=status,
                seats=[result_message(r) for r in self.results],
                reason=reason,
                steps=self.steps,
            )
        )
        for watcher in self.watchers:
            watcher.feed(self.history, self.steps, final=True)
            watcher.close(end)
        self.watchers.clear()

    # ---- the log ----------------------------------------------------------------------------

    def _open_log(self) -> None:
        if self.match_dir is None:
            return
        path = log_file(self.match_dir, self.id)
        try:
            self._log_writer = LogWriter(path)
        except OSError as problem:
            raise MatchFailed(f"its log {path} could not be opened: {problem}") from None
        header = log_pb2.LogHeader(
            format_version=FORMAT_VERSION,
            engine_version=ENGINE_VERSION,
            match_id=self.id,
            game=codec.game_enum(self.game),
            settings=codec.encode_game_settings(self.game, self.settings),
            seed=self.seed,
            seats=self._seat_infos(),
            clock=clock_message(self.clock_settings),
            started_at_us=_now_us(),
        )
        self._log(log_pb2.LogEntry(header=header))

    def _log(self, entry: log_pb2.LogEntry) -> None:
        """Append to the log; a match cannot go on without it (the log is the whole truth)."""
        writer = self._log_writer
        if writer is not None:
            try:
                writer.write(entry)
            except OSError as problem:
                raise MatchFailed(
                    f"its log {writer.partial_path} could not be written: {problem}"
                ) from None

    async def _close_log(self, status: pb.MatchStatus, reason: str) -> None:
        """Complete the log (footer, sync, rename) and record it in the store.  A log that
        cannot be completed is left ``.partial`` (recorded so, without a hash) and the match
        fails."""
        writer = self._log_writer
        if writer is None:
            return
        self._log_writer = None
        footer = log_pb2.LogFooter(
            status=status,
            seats=[result_message(r) for r in self.results],
            reason=reason,
            ended_at_us=_now_us(),
            steps=self.steps,
        )
        if writer.failure is not None:  # the match already fails for its broken log
            await self._keep_partial(writer)
            return
        try:
            self.log_hash = await trio.to_thread.run_sync(writer.complete, footer)
        except OSError as problem:
            await self._keep_partial(writer)
            raise MatchFailed(
                f"its log {writer.partial_path} could not be completed: {problem}"
            ) from None
        self.log_path = writer.path
        await trio.to_thread.run_sync(
            self.referee.store.set_match_log, self.id, str(writer.path), self.log_hash
        )

    async def _keep_partial(self, writer: LogWriter) -> None:
        """Leave an incomplete log ``.partial`` and record where it is (without a hash)."""
        writer.abandon()
        self.log_path = writer.partial_path
        await trio.to_thread.run_sync(
            self.referee.store.set_match_log, self.id, str(writer.partial_path), None
        )

    async def _finish(self, outcome: Outcome | None) -> None:
        assert outcome is not None
        self.results = self._ranked(outcome)
        # Shielded: a server that stops now must not leave a complete FINISHED log beside a
        # match the store says is running (both steps are short: a sync and one transaction).
        with trio.CancelScope(shield=True):
            await self._close_log(pb.MATCH_STATUS_FINISHED, "")
            await trio.to_thread.run_sync(
                self.referee.store.finish_and_rate, self.id, self.steps, self.results
            )
        self.status = "finished"
        log.info(
            "%s: finished after %d steps, scores %s",
            self.id,
            self.steps,
            [r.score for r in self.results],
        )
        self._send_end(pb.MATCH_STATUS_FINISHED, "")

    async def _fail(self, reason: str) -> None:
        """Record the failure as well as the disk and the store allow; never raises (a match
        that fails must not take the referee down with it).  A failure the store could not
        record leaves the match 'running' there; the next server start marks it failed."""
        self.status = "failed"
        self.reason = reason
        log.warning("%s: failed: %s", self.id, reason)
        with trio.CancelScope(shield=True):
            try:
                await self._close_log(pb.MATCH_STATUS_FAILED, reason)
            except MatchFailed as problem:
                self.reason = reason = f"{reason}; {problem}"
            except Exception:
                log.exception("%s: the log of the failed match could not be closed", self.id)
            try:
                await trio.to_thread.run_sync(
                    self.referee.store.fail_match, self.id, reason, self.steps
                )
            except Exception:
                log.exception("%s: the store could not record the failure", self.id)
        self._send_end(pb.MATCH_STATUS_FAILED, reason)

    def _send_end(self, status: pb.MatchStatus, reason: str) -> None:
        self._close_watchers(status, reason)
        seat_results = [result_message(r) for r in self.results]
        for seat in self.seats:
            connection = seat.connection
            if connection is None or not connection.alive:
                continue
            connection.send(
                pb.ServerMessage(
                    match_ended=pb.MatchEnded(
                        match_id=self.id,
                        seat=seat.number,
                        status=status,
                        seats=seat_results,
                        reason=reason,
                        seed=self.seed,
                    )
                )
            )


def rank_with_forfeits(scores: Sequence[int], forfeited: Sequence[bool]) -> list[int]:
    """Competition ranks (0 best) by score among the seats that finished; forfeited seats
    rank last, tied with each other."""
    finishing = [score for score, out in zip(scores, forfeited, strict=True) if not out]
    return [
        len(finishing) if out else sum(1 for other in finishing if other > score)
        for score, out in zip(scores, forfeited, strict=True)
    ]


def clock_message(clock: ClockSettings) -> pb.ClockSettings:
    return pb.ClockSettings(
        move_ms=clock.move_ms,
        bank_ms=clock.bank_ms,
        policy=_POLICY_NUMBERS[clock.policy],
        strikes=clock.strikes if clock.policy is Policy.STRIKES else 0,
    )


def _now_us() -> int:
    return time.time_ns() // 1000


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
    )
