"""One match between bots, driven: waiting for them, the core's outputs, results.

The rules of a running match are the core's (``_core.py``: a state machine with no awaits and
no clock).  The runner is its driver: it seats the bots (waiting for them up to the join
timeout, in the referee's trio run), feeds the core what happens with the host's time as
``now`` — a reply routed to the open request (:meth:`MatchRunner.reply`, called by the referee
in the very call that received it: judged, applied, logged and answered in one turn, with no
task, channel or cancel scope per decision), a connection lost or regained, a forfeit, the
deadline — and does what the core says: writes to the seats' connections, appends to the log
(``MatchJournal``), opens and closes the request's route in the referee, moves its one timer.
Hosted on the edge's asyncio loop (:attr:`MatchHost.loop`) the time is the loop's, the timer
a loop timer, and replies and deadlines are handled in the loop's own turns, outside trio; in
a trio run of its own (tests, tools) the time is trio's and the timer a cancel scope's
deadline, moved without waking the task.  The match's start and end, which wait for the store
and the log's sync, are the runner's trio task.

The runner's collaborators each keep one concern: the :class:`MatchJournal` its log, the
:class:`MatchCore` its rules (the seats' clocks, the spectators), and the :class:`MatchHost`
(the referee) the connections and the routing of replies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

import trio

from bisca.engine import Action, MatchState, Settings
from bisca.server import metrics
from bisca.server.datadir import log_file
from bisca.server.errors import MatchFailed, StoreError
from bisca.server.logs import FLUSH_AFTER_S, Audience, Push, ServerKey, Watcher
from bisca.server.records import MatchStatus, SeatRecord, bots_not_connected, game_places
from bisca.server.store import Store, StoreOutage, is_store_lost
from bisca.server.text import printable
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

from ._clock import ClockSettings
from ._connection import Connection
from ._core import (
    MATCH_LOGGER,
    STATUS_NUMBERS,
    AppendLog,
    Finished,
    MatchCore,
    OpenLog,
    Output,
    RequestClosed,
    RequestOpened,
    Seat,
    Send,
    SetTimer,
)
from ._journal import MatchJournal
from ._judge import Asked
from ._sealing import Deal

#: Seconds a match's end may wait for the store to say whether its deal is shared.
SEALING_CHECK_S = 5.0
#: Seconds between the first tries to record a result or failure the store could not take when
#: the match ended (they double up to ``OUTAGE_RETRY_MAX_S`` while it stays lost).
LATE_RECORD_POLL_S = 1.0

log = logging.getLogger(MATCH_LOGGER)
#: Exactly one line when a match starts and one when it ends (finished or failed): what a
#: standing server prints about the matches it plays (``bisca serve`` shows it by default).
#: A child of :data:`MATCH_LOGGER`, so quieting that quiets these too.
MATCH_LINES_LOGGER = MATCH_LOGGER + ".lines"
match_lines = logging.getLogger(MATCH_LINES_LOGGER)


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
    #: The store holds the match already, waiting (:meth:`Referee.record_ahead`): its id,
    #: seed and clock are fixed.
    recorded: bool = False
    #: While not over, the match keeps every other match dealt from its seed (its twins: a
    #: duplicate set's rotations) from showing its seed and replay (``_sealing.py``).  A
    #: person's table does not: it counts nowhere and its opener may choose its deal, so
    #: a finished match's seed, public already, must not let a visitor hold that match's
    #: replay closed.  The match's own seed stays hidden until it is over either way.
    seals_twins: bool = True


class MatchHost(Protocol):
    """What a match needs of the referee that hosts it."""

    store: Store
    signer: ServerKey | None
    #: The asyncio loop that owns the bots' streams, when the referee is hosted on one (the
    #: edge's): the matches take its time and its timers, and their replies are handled in
    #: its turns; ``None`` in a trio run of its own (tests, tools), trio's time and scopes.
    loop: asyncio.AbstractEventLoop | None

    def connections_of(self, bot: str) -> list[Connection]: ...

    async def wait_bots_changed(self) -> None: ...

    def new_request_id(self) -> str: ...

    def open_request(self, pending: Pending) -> None: ...

    def close_request(self, request_id: str) -> None: ...

    def forget_match(self, match_id: str) -> None: ...

    async def deal_sealed(self, deal: Deal, *, besides: str) -> bool: ...


@dataclass(frozen=True)
class Pending:
    """An action request waiting for its seat's answer: where the referee routes a reply
    naming its id."""

    match: MatchRunner
    seat: int
    request_id: str

    @property
    def asked(self) -> Asked:
        """The request as the judge sees it (``_judge.py``): the attempt it is at now."""
        asked = self.match.core.asked(self.request_id)
        assert asked is not None, "the request is not open"
        return asked


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
        self.seals_twins = plan.seals_twins
        self.bots = list(plan.bots)
        self.clock_settings = clock
        self.join_timeout = join_timeout
        self.match_dir = match_dir
        self.core = MatchCore(
            match_id=match_id,
            game=plan.game,
            settings=plan.settings,
            seed=seed,
            bots=self.bots,
            clock=clock,
            deal_salt=secrets.token_bytes(16),
            new_request_id=host.new_request_id,
        )
        #: Each seat's connection now (``None``: the seat waits for its bot to come back).
        self.connections: list[Connection | None] = [None] * len(self.bots)
        self.status = MatchStatus.WAITING
        self._counted_running = False
        self.reason = ""
        self.results: list[SeatRecord] = []
        self.done = trio.Event()
        self.journal = MatchJournal(
            match_id,
            None if match_dir is None else log_file(match_dir, match_id),
            host.store,
            host.signer,
        )
        self._waiting: trio.CancelScope | None = None
        self._abort_reason: str | None = None
        #: The core's one timer, the deadline of its open request: a loop timer on the host
        #: loop, else the deadline of a cancel scope of the match's task.
        self._loop = host.loop
        self._now: Callable[[], float] = trio.current_time if host.loop is None else host.loop.time
        self._deadline = math.inf
        self._timer: trio.CancelScope | None = None
        self._loop_timer: asyncio.TimerHandle | None = None
        #: When the log's waiting records are written at the latest (``inf``: none wait),
        #: and the loop timer that writes them on a host loop (else the cancel scope's
        #: deadline wakes the match's task for it too).
        self._flush_at = math.inf
        self._flush_timer: asyncio.TimerHandle | None = None
        #: Whether the core finished the match or driving it failed (:attr:`_failure`), and
        #: the same told to the match's task (set through the trio token: the core may be
        #: driven from the host loop's own callbacks, outside trio).
        self._ended = False
        self._played = trio.Event()
        self._trio = trio.lowlevel.current_trio_token()
        self._failure: BaseException | None = None
        self._stopped = False
        self._open_request: str | None = None
        #: The reason of a failure the store was lost for when the match ended (a full disk,
        #: a database down): recorded by :meth:`_record_late` once the store answers.
        self._failure_unrecorded: str | None = None
        #: Whether the match's log is completed (or it keeps none): only its result is left
        #: to record, with that log (path, final hash).
        self._log_completed = False
        self._result_log: tuple[str, str] | None = None

    # ---- what the core knows ----------------------------------------------------------------

    @property
    def seats(self) -> list[Seat]:
        return self.core.seats

    @property
    def state(self) -> MatchState | None:
        return self.core.state

    @property
    def steps(self) -> int:
        return self.core.steps

    @property
    def audience(self) -> Audience:
        return self.core.audience

    @property
    def deal_salt(self) -> bytes:
        return self.core.deal_salt

    @property
    def deal_commitment(self) -> bytes:
        return self.core.deal_commitment

    @property
    def log_path(self) -> Path | None:
        return self.journal.path

    @property
    def status_number(self) -> pb.MatchStatus:
        return STATUS_NUMBERS[self.status]

    def seat_infos(self) -> list[pb.SeatInfo]:
        return self.core.seat_infos()

    def why_illegal(self, seat: int, actions: Sequence[Action]) -> list[str | None]:
        """A query of the live match, for a trio task of the referee (the state it reads is
        only moved on by this runner, in trio): why ``seat`` may not play each of ``actions``
        now, ``None`` for a legal one.  Empty when the seat is not to act (the match not
        started, over, or another seat's turn): nothing is illegal then, nothing is asked."""
        state = self.state
        if state is None or state.is_over or state.to_act != seat:
            return []
        return [state.why_illegal(action) for action in actions]

    # ---- driving the core -------------------------------------------------------------------

    def _drive(self, event: Callable[[], list[Output]]) -> None:
        """Tell the core ``event`` and do what it says, in order.  A failure (the log cannot
        be written, a bug) ends the match: its task records it; nothing more is asked of the
        core."""
        try:
            for output in event():
                if isinstance(output, Send):
                    connection = self.connections[output.seat]
                    if connection is not None:
                        connection.deliver(output.data)
                elif isinstance(output, AppendLog):
                    self.journal.write_entry(output.entry)
                elif isinstance(output, SetTimer):
                    self._set_timer(output.at)
                elif isinstance(output, RequestOpened):
                    self._open_request = output.request_id
                    self.host.open_request(Pending(self, output.seat, output.request_id))
                elif isinstance(output, RequestClosed):
                    self._open_request = None
                    self.host.close_request(output.request_id)
                elif isinstance(output, OpenLog):
                    self.journal.open(output.header)
                elif isinstance(output, Finished):
                    self.results = output.results
                    self._end_play()
            if self._flush_at == math.inf and not self._ended and self.journal.waiting:
                self._schedule_flush()
        except BaseException as failure:
            self._failure = failure
            self._end_play()
            if not isinstance(failure, Exception):
                raise

    def _end_play(self) -> None:
        self._set_timer(None)
        self._cancel_flush()  # the end writes the rest, in a worker thread
        if not self._ended:
            self._ended = True
            self._trio.run_sync_soon(self._played.set)

    def _set_timer(self, at: float | None) -> None:
        self._deadline = math.inf if at is None else at
        if self._loop is None:
            if self._timer is not None:
                self._timer.deadline = min(self._deadline, self._flush_at)
            return
        # A loop timer that fires no later than the new deadline is kept, and moves itself on
        # to the deadline when it fires (:meth:`_deadline_fired`): a match moves its timer
        # about once per clock budget, not at every decision.
        timer = self._loop_timer
        if timer is not None:
            if at is not None and timer.when() <= at:
                return
            timer.cancel()
        self._loop_timer = None if at is None else self._loop.call_at(at, self._deadline_fired, at)

    def _stop_driving(self) -> None:
        """The match's task ends (over, failed or cancelled): nothing drives the core now."""
        self._stopped = True
        self._set_timer(None)
        self._cancel_flush()
        if self._open_request is not None:  # a match that failed while it asked
            self.host.close_request(self._open_request)
            self._open_request = None

    def _deadline_fired(self, at: float) -> None:
        """The host loop's timer, set for the deadline ``at``: the open request's clock ran out
        (in a turn of the loop), unless the deadline moved on since (the timer follows it).
        The loop runs a timer up to its clock's resolution early: the time is the deadline's
        at least, or the core would see it not yet passed, and no timer left."""
        self._loop_timer = None
        deadline = self._deadline
        if deadline == math.inf:
            return
        if deadline > at:  # a later request's deadline: wait for it
            assert self._loop is not None
            self._loop_timer = self._loop.call_at(deadline, self._deadline_fired, deadline)
            return
        if self._driving:
            self._drive(partial(self.core.deadline_passed, max(self._now(), deadline)))

    def _schedule_flush(self) -> None:
        """Records wait in the log's writer until a batch is worth a write, or until the next
        record finds the batch's first one waited :data:`FLUSH_AFTER_S`.  While the seat to
        act thinks no record comes, so the batch's first one sets this timer: one per batch,
        not per decision."""
        self._flush_at = at = self._now() + FLUSH_AFTER_S
        if self._loop is not None:
            self._flush_timer = self._loop.call_at(at, self._flush_due)
        elif self._timer is not None:
            self._timer.deadline = min(self._timer.deadline, at)

    def _flush_due(self) -> None:
        self._flush_at, self._flush_timer = math.inf, None
        if self._driving and not self._ended:
            self._drive(self._flush_journal)

    def _flush_journal(self) -> list[Output]:
        self.journal.flush()
        return []

    def _cancel_flush(self) -> None:
        self._flush_at = math.inf
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None

    @property
    def _driving(self) -> bool:
        """Whether the core runs the match (started, not failed; a finished match is until
        its end is recorded: a bot that comes back meanwhile is sent its ``MatchEnded``)."""
        return self.status is MatchStatus.RUNNING and self._failure is None and not self._stopped

    def reply(self, seat: int, action: pb.GameAction) -> None:
        """The open request of ``seat`` was answered with ``action`` (the referee routed it
        here by the request's id): judged, applied, logged and answered now."""
        if self._driving:
            self._drive(partial(self.core.reply, seat, action, self._now()))

    # ---- connections ------------------------------------------------------------------------

    def connection_of(self, seat: int) -> Connection | None:
        return self.connections[seat]

    def connection_lost(self, connection: Connection) -> None:
        """A connection closed: its seats go to another live connection of their bot if it has
        one (a reconnect seen before the old stream closed, or a bot with several
        connections); otherwise they wait for the bot to connect again."""
        lost = False
        for number, held in enumerate(self.connections):
            if held is connection:
                self.connections[number] = None
                self.core.seat_disconnected(number)
                lost = True
        if lost and connection.bot is not None:
            for other in self.host.connections_of(connection.bot):
                if self.game in other.games:  # (it takes every seat of the bot left without)
                    self.connection_gained(other)
                    break

    def connection_gained(self, connection: Connection) -> None:
        """A bot (re)connected: give it back its seats that have no live connection."""
        if not self._driving:
            return
        if self.game not in connection.games:
            return
        for seat in self.seats:
            held = self.connections[seat.number]
            if seat.bot == connection.bot and (held is None or not held.alive):
                self.connections[seat.number] = connection
                self._drive(
                    partial(
                        self.core.seat_connected,
                        seat.number,
                        live_events=connection.live_events,
                        bot_version=connection.bot_version,
                        now=self._now(),
                    )
                )

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
            connection = self.connections[seat.number] = connections[index % len(connections)]
            self.core.seat_connected(
                seat.number,
                live_events=connection.live_events,
                bot_version=connection.bot_version,
                now=self._now(),
            )
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
            if is_store_lost(error):  # (its end could not be recorded)
                _say_failed(self.id, "match aborted", error)
                await self._fail(f"the store failed: {error}")
            else:
                log.exception("%s: match aborted", self.id)
                await self._fail(f"internal error: {error!r}")
        finally:
            self._stop_driving()
            self.journal.abandon()  # (a match that ended completed its log: nothing left)
            if self._counted_running:
                metrics.MATCHES_RUNNING.labels(self.game).dec()
            self.done.set()
            self.host.forget_match(self.id)
        if self._failure_unrecorded is not None:
            record_failure = partial(self._record_failure, self._failure_unrecorded)
            await self._record_late("recording its failure", record_failure)

    def forfeit_seat(self, number: int, reason: str, *, crashed: bool = False) -> None:
        """The seat's bot cannot play on (its process ended, a limit killed it: ``crashed``,
        which the seat's result counts): the seat is forfeited now, with ``reason``, and a
        default player finishes it."""
        if self.status.is_over or self._ended or self._stopped:
            return
        self._drive(partial(self.core.forfeit, number, reason, self._now(), crashed=crashed))

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
        raise MatchFailed(bots_not_connected(self.join_timeout, missing))

    async def _play(self) -> None:
        self.status = MatchStatus.RUNNING
        metrics.MATCHES_RUNNING.labels(self.game).inc()
        self._counted_running = True
        await trio.to_thread.run_sync(self._record_running)
        match_lines.info("%s: %s started, seats %s", self.id, self.game, ", ".join(self.bots))
        self._drive(partial(self.core.start, self._now(), _now_us()))
        # The match is played by the calls that feed the core; in its own trio run this task
        # only keeps its timer: a cancel scope whose deadline the core moves (no wake-up per
        # decision).  On a host loop the loop's timer is the clock.
        while not self._played.is_set():
            if self._loop is not None:
                await self._played.wait()
                continue
            with trio.CancelScope(deadline=min(self._deadline, self._flush_at)) as self._timer:
                await self._played.wait()
            self._timer = None
            if self._flush_at <= self._now():
                self._flush_due()
            if not self._ended:
                self._drive(partial(self.core.deadline_passed, self._now()))
        if self._failure is not None:
            raise self._failure
        await self._finish()

    def _record_running(self) -> None:
        """Blocking, the start in one worker thread's call: the match marked running in the
        store and its log's file created."""
        if not self.host.store.matches.mark_running(self.id):
            raise MatchFailed("it was given up before it started (its record is not waiting)")
        self.journal.create()

    # ---- spectators -------------------------------------------------------------------------

    def watch(self, omniscient: bool, delay_steps: int, push: Push) -> Watcher:
        return self.core.watch(omniscient, delay_steps, push)

    def unwatch(self, watcher: Watcher) -> None:
        self.core.unwatch(watcher)

    # ---- the end ----------------------------------------------------------------------------

    async def _finish(self) -> None:
        footer = self.core.footer(MatchStatus.FINISHED, "", self.results, _now_us())
        # Shielded: a server that stops now must not leave a complete FINISHED log beside a
        # match the store says is running (a sync and one transaction).
        unrecorded = False
        with trio.CancelScope(shield=True):
            try:
                sealed = await trio.to_thread.run_sync(self._record_finished, footer)
            except Exception as problem:
                if not (is_store_lost(problem) and self._log_completed):
                    raise
                # Played to its end, its log complete and signed: its result is not lost with
                # the store's answer (review s59a, F1: a 7 s database restart failed 20 of 20
                # such matches).  Recorded below once the store answers; were the server
                # stopped first, the next start records it from the log (``edge/_server.py``).
                what = "the store could not record its result (tried again until it answers)"
                _say_failed(self.id, what, problem)
                unrecorded, sealed = True, True  # (withholding the seed is the safe side)
        self.status = MatchStatus.FINISHED
        metrics.MATCHES_FINISHED.labels(self.game).inc()
        match_lines.info(
            "%s: finished after %d steps: %s",
            self.id,
            self.steps,
            ", ".join(
                f"{r.bot_name} {r.score} (place {place})"
                for r, place in zip(self.results, game_places(self.game, self.results), strict=True)
            ),
        )
        await self._send_end("", sealed=sealed)
        if unrecorded:  # (whoever waits for the match waits for its result in the store)
            await self._record_late("recording its result", self._record_result)

    def _record_finished(self, footer: log_pb2.LogFooter) -> bool:
        """Blocking, the whole end in one worker thread's call (one hand-off, one commit): the
        log completed, the result recorded with it and the ratings in one transaction; returns
        whether the deal is sealed (``_sealing.py``: another match dealt from this seed is not
        over; the store's question, which every match of this referee is in too)."""
        store = self.host.store
        complete = self._result_log = self.journal.complete(footer)
        self._log_completed = True
        try:
            store.matches.finish_and_rate(self.id, self.steps, self.results, log=complete)
        except Exception as problem:
            if complete is not None and not is_store_lost(problem):
                # The log stays recorded (a given-up match's late end).
                with contextlib.suppress(Exception):
                    store.logs.record(self.id, *complete)
            raise
        try:
            return store.matches.deal_in_play(self.game, self.seed, besides=self.id) is not None
        except Exception as problem:  # withholding is the safe side
            _say_failed(self.id, "the store could not say whether the deal is shared", problem)
            return True

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
                await self.journal.close(
                    self.core.footer(MatchStatus.FAILED, reason, self.results, _now_us())
                )
            except MatchFailed as problem:
                self.reason = reason = f"{reason}; {problem}"
            except Exception as problem:  # (a lost store in one line: review s59a, F3)
                _say_failed(self.id, "the log of the failed match could not be closed", problem)
            try:
                await trio.to_thread.run_sync(self._record_failure, reason)
            except Exception as problem:
                if is_store_lost(problem):  # recorded once it answers (_record_late)
                    self._failure_unrecorded = reason
                    what = "the store could not record the failure (tried again until it answers)"
                else:
                    what = "the store could not record the failure"
                _say_failed(self.id, what, problem)
        await self._send_end(reason, sealed=await self._deal_sealed())

    def _record_failure(self, reason: str) -> None:
        """Blocking: the failure, and where its log was left (a ``.partial`` one), which the
        store could not take either when the log was closed (review s59a, F3: after a full
        disk, 30 of 30 failed matches had no log on record)."""
        store = self.host.store
        store.matches.fail(self.id, reason, self.steps)
        if self.journal.path is not None and self.journal.hash is None:
            store.logs.record(self.id, str(self.journal.path), None)

    def _record_result(self) -> None:
        """Blocking: the result the store could not take when the match ended, with its log.
        A commit whose answer the outage lost may have been made: the store's record says."""
        store = self.host.store
        try:
            store.matches.finish_and_rate(self.id, self.steps, self.results, log=self._result_log)
        except StoreError as refused:
            if is_store_lost(refused):
                raise
            record = store.matches.get(self.id)
            if record is None or record.status is not MatchStatus.FINISHED:
                raise

    async def _record_late(self, what: str, record: Callable[[], object]) -> None:
        """Make the store ``record`` what it was lost for when the match ended, once it
        answers again, for as long as the referee runs: else the store would say the match is
        running until the next server start (operator review 55, finding 9: a full disk).
        A failure is recorded after :attr:`done` (whoever waits for the match goes on), a
        result before it."""
        outage = StoreOutage(log, f"{self.id}: {what}", LATE_RECORD_POLL_S)
        outage.lost = True  # said when the match ended
        wait = LATE_RECORD_POLL_S
        while True:
            await trio.sleep(wait)
            try:
                await trio.to_thread.run_sync(record)
            except Exception as problem:
                if not is_store_lost(problem):
                    _say_failed(self.id, f"the store refused {what}", problem)
                    return
                wait = outage.failed(problem, what)
            else:
                outage.answered()
                return

    async def _deal_sealed(self) -> bool:
        """Whether another match dealt from this one's seed is not over: its bots may not learn
        the seed yet (``_sealing.py``).  Asked as the match ends, shielded and bounded (the
        bots get their ``MatchEnded`` even when the server is stopping); a store that cannot
        answer in time seals the deal: withholding is the safe side."""
        with trio.CancelScope(shield=True, deadline=trio.current_time() + SEALING_CHECK_S):
            try:
                return await self.host.deal_sealed(Deal(self.game, self.seed), besides=self.id)
            except Exception as problem:
                _say_failed(self.id, "the store could not say whether the deal is shared", problem)
                return True
        return True

    async def _send_end(self, reason: str, *, sealed: bool) -> None:
        for output in self.core.end(self.status, reason, self.results, sealed=sealed):
            assert isinstance(output, Send)
            connection = self.connections[output.seat]
            if connection is not None and connection.alive:
                connection.deliver(output.data)


def _say_failed(match_id: str, what: str, problem: BaseException) -> None:
    """In the log: ``what`` went wrong in match ``match_id``.  A lost store in one line, which
    says all there is (an outage cuts every match at once: a traceback each filled a worker's
    log, operator re-test); anything else with its traceback, a bug's."""
    if is_store_lost(problem):
        log.warning("%s: %s: %s (the store is lost)", match_id, what, problem)
    else:
        log.error("%s: %s", match_id, what, exc_info=problem)


def status_message(status: MatchStatus) -> pb.MatchStatus:
    """The protocol's number of a match status."""
    return STATUS_NUMBERS[status]


def status_of_message(number: int) -> MatchStatus | None:
    """The match status of a protocol number (``None`` for one that is not a status)."""
    for status, known in STATUS_NUMBERS.items():
        if known == number:
            return status
    return None


def _now_us() -> int:
    return time.time_ns() // 1000
