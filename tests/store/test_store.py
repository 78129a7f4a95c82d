"""The store's league tables: an older data directory upgrades in place, and a match's result
and its rating update commit together, once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import bisca.server.store._rating_repository as rating_module  # its rating hook, patched
from bisca.server.records import TournamentSlot
from bisca.server.store import MIGRATIONS, SeatOutput, Store, StoreError

from .conftest import OpenStore
from .support import CLOCK, old_data_dir, seat


def test_a_data_directory_of_schema_2_upgrades_in_place(tmp_path: Path) -> None:
    data = old_data_dir(tmp_path / "data")
    store = Store.in_directory(data)
    assert store.schema_version == len(MIGRATIONS) >= 4
    assert [bot.name for bot in store.bots.all()] == ["old"]
    record = store.matches.get("m-old")
    assert record is not None
    assert record.status == "finished" and record.steps == 120 and not record.rated
    assert record.log_path == "matches/m-old/match.binlog" and record.log_hash == "abc"
    assert [s.score for s in record.seats] == [300, 200, 300, 200]
    # The new tables work at once, beside the old rows.
    assert store.ratings.leaderboard("belote") == []
    store.matches.create("m-new", "belote", {}, 6, ["old", "x", "old", "x"], CLOCK, rated=True)
    changes = store.matches.finish_and_rate(
        "m-new", 99, [seat(n, b, 1, 0) for n, b in enumerate("axay")]
    )
    assert {c.bot for c in changes} == {"a", "x", "y"}
    store.logs.put_output([SeatOutput("m-old", 0, b"an old match's seat 0\n", b"")])
    assert store.logs.output("m-old")[0].stderr == b"an old match's seat 0\n"
    store.close()
    # Opening it again applies nothing twice.
    again = Store.in_directory(data)
    assert again.schema_version == len(MIGRATIONS)
    assert again.matches.get("m-new") is not None
    again.close()


def test_a_seats_stderr_kept_before_its_stdout_was_stays_beside_no_stdout(tmp_path: Path) -> None:
    """Migration 16 keeps a seat's stdout beside its stderr: the stderr a store kept before is
    still there, with no stdout (``None``: not kept, not empty), a seat put again keeps both,
    and the release before still writes a seat's stderr where it did."""
    data = old_data_dir(tmp_path / "data", schema=15)
    db = sqlite3.connect(data / "bisca.sqlite3")
    db.execute(
        "INSERT INTO seat_stderr (match_id, seat, data, created_at)"
        " VALUES ('m-old', 1, x'6f6c640a', '2026-01-01Z')"
    )
    db.commit()
    db.close()
    store = Store.in_directory(data)
    assert store.schema_version == len(MIGRATIONS) >= 16
    assert store.logs.output("m-old") == {1: SeatOutput("m-old", 1, b"old\n", None)}
    store.logs.put_output([SeatOutput("m-old", 1, b"again\n", b"printed\n")])
    assert store.logs.output("m-old") == {1: SeatOutput("m-old", 1, b"again\n", b"printed\n")}
    store.close()
    # A server of the release before, still running on the store (a worker on a shared one),
    # writes its seats' stderr as it did: kept, with no stdout.
    db = sqlite3.connect(data / "bisca.sqlite3")
    db.execute(
        "INSERT INTO seat_stderr (match_id, seat, data, created_at)"
        " VALUES ('m-old', 2, x'6f6c640a', '2026-01-02Z')"
    )
    db.commit()
    db.close()
    again = Store.in_directory(data)
    assert again.logs.output("m-old")[2] == SeatOutput("m-old", 2, b"old\n", None)
    again.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    Store.in_directory(tmp_path).close()
    db = sqlite3.connect(tmp_path / "bisca.sqlite3")
    db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer than this Bisca"):
        Store.in_directory(tmp_path)


def belote_win(winner: str, loser: str) -> list:
    bots = [winner, loser, winner, loser]
    return [
        seat(n, bot, 500 if bot == winner else 200, 0 if bot == winner else 2)
        for n, bot in enumerate(bots)
    ]


def test_result_and_rating_commit_once(new_store: OpenStore) -> None:
    store = new_store()
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "a", "b"], CLOCK, rated=True)
    first = store.matches.finish_and_rate("m1", 10, belote_win("a", "b"))
    assert [c.bot for c in first] == ["a", "b"]
    board = store.ratings.leaderboard("belote")
    with pytest.raises(StoreError, match="already recorded"):
        store.matches.finish_and_rate("m1", 10, belote_win("a", "b"))
    assert store.ratings.leaderboard("belote") == board
    assert len(store.ratings.history("belote")) == 2
    with pytest.raises(StoreError, match="no match"):
        store.matches.finish_and_rate("nope", 1, belote_win("a", "b"))
    store.close()


def test_a_result_records_its_log_in_its_own_transaction(
    new_store: OpenStore, tmp_path: Path
) -> None:
    """A match's end is one commit: its result, its ratings and its log (a shared store keeps
    the log's bytes too); a result refused records nothing of the log either."""
    store = new_store()
    log = tmp_path / "m1.binlog"
    log.write_bytes(b"the log's bytes")
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "a", "b"], CLOCK, rated=True)
    store.matches.finish_and_rate("m1", 10, belote_win("a", "b"), log=(str(log), "hash1"))
    record = store.matches.get("m1")
    assert record is not None and record.status == "finished"
    assert (record.log_path, record.log_hash) == (str(log), "hash1")
    kept = store.logs.get("m1")
    assert (kept is not None) == store.shared
    assert kept is None or (kept.data, kept.log_hash) == (b"the log's bytes", "hash1")
    with pytest.raises(StoreError, match="already recorded"):
        store.matches.finish_and_rate("m1", 10, belote_win("a", "b"), log=(str(log), "hash2"))
    record = store.matches.get("m1")
    assert record is not None and record.log_hash == "hash1"
    store.close()


def test_sqlite_commits_wait_for_the_disk_unless_told_not_to(tmp_path: Path) -> None:
    """A flushed transaction commits under ``synchronous=FULL``, one that need not (a match
    marked running) under NORMAL, and the next flushed one is FULL again."""
    store = Store.in_directory(tmp_path)
    database = store._database  # the mode each commit ran under is the connection's

    def mode(*, flushed: bool) -> int:
        with database.transaction(flushed=flushed) as db:
            value: int = db.execute("PRAGMA synchronous").fetchone()[0]
        return value

    full, normal = 2, 1
    assert [mode(flushed=True), mode(flushed=False), mode(flushed=False)] == [full, normal, normal]
    assert mode(flushed=True) == full
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "a", "b"], CLOCK)
    store.matches.mark_running("m1")
    record = store.matches.get("m1")
    assert record is not None and record.status == "running"
    store.close()


def test_a_failed_rating_update_leaves_the_match_unfinished(
    new_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = new_store()
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "a", "b"], CLOCK, rated=True)

    def broken(*args: object) -> None:
        raise RuntimeError("the disk caught fire")

    monkeypatch.setattr(rating_module, "rate_match", broken)
    with pytest.raises(RuntimeError):
        store.matches.finish_and_rate("m1", 10, belote_win("a", "b"))
    record = store.matches.get("m1")
    assert record is not None and record.status == "waiting" and record.seats == []
    monkeypatch.undo()
    store.matches.finish_and_rate("m1", 10, belote_win("a", "b"))
    assert [row.matches for row in store.ratings.leaderboard("belote")] == [1, 1]
    store.close()


def test_unrated_matches_leave_the_ratings_alone(new_store: OpenStore) -> None:
    store = new_store()
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "a", "b"], CLOCK)
    assert store.matches.finish_and_rate("m1", 10, belote_win("a", "b")) == []
    assert store.ratings.leaderboard("belote") == []
    record = store.matches.get("m1")
    assert record is not None and record.status == "finished"
    store.close()


def test_tournament_plans(new_store: OpenStore) -> None:
    store = new_store()
    slots = [
        TournamentSlot(slot=i, planned_id=f"t-{i}", pairing=0, seating=i % 2, seed=9, bots=("a",))
        for i in range(3)
    ]
    assert store.tournaments.save_plan("t", "belote", "d1", "t.toml", slots) is True
    assert store.tournaments.save_plan("t", "belote", "d1", "t.toml", slots) is False
    with pytest.raises(StoreError, match="another plan"):
        store.tournaments.save_plan("t", "belote", "d2", "u.toml", slots)
    store.tournaments.start_attempt("t", 1, "t-1")
    store.matches.create("t-1", "belote", {}, 9, ["a", "b", "a", "b"], CLOCK)
    store.matches.mark_running("t-1")
    listed = store.tournaments.slots("t")
    assert [(s.match_id, s.attempts, s.status, s.done) for s in listed] == [
        (None, 0, None, False),
        ("t-1", 1, "running", False),
        (None, 0, None, False),
    ]
    assert store.matches.abandon_unfinished(["t-1", "t-0"], "cut off") == 1
    record = store.matches.get("t-1")
    assert record is not None and record.status == "failed" and record.reason == "cut off"
    store.tournaments.start_attempt("t", 1, "t-1-r2")
    store.matches.create("t-1-r2", "belote", {}, 9, ["a", "b", "a", "b"], CLOCK)
    store.matches.finish_and_rate("t-1-r2", 3, belote_win("a", "b"))
    listed = store.tournaments.slots("t")
    assert (listed[1].match_id, listed[1].attempts, listed[1].done) == ("t-1-r2", 2, True)
    store.close()


def test_a_deal_stays_sealed_while_a_planned_match_of_it_is_not_played(
    new_store: OpenStore,
) -> None:
    """Review 48: a duplicate set's rotations not begun yet have no match row; the first
    rotation's end showed its bots the seed of the next (whole hands they then played)."""
    store = new_store()
    slots = [
        TournamentSlot(slot=i, planned_id=f"t-{i}", pairing=0, seating=i, seed=9, bots=("a",))
        for i in range(2)
    ]
    store.tournaments.save_plan("t", "belote", "d1", "t.toml", slots)
    store.tournaments.start_attempt("t", 0, "t-0")
    store.matches.create("t-0", "belote", {}, 9, ["a", "b", "a", "b"], CLOCK)
    store.matches.finish_and_rate("t-0", 3, belote_win("a", "b"))
    assert store.matches.deal_in_play("belote", 9, besides="t-0") == "t-1"  # not begun
    # The lists' question, for the deals of a page at once (review 50: they missed the plan).
    page = [("belote", 9), ("bestia", 9), ("belote", 8)]
    assert store.matches.deals_in_play(page) == {("belote", 9): "t-1"}
    assert store.matches.deal_in_play("bestia", 9, besides="t-0") is None  # another game's
    assert store.matches.deal_in_play("belote", 8, besides="t-0") is None  # another deal
    # Its one attempt failed: still to be played, still sealed; its own end is besides it.
    store.tournaments.start_attempt("t", 1, "t-1")
    store.matches.create("t-1", "belote", {}, 9, ["b", "a", "b", "a"], CLOCK)
    store.matches.abandon_unfinished(["t-1"], "cut off")
    assert store.matches.deal_in_play("belote", 9, besides="t-0") == "t-1"
    assert store.matches.deal_in_play("belote", 9, besides="t-1") is None
    assert store.matches.deals_in_play(page) == {("belote", 9): "t-1"}
    store.tournaments.start_attempt("t", 1, "t-1-r2")
    store.matches.create("t-1-r2", "belote", {}, 9, ["b", "a", "b", "a"], CLOCK)
    assert store.matches.deal_in_play("belote", 9, besides="t-0") == "t-1-r2"  # running
    assert store.matches.deals_in_play(page) == {("belote", 9): "t-1-r2"}
    store.matches.finish_and_rate("t-1-r2", 3, belote_win("b", "a"))
    # The set played through: its deal is shown at every end.
    assert store.matches.deal_in_play("belote", 9, besides="t-1-r2") is None
    assert store.matches.deal_in_play("belote", 9) is None
    assert store.matches.deals_in_play(page) == {}
    store.close()
