"""One match as a state machine: no awaits, no framework, no clock of its own (sans-I/O).

The core is the pattern of h11, h2 and wsproto applied to a match: its driver tells it what
happened — the match starts, a seat answered, the deadline passed, a seat's connection closed
or came back, a seat forfeited, a spectator joined — always with ``now`` (seconds on the
driver's monotonic clock), and it answers with what to do, in order: :class:`Send` these
bytes to a seat, :class:`OpenLog` / :class:`AppendLog` the match's log, :class:`SetTimer`
for the open request's deadline, :class:`RequestOpened` / :class:`RequestClosed` so replies
can be routed to it, and :class:`Finished` when the last step is played.  Every rule of a
running match is here: the clocks and timeout policies (``_clock.py``), rejections and
retries (judged by ``_judge.py``, as ``check-bot`` judges), reconnection with the whole event
history, events live or carried by the next message, spectators (``Audience``), the deal's
commitment and reveal.  What is I/O stays with the driver (``_match.py``): the connections,
the log file and its signature (``MatchJournal``), the store, and the timer itself.

A seat's connection is, for the core, whether it has one and whether it takes live events:
a :class:`Send` is only emitted to a seat that has one (a seat without one is given its
history when it comes back).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from bisca import wire
from bisca.engine import ENGINE_VERSION, GAMES, Action, MatchState, Outcome, Settings
from bisca.server import metrics
from bisca.server.logs import FORMAT_VERSION, Audience, Push, Watcher
from bisca.server.records import MatchStatus, SeatEnd, SeatRecord, rank_with_forfeits
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

from . import _messages as messages
from . import _outgoing as outgoing
from ._clock import ClockSettings, SeatClock
from ._judge import MAX_REJECTIONS, Asked, RejectedReply, verify_action
from ._messages import clock_message

#: The logger of every match (started, lost seats, forfeits, failures).
MATCH_LOGGER = "bisca.server.match"
log = logging.getLogger(MATCH_LOGGER)

STATUS_NUMBERS = {
    MatchStatus.WAITING: pb.MATCH_STATUS_WAITING,
    MatchStatus.RUNNING: pb.MATCH_STATUS_RUNNING,
    MatchStatus.FINISHED: pb.MATCH_STATUS_FINISHED,
    MatchStatus.FAILED: pb.MATCH_STATUS_FAILED,
}


# ---- what the core asks its driver to do ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Send:
    """Write a serialized ``ServerMessage`` to the seat's connection."""

    seat: int
    data: bytes


@dataclass(frozen=True, slots=True)
class OpenLog:
    """Open the match's log with this header."""

    header: log_pb2.LogHeader


@dataclass(frozen=True, slots=True)
class AppendLog:
    """Append a serialized ``LogEntry`` to the match's log."""

    entry: bytes


@dataclass(frozen=True, slots=True)
class SetTimer:
    """Call :meth:`MatchCore.deadline_passed` at ``at`` (``None``: no deadline now)."""

    at: float | None


@dataclass(frozen=True, slots=True)
class RequestOpened:
    """Replies naming ``request_id`` are for ``seat`` of this match from now on."""

    seat: int
    request_id: str


@dataclass(frozen=True, slots=True)
class RequestClosed:
    """No reply naming ``request_id`` is taken any more (answered, timed out, withdrawn)."""

    request_id: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The last step is played: the match's result, seat by seat."""

    results: list[SeatRecord]


Output = Send | OpenLog | AppendLog | SetTimer | RequestOpened | RequestClosed | Finished


@dataclass(frozen=True)
class Timebase:
    """The wall time (µs since the epoch, as the log writes times) of a driver's ``now``:
    the core has no clock, so the driver says once which wall time one ``now`` was."""

    now: float
    wall_us: int

    def wall(self, now: float) -> int:
        return self.wall_us + int((now - self.now) * 1_000_000)


# ---- the match's state ---------------------------------------------------------------------


@dataclass
class OpenRequest:
    """The request a seat is asked: its id, serialized head and question (observation and
    legal actions, the very bytes of its log step), when it was asked, the attempt, and the
    log's account of it so far."""

    request_id: str
    head: bytes
    question: bytes
    started: float
    step: log_pb2.LogStep
    attempt: int = 1
    rejections: int = 0


@dataclass
class Seat:
    number: int
    bot: str
    clock: SeatClock
    #: Whether the seat has a connection now, and whether that connection takes live events.
    connected: bool = False
    live_events: bool = True
    bot_version: str = ""
    request: OpenRequest | None = None
    #: Serialized ``GameEvent`` values this seat may see that its connection was not sent
    #: yet: its next request or its ``MatchEnded`` carries them (never with live events).
    unsent: list[bytes] = field(default_factory=list)
    #: What went wrong for the seat (its result counts them): its bot process ending during
    #: the match, and answers rejected.
    crashes: int = 0
    illegal_moves: int = 0

    def take_unsent(self) -> list[bytes]:
        """The events the seat's next message carries (and forget them: they are sent)."""
        events, self.unsent = self.unsent, []
        return events


class MatchCore:
    """One match's rules, driven by events with ``now`` (see the module's docstring)."""

    def __init__(
        self,
        *,
        match_id: str,
        game: str,
        settings: Settings,
        seed: int,
        bots: list[str],
        clock: ClockSettings,
        deal_salt: bytes,
        new_request_id: Callable[[], str],
    ) -> None:
        self.id = match_id
        self.game = game
        self.settings = settings
        self.seed = seed
        self.clock_settings = clock
        self.seats = [Seat(n, bot, SeatClock.start(clock)) for n, bot in enumerate(bots)]
        self._new_request_id = new_request_id
        # Verifiable dealing: committed to before the first card, revealed at the end.
        self.deal_salt = deal_salt
        self.deal_commitment = wire.deal_commitment(deal_salt, seed, match_id)
        self.encoder = outgoing.GameEncoder(game)
        self.audience = Audience(len(self.seats))
        self.state: MatchState | None = None
        self.timebase: Timebase | None = None
        self.steps = 0
        #: Every event so far as ``(audience, serialized GameEvent)``: a resumed seat's history.
        self.events: list[tuple[int, bytes]] = []
        self.over = False
        # The game's metric series, looked up once (a label lookup per decision costs more
        # than the count itself).
        self._decision_seconds = metrics.DECISION_SECONDS.labels(game)
        self._decisions = {
            source: metrics.DECISIONS.labels(game, source) for source in metrics.DecisionSource
        }

    # ---- queries ------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self.state is not None

    @property
    def open_request(self) -> OpenRequest | None:
        """The request open now (a match asks one seat at a time)."""
        state = self.state
        if state is None or state.is_over or state.to_act is None:
            return None
        return self.seats[state.to_act].request

    @property
    def deadline(self) -> float | None:
        """When the open request's clock runs out (``None``: none is open)."""
        request = self.open_request
        if request is None:
            return None
        state = self.state
        assert state is not None and state.to_act is not None
        return request.started + self.seats[state.to_act].clock.budget_seconds()

    def asked(self, request_id: str) -> Asked | None:
        """The open request of that id as the judge sees it (the attempt it is at now)."""
        request, state = self.open_request, self.state
        if request is None or state is None or request.request_id != request_id:
            return None
        assert state.to_act is not None
        return Asked(request_id, self.id, state.to_act, self.game, state, request.attempt)

    def seat_infos(self) -> list[pb.SeatInfo]:
        return [
            pb.SeatInfo(seat=s.number, bot_name=s.bot, bot_version=s.bot_version)
            for s in self.seats
        ]

    def header(self) -> log_pb2.LogHeader:
        assert self.timebase is not None, "the match has not started"
        return log_pb2.LogHeader(
            format_version=FORMAT_VERSION,
            engine_version=ENGINE_VERSION,
            match_id=self.id,
            game=wire.game_enum(self.game),
            settings=wire.encode_game_settings(self.game, self.settings),
            seed=self.seed,
            seats=self.seat_infos(),
            clock=clock_message(self.clock_settings),
            started_at_us=self.timebase.wall_us,
            deal_salt=self.deal_salt,
            deal_commitment=self.deal_commitment,
        )

    def footer(
        self, status: MatchStatus, reason: str, results: list[SeatRecord], wall_us: int
    ) -> log_pb2.LogFooter:
        return log_pb2.LogFooter(
            status=STATUS_NUMBERS[status],
            seats=[result_message(r) for r in results],
            reason=reason,
            ended_at_us=wall_us,
            steps=self.steps,
        )

    # ---- events -------------------------------------------------------------------------

    def seat_connected(
        self, seat: int, *, live_events: bool, bot_version: str, now: float
    ) -> list[Output]:
        """The seat has a connection (its first, or its bot came back): a running match sends
        it the match again, its whole event history and the open request."""
        record = self.seats[seat]
        record.connected = True
        record.live_events = live_events
        record.bot_version = bot_version or record.bot_version
        out: list[Output] = []
        if self.state is None or self.over:
            return out
        log.info("%s: seat %d (%s) resumed", self.id, seat, record.bot)
        self._send_start(record, out, resumed=True)
        self._send_history(record, out)
        if record.request is not None:
            self._send_request(record, now, out)
        return out

    def seat_disconnected(self, seat: int) -> None:
        """The seat lost its connection; it keeps its seat and its clock runs on."""
        record = self.seats[seat]
        record.connected = False
        if self.state is not None and not self.over:
            log.info("%s: seat %d (%s) lost its connection", self.id, seat, record.bot)

    def start(self, now: float, wall_us: int) -> list[Output]:
        """Deal, open the log, tell every seat the match started and ask the first seat."""
        assert self.state is None, "the match has already started"
        self.timebase = Timebase(now, wall_us)
        self.state = GAMES[self.game].new_match(self.settings, self.seed)
        out: list[Output] = [OpenLog(self.header())]
        for seat in self.seats:
            self._send_start(seat, out, resumed=False)
        self._advance(now, out)
        return out

    def reply(self, seat: int, action: pb.GameAction, now: float) -> list[Output]:
        """The seat answered its open request with ``action`` (routed to it by the request's
        id): taken if legal, else rejected, the request asked again within the same clock,
        and the timeout policy applied at the last rejection.  A reply read at or after the
        request's deadline is late, whatever it says: the timeout policy applies."""
        record = self.seats[seat]
        request = record.request
        assert request is not None and self.state is not None, "no request of that seat is open"
        out: list[Output] = []
        if now >= request.started + record.clock.budget_seconds():
            # Read after its clock ran out (a busy loop ran this reply's turn before its
            # timer's): late, as it would be had the timer come first — the timeout policy
            # applies, and the bot hears what a late answer hears.
            self._settle(record, None, now, out)
            late = messages.unknown_request_error(request.request_id)
            self._send(record, late.SerializeToString(), out)
            return out
        asked = Asked(request.request_id, self.id, seat, self.game, self.state, request.attempt)
        try:
            taken = verify_action(asked, action)
        except RejectedReply as rejected:
            metrics.REJECTIONS.labels(pb.RejectCode.Name(rejected.code)).inc()
            request.rejections += 1
            record.illegal_moves += 1
            request.step.rejected.append(
                log_pb2.RejectedAttempt(
                    action=_known_fields_of(action),
                    code=rejected.code,
                    message=rejected.reason,
                    at_us=self._wall(now),
                )
            )
            self._send(record, rejected.answer.SerializeToString(), out)
            if request.rejections >= MAX_REJECTIONS:
                self._settle(record, None, now, out)
            else:
                request.attempt = request.rejections + 1
                self._send_request(record, now, out)
            return out
        self._settle(record, taken, now, out)
        return out

    def deadline_passed(self, now: float) -> list[Output]:
        """The driver's timer fired: the open request's seat gets its timeout policy if its
        clock ran out by ``now`` (a timer that fires early or late for a request already
        settled changes nothing)."""
        out: list[Output] = []
        deadline = self.deadline
        if deadline is None or now < deadline:
            return out
        state = self.state
        assert state is not None and state.to_act is not None
        self._settle(self.seats[state.to_act], None, now, out)
        return out

    def forfeit(self, seat: int, reason: str, now: float, *, crashed: bool = False) -> list[Output]:
        """The seat's bot cannot play on (its process ended, a limit killed it: ``crashed``,
        which the seat's result counts): the seat is forfeited now, with ``reason``, its open
        request ends at once, and a default player finishes it."""
        record = self.seats[seat]
        out: list[Output] = []
        if self.over:
            return out
        if crashed:
            record.crashes += 1
        if record.clock.forfeited:
            return out
        record.clock.forfeit(reason)
        metrics.FORFEITS.labels(metrics.ForfeitCause.BOT_GONE).inc()
        log.info("%s: seat %d (%s) forfeits: %s", self.id, seat, record.bot, reason)
        if record.request is not None:
            self._settle(record, None, now, out)
        return out

    def watch(self, omniscient: bool, delay_steps: int, push: Push) -> Watcher:
        """A spectator joins (``push`` takes its updates without blocking)."""
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

    def end(
        self, status: MatchStatus, reason: str, results: list[SeatRecord], *, sealed: bool
    ) -> list[Output]:
        """The match is over (finished, or failed: ``reason``) and recorded: the spectators
        and every connected seat are told, with the seed and salt unless the deal is
        ``sealed`` (another match dealt from the same seed is not over)."""
        self.over = True
        out: list[Output] = []
        number = STATUS_NUMBERS[status]
        seat_results = [result_message(r) for r in results]
        self.audience.close(
            pb.WatchUpdate(
                end=pb.WatchEnd(status=number, seats=seat_results, reason=reason, steps=self.steps)
            ),
            self.steps,
        )
        for seat in self.seats:
            if not seat.connected:
                continue
            ended = pb.MatchEnded(
                match_id=self.id,
                seat=seat.number,
                status=number,
                seats=seat_results,
                reason=reason,
                seed=0 if sealed else self.seed,
                deal_salt=b"" if sealed else self.deal_salt,
                deal_sealed=sealed,
            )
            out.append(Send(seat.number, outgoing.match_ended(ended, seat.take_unsent())))
        return out

    # ---- one decision -------------------------------------------------------------------

    def _advance(self, now: float, out: list[Output]) -> None:
        """Hand out the new events and ask the seat to act (a forfeited seat's default player
        acts at once), until a request is open or the match is over."""
        state = self.state
        assert state is not None
        while not state.is_over:
            self._hand_out_events(out)
            to_act = state.to_act
            assert to_act is not None
            seat = self.seats[to_act]
            question = self.encoder.question(state.observation(to_act), state.legal_actions())
            step = log_pb2.LogStep(seat=to_act, requested_at_us=self._wall(now))
            if seat.clock.forfeited:
                self._substitute(seat, step, "forfeited seat: the default player acts")
                self._apply(state.default_action(), step, question, out)
                continue
            step.request_id = request_id = self._new_request_id()
            seat.request = OpenRequest(
                request_id,
                outgoing.request_head(request_id, self.id, to_act),
                question,
                now,
                step,
            )
            out.append(RequestOpened(to_act, request_id))
            out.append(SetTimer(now + seat.clock.budget_seconds()))
            self._send_request(seat, now, out)
            return
        self._hand_out_events(out)
        out.append(SetTimer(None))
        out.append(Finished(self._ranked(state.outcome)))

    def _settle(self, seat: Seat, action: Action | None, now: float, out: list[Output]) -> None:
        """The open request of ``seat`` ends: with the legal ``action``, or none (the clock,
        the last rejection or a forfeit ended it): the seat's clock is charged, the step
        logged and applied, and the match goes on."""
        request, state = seat.request, self.state
        assert request is not None and state is not None
        seat.request = None
        out.append(RequestClosed(request.request_id))
        used = now - request.started
        self._decision_seconds.observe(used)
        seat.clock.charge(used)
        step = request.step
        step.used_us = int(used * 1_000_000)
        step.bank_left_us = int(seat.clock.bank_ms * 1000)
        if action is not None:
            step.answered_at_us = self._wall(now)
        elif seat.clock.forfeited:  # forfeited while it was asked (its bot is gone)
            self._substitute(seat, step, f"forfeited seat: {seat.clock.forfeit_reason}")
            action = state.default_action()
        else:
            self._substitute(seat, step, self._time_out(seat, request.rejections, out))
            action = state.default_action()
        self._apply(action, step, request.question, out)
        self._advance(now, out)

    def _apply(
        self, action: Action, step: log_pb2.LogStep, question: bytes, out: list[Output]
    ) -> None:
        assert self.state is not None
        self.state.apply(action)
        step.step = self.steps
        out.append(AppendLog(outgoing.log_step(step, question, self.encoder.action(action))))
        self.steps += 1
        self._decisions[metrics.DecisionSource.of(step.substituted)].inc()

    def _time_out(self, seat: Seat, rejections: int, out: list[Output]) -> str:
        """Apply the timeout policy to a seat that gave no legal answer; returns why the
        default action is played."""
        clock = seat.clock
        if rejections >= MAX_REJECTIONS:
            reason = f"{MAX_REJECTIONS} rejected actions for one request"
        else:
            reason = f"no legal action within {clock.settings.move_ms} ms + bank"
            metrics.TIMEOUTS.labels(self.game).inc()
        if not clock.time_out(reason):
            return reason
        metrics.FORFEITS.labels(metrics.forfeit_cause(rejections >= MAX_REJECTIONS)).inc()
        log.info("%s: seat %d (%s) forfeits: %s", self.id, seat.number, seat.bot, reason)
        forfeited = messages.error(
            pb.ERROR_CODE_FORFEITED,
            f"seat {seat.number} forfeited match {self.id}: {reason}; "
            "a default player finishes the seat",
            match_id=self.id,
        )
        self._send(seat, forfeited.SerializeToString(), out)
        return reason + "; the seat forfeits"

    @staticmethod
    def _substitute(seat: Seat, step: log_pb2.LogStep, reason: str) -> None:
        """The referee plays the game's default action for the seat."""
        seat.clock.defaults_played += 1
        step.substituted = True
        step.substitution_reason = reason

    # ---- what seats are sent ------------------------------------------------------------

    @staticmethod
    def _send(seat: Seat, data: bytes, out: list[Output]) -> None:
        if seat.connected:  # a seat without one waits for its bot to come back
            out.append(Send(seat.number, data))

    def _send_request(self, seat: Seat, now: float, out: list[Output]) -> None:
        """Send the open request with the clock as it stands at ``now`` (what is left of the
        move time and of the bank) and the events the seat was not sent yet."""
        request = seat.request
        assert request is not None
        if not seat.connected:
            return
        clock = seat.clock
        elapsed_ms = (now - request.started) * 1000
        move_left = max(0.0, clock.settings.move_ms - elapsed_ms)
        bank_left = clock.bank_ms - max(0.0, elapsed_ms - clock.settings.move_ms)
        out.append(
            Send(
                seat.number,
                outgoing.action_request(
                    request.head,
                    request.question,
                    int(move_left),
                    max(0, int(bank_left)),
                    request.attempt,
                    seat.take_unsent(),
                ),
            )
        )

    def _send_start(self, seat: Seat, out: list[Output], *, resumed: bool) -> None:
        started = messages.match_started(
            self.id,
            self.game,
            self.settings,
            seat.number,
            self.seat_infos(),
            clock_message(self.clock_settings),
            resumed=resumed,
            deal_commitment=self.deal_commitment,
        )
        self._send(seat, started.SerializeToString(), out)

    def _hand_out_events(self, out: list[Output]) -> None:
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
        out.append(AppendLog(outgoing.log_events_entry(batch)))
        self.audience.publish(batch, self.steps, self.steps)
        for seat in self.seats:
            mask = 1 << seat.number
            visible = [data for _, audience, data in encoded if audience & mask]
            if visible:
                self._hand_to(seat, visible, out)

    def _hand_to(self, seat: Seat, events: list[bytes], out: list[Output]) -> None:
        if not seat.connected:
            return  # a seat that comes back is given its whole history
        if seat.live_events:
            out.append(Send(seat.number, outgoing.event_batch(self.id, seat.number, events)))
        else:
            seat.unsent.extend(events)

    def _send_history(self, seat: Seat, out: list[Output]) -> None:
        """A resumed seat's whole event history, so it can rebuild what it missed: sent at
        once with live events, else carried by its next message."""
        seat.unsent = []
        mask = 1 << seat.number
        history = [data for audience, data in self.events if audience & mask]
        if history:
            self._hand_to(seat, history, out)

    # ---- the end ------------------------------------------------------------------------

    def _ranked(self, outcome: Outcome | None) -> list[SeatRecord]:
        assert outcome is not None
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

    def _wall(self, now: float) -> int:
        assert self.timebase is not None, "the match has not started"
        return self.timebase.wall(now)


def _known_fields_of(action: pb.GameAction) -> pb.GameAction:
    """A bot's action as the log keeps it: without the fields ``bisca.v1`` does not define (a
    newer SDK's, a hostile bot's), which a log may not carry (``bisca replay verify`` refuses
    a record with fields it cannot check)."""
    known = pb.GameAction()
    known.CopyFrom(action)
    known.DiscardUnknownFields()
    return known


def seat_record_of(result: pb.SeatResult, bot_version: str) -> SeatRecord:
    """A seat's result as a log's footer (or a ``MatchEnded``) says it: the inverse of
    :func:`result_message`, the version given apart (the footer does not repeat it)."""
    return SeatRecord(
        seat=result.seat,
        bot_name=result.bot_name,
        bot_version=bot_version,
        score=result.score,
        rank=result.rank,
        end=SeatEnd.FORFEITED if result.end == pb.SEAT_END_FORFEITED else SeatEnd.COMPLETED,
        forfeit_reason=result.forfeit_reason,
        timeouts=result.timeouts,
        defaults_played=result.defaults_played,
        crashes=result.crashes,
        illegal_moves=result.illegal_moves,
    )


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
