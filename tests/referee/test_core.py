"""The match core (``_core.py``) driven directly: no sockets, no framework, time a number.

Each test plays a seeded one-deal Belote match by feeding the core events with ``now`` and
reading what it says to do, one rule of the referee at a time.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from bisca import wire
from bisca.engine import GAMES
from bisca.engine.belote import Suit, Take
from bisca.server.logs import LogWriter, read_log, verify
from bisca.server.records import MatchStatus, SeatEnd
from bisca.server.referee import MAX_REJECTIONS, MatchCore, clock_settings
from bisca.server.referee._core import (
    AppendLog,
    Finished,
    OpenLog,
    Output,
    RequestClosed,
    RequestOpened,
    Send,
    SetTimer,
)
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

SETTINGS = GAMES["belote"].settings({"deals": 1})
SALT = bytes(range(16))


class Table:
    """A core and everything it said, seat by seat."""

    def __init__(self, policy: str = "default", *, move_ms: int = 1_000, bank_ms: int = 2_000):
        ids = itertools.count(1)
        self.core = MatchCore(
            match_id="m-core",
            game="belote",
            settings=SETTINGS,
            seed=11,
            bots=["a", "b", "c", "d"],
            clock=clock_settings(move_ms, bank_ms, policy),
            deal_salt=SALT,
            new_request_id=lambda: f"r{next(ids)}",
        )
        self.sent: dict[int, list[pb.ServerMessage]] = {seat: [] for seat in range(4)}
        self.log: list[log_pb2.LogEntry] = []
        self.timer: float | None = None
        self.open: dict[str, int] = {}
        self.finished: Finished | None = None
        self.now = 128.0  # (times in binary fractions: exact)

    def connect(self, seat: int, *, live_events: bool = False) -> None:
        self.take(
            self.core.seat_connected(seat, live_events=live_events, bot_version="1", now=self.now)
        )

    def start(self, *, live: frozenset[int] = frozenset()) -> None:
        for seat in range(4):
            self.connect(seat, live_events=seat in live)
        self.take(self.core.start(self.now, 1_700_000_000_000_000))

    def take(self, outputs: list[Output]) -> list[Output]:
        for output in outputs:
            if isinstance(output, Send):
                self.sent[output.seat].append(pb.ServerMessage.FromString(output.data))
            elif isinstance(output, OpenLog):
                self.log.append(log_pb2.LogEntry(header=output.header))
            elif isinstance(output, AppendLog):
                self.log.append(log_pb2.LogEntry.FromString(output.entry))
            elif isinstance(output, SetTimer):
                self.timer = output.at
            elif isinstance(output, RequestOpened):
                self.open[output.request_id] = output.seat
            elif isinstance(output, RequestClosed):
                del self.open[output.request_id]
            elif isinstance(output, Finished):
                self.finished = output
        return outputs

    @property
    def to_act(self) -> int:
        [seat] = self.open.values()
        return seat

    def last(self, seat: int, kind: str) -> pb.ServerMessage:
        messages = [m for m in self.sent[seat] if m.WhichOneof("kind") == kind]
        assert messages, f"seat {seat} was sent no {kind}: {self.sent[seat]}"
        return messages[-1]

    def request(self) -> pb.ActionRequest:
        request: pb.ActionRequest = self.last(self.to_act, "action_request").action_request
        return request

    def answer(self, after: float = 0.125, pick: int = 0) -> list[Output]:
        """The seat to act answers its request's ``pick``-th legal action ``after`` seconds."""
        request = self.request()
        self.now += after
        return self.take(self.core.reply(self.to_act, request.legal_actions[pick], self.now))

    def play_out(self) -> None:
        while self.finished is None:
            self.answer()

    def completed_log(self, folder: Path) -> Path:
        """The finished match's log: the core's entries and its footer, in a file."""
        assert self.finished is not None
        path = folder / "m.binlog"
        writer = LogWriter(path, None)
        for entry in self.log:
            writer.write_entry(entry.SerializeToString(deterministic=True))
        ended_at = 1_700_000_001_000_000
        writer.complete(self.core.footer(MatchStatus.FINISHED, "", self.finished.results, ended_at))
        return path

    def steps(self) -> list[log_pb2.LogStep]:
        return [e.step for e in self.log if e.WhichOneof("kind") == "step"]


def test_a_match_is_dealt_committed_to_asked_played_and_revealed() -> None:
    table = Table()
    table.start()
    header = table.log[0].header
    assert header.deal_commitment == wire.deal_commitment(SALT, 11, "m-core")
    assert header.seed == 11 and header.started_at_us == 1_700_000_000_000_000
    for seat in range(4):
        started = table.sent[seat][0].match_started
        assert (started.seat, started.resumed) == (seat, False)
        assert started.deal_commitment == header.deal_commitment
    request = table.request()
    assert (request.clock.move_ms, request.clock.bank_ms, request.attempt) == (1_000, 2_000, 1)
    assert table.timer == pytest.approx(table.now + 3.0)  # move + bank
    table.play_out()
    assert table.open == {} and table.timer is None
    assert table.finished is not None
    results = table.finished.results
    assert all(r.end is SeatEnd.COMPLETED and r.defaults_played == 0 for r in results)
    steps = table.steps()
    assert [s.step for s in steps] == list(range(table.core.steps))
    assert not any(s.substituted for s in steps)

    ended = table.take(table.core.end(MatchStatus.FINISHED, "", results, sealed=False))
    assert len(ended) == 4
    end = table.last(0, "match_ended").match_ended
    assert (end.seed, end.deal_salt, end.deal_sealed) == (11, SALT, False)
    assert wire.deal_commitment(end.deal_salt, end.seed, "m-core") == header.deal_commitment


def test_a_sealed_deal_keeps_the_seed_and_salt_back() -> None:
    table = Table()
    table.start()
    table.play_out()
    assert table.finished is not None
    table.take(table.core.end(MatchStatus.FINISHED, "", table.finished.results, sealed=True))
    end = table.last(2, "match_ended").match_ended
    assert (end.seed, end.deal_salt, end.deal_sealed) == (0, b"", True)


def test_the_same_events_give_the_same_log_bytes() -> None:
    """The core is deterministic: two tables fed the same events with the same times write
    the same log (what lets the referee's log be compared to a golden one)."""
    logs = []
    for _ in range(2):
        table = Table()
        table.start()
        table.play_out()
        logs.append([entry.SerializeToString(deterministic=True) for entry in table.log])
    assert logs[0] == logs[1]


def test_rejected_actions_are_answered_and_asked_again_then_the_default_is_played() -> None:
    table = Table()
    table.start()
    seat = table.to_act
    request = table.request()
    # No action at all: malformed, three times.
    malformed = pb.GameAction()
    for attempt in range(1, MAX_REJECTIONS + 1):
        table.now += 0.125
        table.take(table.core.reply(seat, malformed, table.now))
        rejected = table.last(seat, "action_rejected").action_rejected
        assert rejected.code == pb.REJECT_CODE_MALFORMED_ACTION
        assert rejected.attempts_left == MAX_REJECTIONS - attempt
        if attempt < MAX_REJECTIONS:
            again = table.request()
            assert again.attempt == attempt + 1
            assert again.request_id == request.request_id
            assert again.clock.move_ms == 1_000 - 125 * attempt
    assert table.core.seats[seat].illegal_moves == MAX_REJECTIONS
    [step] = table.steps()
    assert step.substituted
    assert step.substitution_reason == f"{MAX_REJECTIONS} rejected actions for one request"
    assert [r.code for r in step.rejected] == [pb.REJECT_CODE_MALFORMED_ACTION] * 3
    assert table.core.seats[seat].clock.timeouts == 1


def test_a_rejected_action_is_logged_without_fields_the_protocol_does_not_define(
    tmp_path: Path,
) -> None:
    """A bot's action with a field ``bisca.v1`` does not have (a newer SDK's, a hostile
    bot's) is rejected, and logged without it: a log may carry no field the verifier cannot
    check, so kept as sent it would make the whole match unverifiable."""
    table = Table()
    table.start()
    seat = table.to_act
    unknown = pb.GameAction.FromString(b"\x98\x06\x01")  # field 99, a varint: no such field
    assert unknown.SerializeToString() == b"\x98\x06\x01"  # kept by the parser, as sent
    table.now += 0.125
    table.take(table.core.reply(seat, unknown, table.now))
    rejected = table.last(seat, "action_rejected").action_rejected
    assert rejected.code == pb.REJECT_CODE_MALFORMED_ACTION
    table.play_out()
    assert table.finished is not None
    [logged] = table.steps()[0].rejected
    assert logged.action == pb.GameAction() and logged.code == pb.REJECT_CODE_MALFORMED_ACTION
    path = table.completed_log(tmp_path)
    verdict = verify(path)
    assert verdict.ok, verdict.lines()


def test_an_illegal_action_may_be_corrected_within_the_same_clock() -> None:
    table = Table()
    table.start()
    seat = table.to_act
    # The first bid may take only the turned card's suit (seed 11 turns a diamond).
    taken_in_clubs = wire.encode_game_action("belote", Take(suit=Suit.CLUBS))
    table.now += 0.25
    table.take(table.core.reply(seat, taken_in_clubs, table.now))
    rejected = table.last(seat, "action_rejected").action_rejected
    assert (rejected.code, rejected.attempts_left) == (pb.REJECT_CODE_ILLEGAL_ACTION, 2)
    assert table.request().attempt == 2
    table.answer(after=0.125)
    [step] = table.steps()
    assert not step.substituted and len(step.rejected) == 1
    assert step.used_us == 375_000
    assert table.core.seats[seat].illegal_moves == 1


def test_the_clock_charges_the_bank_and_times_out_on_the_deadline() -> None:
    table = Table(move_ms=1_000, bank_ms=2_000)
    table.start()
    seat = table.to_act
    table.answer(after=1.5)  # 500 ms over the move time: drawn from the bank
    assert table.core.seats[seat].clock.bank_ms == pytest.approx(1_500)
    [step] = table.steps()
    assert step.bank_left_us == 1_500_000

    waiting = table.to_act
    deadline = table.timer
    assert deadline == pytest.approx(table.now + 3.0)
    assert table.take(table.core.deadline_passed(deadline - 0.001)) == []  # early: nothing
    table.now = deadline
    table.take(table.core.deadline_passed(deadline))
    late = table.steps()[-1]
    assert late.seat == waiting and late.substituted
    assert late.substitution_reason == "no legal action within 1000 ms + bank"
    assert table.core.seats[waiting].clock.timeouts == 1
    assert table.core.seats[waiting].clock.bank_ms == 0
    assert not table.core.seats[waiting].clock.forfeited  # the default policy plays on


@pytest.mark.parametrize("late_by", [-1 / 1024, 0.0, 0.5], ids=["in-time", "on-it", "after"])
def test_a_reply_read_at_or_after_its_deadline_is_late_whatever_it_says(late_by: float) -> None:
    """On a busy loop a reply's turn may come before its timer's: read at or after the
    deadline, the reply is what it would be after the timer, late — the policy applies, its
    action is not played, and the bot hears that its answer was discarded."""
    table = Table("forfeit", move_ms=100, bank_ms=0)
    table.start()
    seat = table.to_act
    assert table.timer is not None
    assert table.core.state is not None
    default = wire.encode_game_action("belote", table.core.state.default_action())
    legal = next(a for a in table.request().legal_actions if a != default)
    table.now = table.timer + late_by
    table.take(table.core.reply(seat, legal, table.now))
    [step] = table.steps()
    clock = table.core.seats[seat].clock
    if late_by < 0:
        assert not step.substituted and not clock.forfeited
        assert [m.WhichOneof("kind") for m in table.sent[seat]][-1] == "action_request"
        return
    assert step.substituted and clock.forfeited and clock.timeouts == 1
    assert step.substitution_reason == "no legal action within 100 ms + bank; the seat forfeits"
    assert step.action == default
    late = table.last(seat, "error").error
    assert late.code == pb.ERROR_CODE_UNKNOWN_REQUEST and late.request_id == step.request_id
    assert table.to_act != seat  # the match went on to the next seat


def test_a_stale_timer_changes_nothing() -> None:
    table = Table()
    table.start()
    first_deadline = table.timer
    assert first_deadline is not None
    table.answer(after=0.5)
    assert table.take(table.core.deadline_passed(first_deadline)) == []
    assert len(table.steps()) == 1


def test_the_forfeit_policy_forfeits_at_the_first_timeout_and_plays_the_seat_by_default() -> None:
    table = Table("forfeit", move_ms=100, bank_ms=0)
    table.start()
    seat = table.to_act
    assert table.timer is not None
    table.now = table.timer
    table.take(table.core.deadline_passed(table.now))
    error = table.last(seat, "error").error
    assert error.code == pb.ERROR_CODE_FORFEITED and "a default player finishes" in error.message
    table.play_out()
    assert table.finished is not None
    record = table.finished.results[seat]
    assert record.end is SeatEnd.FORFEITED
    assert record.rank == max(r.rank for r in table.finished.results)  # last
    seat_steps = [s for s in table.steps() if s.seat == seat]
    assert all(s.substituted for s in seat_steps)
    assert all(
        s.substitution_reason == "forfeited seat: the default player acts" for s in seat_steps[1:]
    )
    assert len([m for m in table.sent[seat] if m.WhichOneof("kind") == "action_request"]) == 1


def test_strikes_default_until_the_nth_timeout() -> None:
    table = Table("strikes:2", move_ms=100, bank_ms=0)
    table.start()
    seat = table.to_act
    clock = table.core.seats[seat].clock
    while clock.timeouts < 2:
        if table.to_act == seat:
            assert table.timer is not None
            table.now = table.timer
            table.take(table.core.deadline_passed(table.now))
        else:
            table.answer()
    assert clock.forfeited and clock.defaults_played == 2
    [forfeiting] = [
        s for s in table.steps() if s.seat == seat and s.substitution_reason.endswith("forfeits")
    ]
    assert (
        forfeiting.substitution_reason == "no legal action within 100 ms + bank; the seat forfeits"
    )


def test_events_go_live_or_inside_the_next_message() -> None:
    table = Table()
    table.start(live=frozenset({0}))
    table.play_out()
    assert table.finished is not None
    live = [m for m in table.sent[0] if m.WhichOneof("kind") == "events"]
    carried = [m for m in table.sent[1] if m.WhichOneof("kind") == "events"]
    assert live and not carried
    live_count = sum(len(m.events.events) for m in live)
    carried_count = sum(
        len(m.action_request.events)
        for m in table.sent[1]
        if m.WhichOneof("kind") == "action_request"
    )
    table.take(table.core.end(MatchStatus.FINISHED, "", table.finished.results, sealed=False))
    carried_count += len(table.last(1, "match_ended").match_ended.events)
    assert carried_count == live_count  # the same events, one way or the other


def test_a_seat_that_comes_back_gets_the_match_its_history_and_the_open_request() -> None:
    table = Table()
    table.start()
    table.answer()
    seat = table.to_act
    table.core.seat_disconnected(seat)
    before = len(table.sent[seat])
    table.now += 0.25
    assert table.core.deadline_passed(table.now) == []
    assert len(table.sent[seat]) == before  # nothing goes to a seat without a connection
    table.now += 0.125
    table.connect(seat, live_events=False)
    resumed = table.sent[seat][before:]
    assert [m.WhichOneof("kind") for m in resumed] == ["match_started", "action_request"]
    assert resumed[0].match_started.resumed
    request = resumed[1].action_request
    assert request.clock.move_ms == 625  # the clock never stopped for it
    history = [data for audience, data in table.core.events if audience >> seat & 1]
    assert [e.SerializeToString() for e in request.events] == history
    table.play_out()


def test_a_bot_gone_forfeits_its_open_request_at_once() -> None:
    table = Table()
    table.start()
    seat = table.to_act
    table.now += 0.25
    table.take(table.core.forfeit(seat, "its bot process ended", table.now, crashed=True))
    [step] = table.steps()
    assert step.substituted and step.substitution_reason == "forfeited seat: its bot process ended"
    assert step.used_us == 250_000
    assert table.core.seats[seat].crashes == 1
    table.take(table.core.forfeit(seat, "again", table.now, crashed=True))  # counted, once
    assert table.core.seats[seat].crashes == 2
    assert table.core.seats[seat].clock.forfeit_reason == "its bot process ended"


def test_spectators_see_the_match_as_it_is_played() -> None:
    table = Table()
    table.start()
    table.answer()
    updates: list[pb.WatchUpdate | None] = []
    watcher = table.core.watch(True, 0, updates.append)
    table.play_out()
    assert table.finished is not None
    table.take(table.core.end(MatchStatus.FINISHED, "", table.finished.results, sealed=False))
    kinds = [None if u is None else u.WhichOneof("kind") for u in updates]
    assert kinds[0] == "start" and kinds[-2:] == ["end", None] and "events" in kinds
    assert updates[-2] is not None and updates[-2].end.steps == table.core.steps
    table.core.unwatch(watcher)


def test_the_log_the_core_writes_reads_back(tmp_path: Path) -> None:
    """The core's entries are a log the readers take (header, events, steps, footer)."""
    table = Table()
    table.start()
    table.play_out()
    assert table.finished is not None
    path = table.completed_log(tmp_path)
    read = read_log(path)
    assert read.header is not None and read.header.match_id == "m-core"
    assert read.footer is not None and read.footer.steps == table.core.steps
