"""The SDK against a server that misbehaves: text with terminal escape sequences in it, a
Welcome followed at once by a dropped stream, a stream that never says Welcome, a request with
no legal action, matches that never end, a storm of rejections, requests for a match or a seat
the bot was not given.  Each is the server's fault, and none may hang the bot, drive the
author's terminal, grow its memory or its work without end, or be blamed on the bot's code."""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from bisca import wire
from bisca.client import (
    Backoff,
    BotCrashed,
    BotRejected,
    ConnectionLost,
    Request,
    Session,
    _kept,
    _session,
    run,
)
from bisca.client._deal import KEPT_EVENTS, MAX_KEPT_EVENT_BYTES
from bisca.client._session import MAX_MATCHES
from bisca.client._text import printable
from bisca.client.bots import make_bot
from bisca.client.cli import main as bot_command
from bisca.engine import new_match
from bisca.v1 import arena_pb2

from .fake_server import FakeArena, serve, socket_address, welcome
from .support import action_request, belote_started, through_wire

STATE = new_match("belote", seed=1)

#: Sets the window title, clears the screen, turns the text red; then the same in 8-bit C1
#: forms (CSI, OSC ... ST), a bell, a backspace and DEL.
ESCAPES = (
    "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[1;31mSERVER-RED\x1b[0m\x9b2J\x9d0;C1-TITLE\x9c\x07\x08\x7f"
)


def clean(text: str) -> bool:
    """No control character but newline and tab in ``text``."""
    return not any((ord(ch) < 0x20 and ch not in "\n\t") or 0x7F <= ord(ch) <= 0x9F for ch in text)


@contextlib.contextmanager
def served(tmp_path: Path, script: Any) -> Iterator[tuple[FakeArena, str]]:
    """A fake arena playing ``script`` on every stream, and its address; stopped at the end."""
    fake = FakeArena(script)
    address = socket_address(tmp_path)
    server = serve(fake, address)
    try:
        yield fake, address
    finally:
        server.stop(None)


def play(address: str, **options: Any) -> None:
    """A random Belote bot of the SDK against ``address``, to the end of ``run``."""
    run(make_bot("belote", "random"), address=address, token="t", name="b", **options)


def first_legal(request: Request[Any, Any]) -> Any:
    return request.legal_actions[0]


def recording_session() -> tuple[Session, list[Request[Any, Any]]]:
    """A session, said hello, whose bot keeps every request it is asked and plays the first
    legal action; and the requests it was asked."""
    asked: list[Request[Any, Any]] = []

    def bot(request: Request[Any, Any]) -> Any:
        asked.append(request)
        return request.legal_actions[0]

    session = Session(bot, token="t", name="b")
    session.hello()
    return session, asked


# ---- finding 7: a request with no legal action -----------------------------------------------


def test_a_request_without_legal_actions_is_logged_as_the_servers_fault_not_a_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session, asked = recording_session()  # (its bot would raise IndexError if asked)
    message = arena_pb2.ServerMessage()
    message.CopyFrom(action_request(STATE, "r-empty", "m-empty"))
    del message.action_request.legal_actions[:]
    caplog.set_level(logging.ERROR, logger="bisca.client")
    assert session.handle(through_wire(message)) == []
    assert asked == []
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    text = record.getMessage()
    assert "request r-empty of match m-empty" in text and "no legal actions" in text
    # The session goes on: the next, well-formed request is answered.
    assert len(session.handle(action_request(STATE, "r2", "m-empty"))) == 1
    assert [request.request_id for request in asked] == ["r2"]


# ---- finding 2: escape sequences in server text ----------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "plain text, with a newline\nand\ta tab",
        ESCAPES,
        "\x1b[38;5;196mred\x1b[m \x1b]52;c;Y2xpcGJvYXJk\x1b\\ clipboard \x1bc reset",
        "\x1bP1$r dcs \x1b\\ \x1b(B \x00\x01\x1f \u202e bidi stays (printable)",
        "\x1b",
        "\x9b",
    ],
)
def test_printable_leaves_no_control_character(text: str) -> None:
    """The SDK's ``printable`` is the server's rule (``bisca.wire.printable``)."""
    assert clean(printable(text))


def test_server_text_in_log_lines_and_exceptions_has_no_escape_sequences(
    caplog: pytest.LogCaptureFixture,
) -> None:
    starts: list[Any] = []
    session = Session(first_legal, token="t", name="b", on_match_start=starts.append)
    session.hello()
    caplog.set_level(logging.DEBUG, logger="bisca.client")
    bad = f"x{ESCAPES}y"
    messages = [
        arena_pb2.ServerMessage(
            welcome=arena_pb2.Welcome(
                protocol_version=1, bot_name=bad, server_version=bad, connection_id=bad
            )
        ),
        arena_pb2.ServerMessage(
            match_started=arena_pb2.MatchStarted(
                match_id=bad,
                game=arena_pb2.GAME_BELOTE,
                seat=0,
                seats=[arena_pb2.SeatInfo(seat=n, bot_name=bad) for n in range(4)],
            )
        ),
        arena_pb2.ServerMessage(
            match_started=arena_pb2.MatchStarted(match_id=bad, game=99, seat=0)
        ),
        action_request(STATE, bad, bad),
        arena_pb2.ServerMessage(
            action_rejected=arena_pb2.ActionRejected(
                request_id=bad,
                match_id=bad,
                seat=STATE.to_act,
                code=arena_pb2.REJECT_CODE_ILLEGAL_ACTION,
                message=bad,
                attempts_left=1,
            )
        ),
        arena_pb2.ServerMessage(
            error=arena_pb2.Error(
                code=arena_pb2.ERROR_CODE_UNKNOWN_REQUEST, message=bad, match_id=bad, request_id=bad
            )
        ),
        arena_pb2.ServerMessage(
            match_ended=arena_pb2.MatchEnded(
                match_id=bad, seat=0, status=arena_pb2.MATCH_STATUS_FAILED, reason=bad
            )
        ),
    ]
    for message in messages:
        session.handle(through_wire(message))
    with pytest.raises(BotRejected) as raised:
        session.handle(
            arena_pb2.ServerMessage(
                error=arena_pb2.Error(
                    code=arena_pb2.ERROR_CODE_UNKNOWN_TOKEN, message=bad, fatal=True
                )
            )
        )
    logged = [record.getMessage() for record in caplog.records]
    assert len(logged) >= len(messages) + 1
    # Every message's line shows the text, cleaned (the title's OSC goes with its sequence).
    assert sum("xSERVER-REDy" in line for line in logged) >= len(messages) + 1
    for line in logged:
        assert clean(line), repr(line)
    assert clean(str(raised.value)) and "xSERVER-REDy" in str(raised.value)
    # The raw values stay for the code that asks for them.
    assert raised.value.message == bad
    assert [start.match_id for start in starts] == [bad]


def test_a_crash_report_names_the_request_without_its_escape_sequences(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def crashing(request: Request[Any, Any]) -> Any:
        raise KeyError(request.match_id)

    session = Session(crashing, token="t", name="b")
    session.hello()
    with pytest.raises(BotCrashed) as raised:
        session.handle(action_request(STATE, f"r{ESCAPES}", f"m{ESCAPES}"))
    err = capsys.readouterr().err
    assert "rSERVER-RED" in err and "KeyError" in err
    assert clean(err), repr(err)
    assert clean(str(raised.value))


def test_grpc_status_details_reach_neither_the_log_nor_the_exception_raw(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def drop(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        context.abort(grpc.StatusCode.UNAVAILABLE, f"going away{ESCAPES}")
        yield welcome()  # never reached: a generator all the same

    caplog.set_level(logging.WARNING, logger="bisca.client")
    with served(tmp_path, drop) as (_, address), pytest.raises(ConnectionLost) as raised:
        play(
            address,
            backoff=Backoff(initial=0.01, maximum=0.05, budget=0.3),
        )
    warnings = [record.getMessage() for record in caplog.records]
    assert any("going away" in line for line in warnings)
    for line in warnings:
        assert clean(line), repr(line)
    assert "going awaySERVER-RED" in str(raised.value) and clean(str(raised.value))


def test_the_bot_commands_last_line_has_no_escape_sequences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def deny(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        context.abort(grpc.StatusCode.PERMISSION_DENIED, f"denied{ESCAPES}")
        yield welcome()

    with served(tmp_path, deny) as (_, address):
        status = bot_command(["bot", "random", "--address", address, "--token", "t"])
    err = capsys.readouterr().err
    assert status == 1
    assert "bisca bot: connection to" in err and "deniedSERVER-RED" in err
    assert clean(err), repr(err)


def test_the_bot_commands_last_line_on_a_fatal_error_has_no_escape_sequences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield arena_pb2.ServerMessage(
            error=arena_pb2.Error(
                code=arena_pb2.ERROR_CODE_UNKNOWN_TOKEN, message=f"fatal{ESCAPES}", fatal=True
            )
        )

    with served(tmp_path, refuse) as (_, address):
        status = bot_command(["bot", "random", "--address", address, "--token", "t"])
    err = capsys.readouterr().err
    assert status == 1
    assert "the server refused the bot: ERROR_CODE_UNKNOWN_TOKEN: fatalSERVER-RED" in err
    assert clean(err), repr(err)


# ---- finding 4: welcomed, then dropped, again and again --------------------------------------

#: Enough connections that a bot reconnecting at its first delay forever reaches it in a few
#: seconds; a bot whose budget runs out stops long before.
WELCOME_DROP_LIMIT = 200


def test_a_server_that_welcomes_and_drops_at_once_runs_the_backoff_budget_out(
    tmp_path: Path,
) -> None:
    def welcome_and_drop(
        fake: FakeArena, number: int, requests: Any, context: Any
    ) -> Iterator[Any]:
        yield welcome()
        if number < WELCOME_DROP_LIMIT:
            context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        # else: end the stream cleanly, so that a bot that never gives up returns from run()
        # (and fails the test) rather than loop forever.

    with (
        served(tmp_path, welcome_and_drop) as (fake, address),
        pytest.raises(ConnectionLost, match=r"welcomed the bot and then dropped") as raised,
    ):
        play(
            address,
            backoff=Backoff(initial=0.01, maximum=0.05, budget=0.5, stable=60.0),
        )
    assert "within 0.5 s" in str(raised.value)
    # 0.01 + 0.02 + 0.04 + 0.05 * n <= 0.5: about ten connections, however slow the machine.
    assert 2 <= len(fake.hellos) <= 20


def test_a_connection_that_stayed_up_resets_the_backoff_budget(tmp_path: Path) -> None:
    hold = threading.Event()  # never set: a wait on it is the connection's time up

    def welcome_hold_drop(
        fake: FakeArena, number: int, requests: Any, context: Any
    ) -> Iterator[Any]:
        yield welcome()
        if number <= 3:
            # Up far longer than `stable` (0.05 s): each of these failures gets the whole
            # budget (0.2 s) again, though the three together last longer than it.
            hold.wait(0.5)
            context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        yield action_request(STATE, f"r{number}")
        fake.read_reply(requests)

    with served(tmp_path, welcome_hold_drop) as (fake, address):
        play(
            address,
            backoff=Backoff(initial=0.01, maximum=0.05, budget=0.2, stable=0.05),
        )
    assert len(fake.hellos) == 4
    assert [reply.request_id for reply in fake.replies] == ["r4"]


# ---- finding 6: no Welcome ---------------------------------------------------------------------


def test_a_server_that_never_says_welcome_is_a_failed_connection(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def silent(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        gone = threading.Event()
        context.add_callback(gone.set)
        # Wait for the bot to give up on this stream; a bot that never does finds the stream
        # ended cleanly 20 s later and returns from run(), failing the test (not hanging it).
        gone.wait(20)
        return
        yield  # a generator all the same

    caplog.set_level(logging.WARNING, logger="bisca.client")
    with (
        served(tmp_path, silent) as (fake, address),
        pytest.raises(ConnectionLost, match=r"no welcome from the server within 0\.2 s"),
    ):
        play(
            address,
            backoff=Backoff(initial=0.01, maximum=0.05, budget=0.5),
            welcome_timeout=0.2,
        )
    # Said when it happens, and retried within the budget.
    assert any(
        "no welcome from the server at" in record.getMessage()
        and "treating it as a failed connection" in record.getMessage()
        for record in caplog.records
    )
    assert 2 <= len(fake.hellos) <= 5


def test_a_welcome_in_time_is_not_cut_short_by_the_welcome_deadline(tmp_path: Path) -> None:
    def slow_match(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield welcome()
        threading.Event().wait(1.5)  # a bot waiting to be paired: longer than the deadline
        yield action_request(STATE, f"r{number}")
        fake.read_reply(requests)

    with served(tmp_path, slow_match) as (fake, address):
        play(
            address,
            backoff=Backoff(initial=0.01, maximum=0.05, budget=0.5),
            welcome_timeout=1.0,
        )
    assert len(fake.hellos) == 1
    assert [reply.request_id for reply in fake.replies] == ["r1"]


# ---- finding 5: matches that never end -------------------------------------------------------


def rejected(request_id: str, match_id: str, seat: int, left: int = 3) -> arena_pb2.ServerMessage:
    return arena_pb2.ServerMessage(
        action_rejected=arena_pb2.ActionRejected(
            request_id=request_id,
            match_id=match_id,
            seat=seat,
            code=arena_pb2.REJECT_CODE_ILLEGAL_ACTION,
            attempts_left=left,
        )
    )


def test_matches_that_never_end_are_kept_up_to_a_bound_and_the_oldest_forgotten(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session, _ = recording_session()
    seat = STATE.to_act
    assert seat is not None
    request = action_request(STATE, "r")
    caplog.set_level(logging.WARNING, logger="bisca.client")
    total = MAX_MATCHES + 100
    for number in range(total):
        match_id = f"m{number}"
        session.handle(belote_started(match_id, seat, bytes(32)))
        message = arena_pb2.ServerMessage()
        message.CopyFrom(request)
        message.action_request.match_id = match_id
        assert len(session.handle(message)) == 1
    # What the session holds per match stays at the bound, whatever the server sends...
    assert len(session._open) == MAX_MATCHES
    assert len(session._commitments) == MAX_MATCHES
    # ... the least recently active matches went, the recent ones are still answered ...
    assert session.handle(rejected("r", "m0", seat)) == []
    assert len(session.handle(rejected("r", f"m{total - 1}", seat))) == 1
    # ... and it was said once, not once per match.
    forgetting = [r.getMessage() for r in caplog.records if "forgetting" in r.getMessage()]
    assert len(forgetting) == 1
    assert f"more than {MAX_MATCHES} matches" in forgetting[0] and "match m0" in forgetting[0]


def big_request(match_id: str, copies: int) -> arena_pb2.ServerMessage:
    """The request of ``STATE`` for ``match_id`` with its legal list repeated ``copies`` times
    (a server decides how long a legal list is)."""
    message = arena_pb2.ServerMessage()
    message.CopyFrom(action_request(STATE, "r"))
    request = message.action_request
    request.match_id = match_id
    legal = list(request.legal_actions)
    del request.legal_actions[:]
    request.legal_actions.extend(legal * copies)
    return through_wire(message)


def padded(message: Message, size: int) -> None:
    """Give ``message`` a field its schema does not have (number 15), of ``size`` bytes: a
    server may send such fields, and a parser keeps them."""
    message.MergeFromString(b"\x7a" + _varint(size) + bytes(size))


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


@pytest.fixture
def small_bound(monkeypatch: pytest.MonkeyPatch) -> int:
    """The tables' byte bound at 1 MiB, so a test need not send hundreds of megabytes."""
    monkeypatch.setattr(_kept, "MAX_KEPT_BYTES", 1024 * 1024)
    return 1024 * 1024


def test_big_requests_for_matches_that_never_end_are_kept_up_to_a_byte_bound(
    small_bound: int, caplog: pytest.LogCaptureFixture
) -> None:
    """The C++ SDK's flood (1 MB requests for matches never started, 3.8 GB in 10 s): the
    count alone allowed 1,024 of them; bytes bound them too."""
    session, asked = recording_session()
    caplog.set_level(logging.WARNING, logger="bisca.client")
    total = 40
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for number in range(total):
            assert len(session.handle(big_request(f"m{number}", 2_500))) == 1
        asked.clear()  # (the test's own copies of the requests)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    kept = len(session._open)
    assert 1 < kept < total and session._open.kept_bytes <= small_bound
    # The estimate holds what the entries really hold (~110 KB each here).
    assert held <= 1.5 * small_bound, f"{held:,} bytes held by {kept} requests"
    # The newest are kept (a rejection is answered at once), the oldest forgotten; said once.
    seat = STATE.to_act
    assert seat is not None
    assert len(session.handle(rejected("r", f"m{total - 1}", seat))) == 1
    assert session.handle(rejected("r", "m0", seat)) == []
    forgetting = [r.getMessage() for r in caplog.records if "forgetting" in r.getMessage()]
    assert len(forgetting) == 1 and "an open request (match m0" in forgetting[0]


def test_long_match_ids_and_big_start_events_are_kept_up_to_a_byte_bound(
    small_bound: int,
) -> None:
    """Match ids of any length (the starts seen) and the first events of committed matches
    (kept for the deal check) count too."""
    session, _ = recording_session()
    seat = STATE.to_act
    assert seat is not None
    filler = "x" * 20_000
    for number in range(200):
        match_id = f"{number}-{filler}"  # a server's match ids are as long as it likes
        session.handle(belote_started(match_id, seat, bytes(32)))
        batch = arena_pb2.EventBatch(match_id=match_id, seat=seat)
        for index in range(KEPT_EVENTS):  # each 7.5 KB: small enough to be kept for the check
            padded(batch.events.add(index=index).belote.trick_won, 7_680)
        session.handle(arena_pb2.ServerMessage(events=batch))
    for table in (session._started, session._commitments):
        assert 1 < len(table) < 200 and table.kept_bytes <= small_bound


def test_an_event_too_big_to_keep_is_named_by_the_deal_check(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A start event is tens of bytes; one of the start's indices sent as 100 KB is not kept
    (its size is), and the deal is not verified."""
    seat = 1
    salt, seed, match_id = bytes(16), 7, "m"
    start = new_match("belote", seed=seed)
    shown = [
        wire.encode_game_event("belote", index, event)
        for index, (audience, event) in enumerate(start.all_events(0))
        if audience >> seat & 1
    ]
    padded(shown[0].belote.trick_won, 100_000)
    assert shown[0].ByteSize() > MAX_KEPT_EVENT_BYTES
    ends = []
    session = Session(lambda request: None, token="t", name="n", on_match_end=ends.append)
    session.handle(belote_started(match_id, seat, wire.deal_commitment(salt, seed, match_id)))
    session.handle(
        arena_pb2.ServerMessage(
            events=arena_pb2.EventBatch(match_id=match_id, seat=seat, events=shown)
        )
    )
    assert session._commitments.get((match_id, seat)).shown.kept_bytes < 1_000  # type: ignore[union-attr]
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        session.handle(
            arena_pb2.ServerMessage(
                match_ended=arena_pb2.MatchEnded(
                    match_id=match_id, seat=seat, seed=seed, deal_salt=salt
                )
            )
        )
    [end] = ends
    assert end.deal_verified is False
    assert any("bytes were sent" in r.getMessage() for r in caplog.records)


# ---- finding 8: a storm of tiny rejections -----------------------------------------------------

#: Each legal action of the request repeated this many times, as in the review's storm.
COPIES = 2_000


def test_a_storm_of_rejections_costs_at_most_one_bot_call_per_distinct_legal_action(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def stubborn(request: Request[Any, Any]) -> Any:
        calls.append(request.attempt)
        return request.legal_actions[0]  # the same, rejected, action every time

    scans: list[int] = []
    fallback = _session._fallback

    def counted(entry: Any) -> Any:
        scans.append(1)
        return fallback(entry)

    monkeypatch.setattr(_session, "_fallback", counted)
    session = Session(stubborn, token="t", name="b")
    session.hello()
    seat = STATE.to_act
    assert seat is not None
    message = arena_pb2.ServerMessage()
    message.CopyFrom(action_request(STATE, "r-storm", "m-storm"))
    legal = list(message.action_request.legal_actions)
    distinct = len(legal)
    del message.action_request.legal_actions[:]
    message.action_request.legal_actions.extend(legal * COPIES)
    caplog.set_level(logging.WARNING, logger="bisca.client")
    replies = session.handle(through_wire(message))
    storm = 1_000
    for _ in range(storm):
        replies += session.handle(rejected("r-storm", "m-storm", seat, left=5))
    # Each distinct legal action was tried once, then the request was given up: the bot was
    # asked once per rejection that could still change something, not once per rejection.
    assert len(replies) == distinct
    assert len(calls) == distinct
    assert len(scans) <= distinct
    lines = [r.getMessage() for r in caplog.records]
    assert sum("every legal action was rejected" in line for line in lines) == 1
    assert sum("ignoring its further rejections" in line for line in lines) == 1
    assert len(lines) <= 3 * distinct + 2
    # A copy of the request re-sent after all that is not answered either.
    resent = arena_pb2.ServerMessage()
    resent.CopyFrom(message)
    resent.action_request.attempt = 9
    assert session.handle(through_wire(resent)) == []
    assert len(calls) == distinct


def test_rejections_with_nothing_sent_between_them_are_counted_not_answered_forever() -> None:
    calls: list[int] = []

    def bot(request: Request[Any, Any]) -> Any:
        calls.append(request.attempt)
        return request.legal_actions[len(calls) % len(request.legal_actions)]

    session = Session(bot, token="t", name="b")
    session.hello()
    seat = STATE.to_act
    assert seat is not None
    session.handle(action_request(STATE, "r1", "m1"))
    distinct = len(STATE.legal_actions())
    for _ in range(10 * distinct):
        session.handle(rejected("r1", "m1", seat, left=5))
    # One answer per rejection at most, and no more rejections answered than there are
    # distinct legal actions, whatever the bot answers.
    assert len(calls) <= distinct + 1


def test_rejections_of_no_open_request_are_warned_about_a_few_times_not_each_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session, _ = recording_session()
    caplog.set_level(logging.WARNING, logger="bisca.client")
    for number in range(500):
        assert session.handle(rejected(f"r{number}", "m-none", 0)) == []
    warnings = [r for r in caplog.records if "rejected" in r.getMessage()]
    assert 1 <= len(warnings) <= 10


# ---- finding 9: requests for a match or seat the connection was not given ---------------------


def test_a_request_of_a_match_never_started_is_answered_with_one_warning_per_match_and_seat(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session, _ = recording_session()
    seat = STATE.to_act
    assert seat is not None
    caplog.set_level(logging.WARNING, logger="bisca.client")

    def warned() -> list[str]:
        return [r.getMessage() for r in caplog.records if "had no start" in r.getMessage()]

    # Started on this connection: answered, no warning.
    session.handle(belote_started("mine", seat, bytes(32)))
    assert len(session.handle(action_request(STATE, "r1", "mine"))) == 1
    assert warned() == []
    # Never started: answered all the same, and said, once per (match, seat).
    assert len(session.handle(action_request(STATE, "r2", "someone-elses"))) == 1
    assert len(session.handle(action_request(STATE, "r3", "someone-elses"))) == 1
    [line] = warned()
    assert "request r2 of match someone-elses for seat" in line
    # A reconnect forgets this connection's starts: the resumed start comes first again.
    session.hello()
    session.handle(belote_started("mine", seat, bytes(32)))
    assert len(session.handle(action_request(STATE, "r4", "mine"))) == 1
    assert len(warned()) == 1
    session.hello()
    assert len(session.handle(action_request(STATE, "r5", "mine"))) == 1
    assert len(warned()) == 2


def test_a_request_whose_observation_is_another_seats_is_not_given_to_the_bot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session, asked = recording_session()
    seat = STATE.to_act
    assert seat is not None
    other = (seat + 1) % 4
    session.handle(belote_started("m1", other, bytes(32)))
    message = arena_pb2.ServerMessage()
    message.CopyFrom(action_request(STATE, "r-other", "m1"))
    message.action_request.seat = other  # the observation stays `seat`'s
    caplog.set_level(logging.ERROR, logger="bisca.client")
    assert session.handle(through_wire(message)) == []
    assert asked == []
    [record] = caplog.records
    text = record.getMessage()
    assert f"request r-other of match m1 from the server is for seat {other}" in text
    assert f"observation is seat {seat}'s" in text
    # The next, consistent request is answered.
    session.handle(belote_started("m1", seat, bytes(32)))
    assert len(session.handle(action_request(STATE, "r2", "m1"))) == 1
    assert [request.request_id for request in asked] == ["r2"]
