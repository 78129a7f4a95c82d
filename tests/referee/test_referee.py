"""The referee end to end: a real server process, bots as processes, over loopback gRPC."""

from __future__ import annotations

import os

import pytest

from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import bestia_pb2
from tests.support.arena import Arena, clock, read_record
from tests.support.waiting import poll_until

FINISHED = pb.MATCH_STATUS_FINISHED


def test_full_belote_match_between_sample_bot_processes(arena: Arena) -> None:
    names = []
    for index in range(4):
        name, token = arena.register("belote")
        arena.sample_bot(token, "greedy" if index % 2 else "random", "belote")
        names.append(name)
    match_id = arena.create("belote", names, seed=11)
    info = arena.wait(match_id)
    assert info.status == FINISHED, info.reason
    assert [r.bot_name for r in info.results] == names
    scores = [r.score for r in info.results]
    assert scores[0] == scores[2] and scores[1] == scores[3]
    assert all(r.end == pb.SEAT_END_COMPLETED and r.timeouts == 0 for r in info.results)
    assert info.steps > 4 * 8
    stored = Store.in_directory(arena.data_dir).matches.get(match_id)
    assert stored is not None and stored.status == "finished"
    assert [s.score for s in stored.seats] == scores


@pytest.mark.parametrize("seats", [4, 7])
def test_bestia_matches(arena: Arena, seats: int) -> None:
    names = []
    for index in range(seats):
        name, token = arena.register(f"bestia{seats}-")
        arena.sample_bot(token, "greedy" if index % 2 else "random", "bestia")
        names.append(name)
    settings = pb.GameSettings(bestia=bestia_pb2.Settings(seats=seats, rounds=1))
    info = arena.wait(arena.create("bestia", names, settings=settings, seed=seats))
    assert info.status == FINISHED, info.reason
    assert sum(r.score for r in info.results) == 0  # chips sum to 0
    assert len(info.results) == seats


def _seat_with_rogue(arena: Arena, game: str, *behaviour: str, **fields: object):
    """A match whose seat 0 is a rogue bot and the others random sample bots."""
    rogue_name, rogue_token = arena.register("rogue")
    names = [rogue_name]
    record = arena.rogue(rogue_token, *behaviour)
    for _ in range(3):
        name, token = arena.register("filler")
        arena.sample_bot(token, "random", game)
        names.append(name)
    match_id = arena.create(game, names, **fields)
    return match_id, record


def test_default_policy_plays_default_actions_for_a_slow_bot(arena: Arena) -> None:
    # The rogue sleeps 2.5 s on its 2nd request with 1 s per move and no bank.
    match_id, record = _seat_with_rogue(
        arena,
        "belote",
        "sleep_ms=2500",
        "sleep_on=2",
        seed=3,
        clock=clock(1000, 1, "default"),
    )
    info = arena.wait(match_id)
    assert info.status == FINISHED
    rogue = info.results[0]
    # The late move times out; being sequential, the bot may also miss the requests that
    # queued up meanwhile, but it catches up and the seat is never forfeited.
    assert 1 <= rogue.timeouts <= 6 and rogue.defaults_played == rogue.timeouts
    assert rogue.end == pb.SEAT_END_COMPLETED
    # Its late answer was discarded by request id, with an error saying so.
    errors = [m["error"] for m in read_record(record, until="matchEnded") if "error" in m]
    assert any(e["code"] == "ERROR_CODE_UNKNOWN_REQUEST" for e in errors)


def test_a_bot_that_exhausts_its_bank(arena: Arena) -> None:
    # 150 ms per move + 300 ms bank; the bot takes 250 ms every move: the bank lasts 3 moves.
    match_id, record = _seat_with_rogue(
        arena,
        "belote",
        "sleep_ms=250",
        seed=4,
        clock=clock(150, 300, "default"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id)
    rogue = info.results[0]
    assert info.status == FINISHED
    assert rogue.timeouts >= 1
    requests = [m["actionRequest"] for m in read_record(record) if "actionRequest" in m]
    banks = [int(r["clock"].get("bankMs", 0)) for r in requests]
    assert banks[0] == 300 and banks[-1] < 300  # the bank was drawn on and shown shrinking


def test_forfeit_policy_drops_the_seat_and_ranks_it_last(arena: Arena) -> None:
    match_id, record = _seat_with_rogue(
        arena,
        "belote",
        "never_answer",
        seed=5,
        # A second a move: the honest seats answer well inside it on a loaded machine (at
        # 100 ms one of them once forfeited too, and tied the rogue's rank).
        clock=clock(1000, 0, "forfeit"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id)
    assert info.status == FINISHED
    rogue = info.results[0]
    assert rogue.end == pb.SEAT_END_FORFEITED and rogue.timeouts == 1
    assert "no legal action within" in rogue.forfeit_reason
    assert rogue.rank == max(r.rank for r in info.results)
    assert all(r.rank < rogue.rank for r in info.results[1:])
    messages = read_record(record, until="matchEnded")
    assert any(m.get("error", {}).get("code") == "ERROR_CODE_FORFEITED" for m in messages)
    # Only one request was sent: after the forfeit a default player finishes the seat.
    assert sum("actionRequest" in m for m in messages) == 1


def test_strikes_policy_defaults_then_forfeits(arena: Arena) -> None:
    match_id, _ = _seat_with_rogue(
        arena,
        "belote",
        "never_answer",
        seed=6,
        clock=clock(80, 0, "strikes", strikes=2),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id)
    rogue = info.results[0]
    assert rogue.timeouts == 2
    assert rogue.end == pb.SEAT_END_FORFEITED


def test_illegal_actions_are_rejected_and_may_be_corrected(arena: Arena) -> None:
    match_id, record = _seat_with_rogue(
        arena,
        "belote",
        "illegal=2",
        seed=7,
        clock=clock(5000, 5000, "forfeit"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id)
    assert info.status == FINISHED
    assert info.results[0].end == pb.SEAT_END_COMPLETED and info.results[0].timeouts == 0
    messages = read_record(record, until="matchEnded")
    rejections = [m["actionRejected"] for m in messages if "actionRejected" in m]
    requests = [m["actionRequest"] for m in messages if "actionRequest" in m]
    assert rejections and len(rejections) == 2 * len({r["requestId"] for r in requests})
    assert {r["code"] for r in rejections} == {"REJECT_CODE_ILLEGAL_ACTION"}
    assert all(r["message"] for r in rejections)
    assert {r["attemptsLeft"] for r in rejections} == {2, 1}
    assert {r.get("attempt", 1) for r in requests} == {1, 2, 3}


def test_three_rejections_apply_the_timeout_policy(arena: Arena) -> None:
    match_id, record = _seat_with_rogue(
        arena,
        "belote",
        "always_illegal",
        seed=8,
        clock=clock(5000, 0, "forfeit"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id)
    rogue = info.results[0]
    assert rogue.end == pb.SEAT_END_FORFEITED
    assert "3 rejected actions" in rogue.forfeit_reason
    rejections = [
        m["actionRejected"]
        for m in read_record(record, until="matchEnded")
        if "actionRejected" in m
    ]
    assert [r.get("attemptsLeft", 0) for r in rejections] == [2, 1, 0]


def test_a_bot_killed_mid_match_is_handled_by_the_policy(arena: Arena) -> None:
    match_id, _ = _seat_with_rogue(
        arena,
        "belote",
        "crash_after=3",
        seed=9,
        clock=clock(200, 0, "strikes", strikes=2),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id)
    assert info.status == FINISHED
    assert info.results[0].end == pb.SEAT_END_FORFEITED
    assert all(r.end == pb.SEAT_END_COMPLETED for r in info.results[1:])


def test_a_frozen_bot_does_not_stall_the_match(arena: Arena) -> None:
    match_id, _ = _seat_with_rogue(
        arena,
        "belote",
        "freeze_after=2",
        seed=10,
        clock=clock(300, 0, "forfeit"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id, timeout=60)
    assert info.status == FINISHED
    assert info.results[0].end == pb.SEAT_END_FORFEITED


def test_a_bot_that_reconnects_gets_its_seat_back(arena: Arena) -> None:
    match_id, record = _seat_with_rogue(
        arena,
        "belote",
        "reconnect_after=3",
        seed=12,
        clock=clock(5000, 5000, "forfeit"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id)
    assert info.status == FINISHED
    assert info.results[0].end == pb.SEAT_END_COMPLETED
    messages = read_record(record, until="matchEnded")
    starts = [m["matchStarted"] for m in messages if "matchStarted" in m]
    assert [s.get("resumed", False) for s in starts] == [False, True]
    assert sum("welcome" in m for m in messages) == 2


def test_wrong_token_and_protocol_are_refused(arena: Arena) -> None:
    record = arena.rogue("bisca_not-a-token")
    assert arena.bots[-1].wait(timeout=30) == 0
    errors = [m["error"] for m in read_record(record) if "error" in m]
    assert errors and errors[0]["code"] == "ERROR_CODE_UNKNOWN_TOKEN" and errors[0]["fatal"]
    _, token = arena.register("old")
    record = arena.rogue(token, "protocol=99")
    errors = [m["error"] for m in read_record(record, until="error") if "error" in m]
    assert errors[0]["code"] == "ERROR_CODE_UNSUPPORTED_PROTOCOL"
    assert "99" in errors[0]["message"]


def test_out_of_turn_garbage_and_oversized_messages_get_errors_and_the_match_goes_on(
    arena: Arena,
) -> None:
    match_id, record = _seat_with_rogue(
        arena,
        "belote",
        "garbage",
        "oversized",
        "stale_after=2",
        seed=13,
        clock=clock(5000, 5000, "forfeit"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id)
    assert info.status == FINISHED
    assert info.results[0].end == pb.SEAT_END_COMPLETED
    codes = [m["error"]["code"] for m in read_record(record, until="matchEnded") if "error" in m]
    assert "ERROR_CODE_MALFORMED_MESSAGE" in codes
    assert "ERROR_CODE_MESSAGE_TOO_LARGE" in codes
    assert "ERROR_CODE_UNKNOWN_REQUEST" in codes


def test_two_matches_at_once_a_hung_bot_does_not_delay_the_other(arena: Arena) -> None:
    hung_match, _ = _seat_with_rogue(
        arena,
        "belote",
        "never_answer",
        seed=14,
        clock=clock(30_000, 0, "default"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    running = pb.MATCH_STATUS_RUNNING
    poll_until("the hung match started", lambda: arena.info(hung_match).status == running)
    names = []
    for _ in range(4):
        name, token = arena.register("quick")
        arena.sample_bot(token, "random", "belote")
        names.append(name)
    quick_match = arena.create(
        "belote",
        names,
        seed=15,
        clock=clock(3000, 0, "default"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    quick = arena.wait(quick_match, timeout=60)
    assert quick.status == FINISHED
    hung = arena.stub.GetMatch(pb.GetMatchRequest(match_id=hung_match), metadata=arena.auth)
    # The hung match is still waiting out its 30 s moves while the quick one (3 s moves) is done.
    assert hung.status == pb.MATCH_STATUS_RUNNING


def test_join_timeout_fails_the_match_cleanly(arena: Arena) -> None:
    name, _ = arena.register("absent")
    others = [arena.register("present") for _ in range(3)]
    for _, token in others:
        arena.sample_bot(token, "random", "belote")
    match_id = arena.create("belote", [name] + [n for n, _ in others], join_timeout_ms=500)
    info = arena.wait(match_id)
    assert info.status == pb.MATCH_STATUS_FAILED
    assert name in info.reason and "not connected" in info.reason


def test_the_server_survives_all_of_it(arena: Arena) -> None:
    assert arena.process.poll() is None
    os.kill(arena.process.pid, 0)  # the fixture then stops it with SIGTERM: it must exit 0
