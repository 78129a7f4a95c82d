"""What a store shared by workers needs, on both back ends: ratings in the order of a
tournament's plan whatever order its matches finish in, a given-up attempt that cannot be
recorded late, logs kept in a shared store, ladder seats' stderr kept in either store, the
workers' heartbeats, and clear errors for a store that cannot be opened."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bisca.server.records import RecordedMatch, TournamentSlot
from bisca.server.store import (
    MAX_SEAT_OUTPUT,
    SeatOutput,
    Store,
    StoreError,
    StoreKind,
    VersionKind,
    open_store,
)

from .conftest import OpenStore
from .support import output_kept_at, seat

CLOCK = {"move_ms": 1000, "bank_ms": 0, "policy": "default"}
BOTS = ("a", "b", "c")


def plan(store_name: str, count: int) -> list[TournamentSlot]:
    return [
        TournamentSlot(
            slot=i,
            planned_id=f"{store_name}-{i}",
            pairing=0,
            seating=0,
            seed=i,
            bots=(BOTS[i % 3], BOTS[(i + 1) % 3]),
        )
        for i in range(count)
    ]


def result(slot: TournamentSlot) -> list:
    winner, loser = slot.bots
    return [seat(0, winner, 40, 0), seat(1, loser, -40, 1)]


def play(store, slots: list[TournamentSlot], order: list[int]) -> list[list[str]]:
    """Finish the slots in ``order``; returns which matches had their ratings applied by
    each finish."""
    for slot in slots:
        store.tournaments.start_attempt("t", slot.slot, slot.planned_id)
        store.matches.create(slot.planned_id, "bestia", {}, slot.seed, list(slot.bots), CLOCK,
                           rated=True)  # fmt: skip
    applied = []
    for index in order:
        before = {row.match_id for row in store.ratings.history("bestia")}
        store.matches.finish_and_rate(slots[index].planned_id, 3, result(slots[index]))
        after = {row.match_id for row in store.ratings.history("bestia")}
        applied.append(sorted(after - before))
    return applied


def test_ratings_follow_the_plan_whatever_order_matches_finish_in(new_store: OpenStore) -> None:
    store = new_store()
    slots = plan("t", 6)
    store.tournaments.save_plan("t", "bestia", "d", "t.toml", slots, spec="game = 'bestia'")
    applied = play(store, slots, [2, 0, 1, 5, 3, 4])
    # Slot 2 waits for 0 and 1; 5 waits for 3 and 4.
    assert applied == [[], ["t-0"], ["t-1", "t-2"], [], ["t-3"], ["t-4", "t-5"]]
    in_order = [row.__dict__ for row in store.ratings.leaderboard("bestia")]
    history = store.ratings.history("bestia")
    assert len(history) == 12 and len({(h.match_id, h.bot) for h in history}) == 12
    stored = store.tournaments.get("t")
    assert stored is not None and (stored.game, stored.source, stored.spec) == (
        "bestia",
        "t.toml",
        "game = 'bestia'",
    )
    assert store.tournaments.get("nope") is None
    assert store.tournaments.names() == ["t"]

    # Another store, the same plan finished in plan order: the very same leaderboard.
    other = open_store(f"sqlite:{store.data_dir / 'other' / 'bisca.sqlite3'}", store.data_dir)
    other.tournaments.save_plan("t", "bestia", "d", "t.toml", slots)
    play(other, slots, list(range(6)))
    assert [row.__dict__ for row in other.ratings.leaderboard("bestia")] == in_order
    other.close()


def _first_attempt_running(store: Store) -> list[TournamentSlot]:
    """Tournament ``t``'s one planned match, its first attempt ``t-0`` running (rated)."""
    slots = plan("t", 1)
    store.tournaments.save_plan("t", "bestia", "d", "t.toml", slots)
    store.tournaments.start_attempt("t", 0, "t-0")
    store.matches.create("t-0", "bestia", {}, 0, ["a", "b"], CLOCK, rated=True)
    store.matches.mark_running("t-0")
    return slots


def test_a_given_up_attempt_is_not_recorded_late(new_store: OpenStore) -> None:
    store = new_store()
    slots = _first_attempt_running(store)
    store.matches.abandon_unfinished(["t-0"], "cut off: its worker stopped")
    with pytest.raises(StoreError, match="was given up"):
        store.matches.finish_and_rate("t-0", 3, result(slots[0]))
    assert store.ratings.leaderboard("bestia") == []


def test_a_shared_store_keeps_complete_logs(new_store: OpenStore, tmp_path: Path) -> None:
    store = new_store()
    store.log_key = "ed25519:00ff"
    store.matches.create("m1", "bestia", {}, 1, ["a", "b"], CLOCK)
    log = tmp_path / "m1.binlog"
    log.write_bytes(b"\x00log bytes\xff")
    store.logs.record("m1", str(log), "hash1")
    store.matches.create("m2", "bestia", {}, 2, ["a", "b"], CLOCK)
    store.logs.record("m2", str(tmp_path / "m2.binlog.partial"), None)  # incomplete: no bytes
    assert store.logs.recorded() == {"m1": RecordedMatch("hash1"), "m2": RecordedMatch(None)}
    assert store.logs.get("m2") is None
    kept = store.logs.get("m1")
    if store.kind is StoreKind.POSTGRESQL:
        assert store.shared
        assert kept is not None
        assert (kept.data, kept.log_hash, kept.public_key) == (log.read_bytes(), "hash1",
                                                               "ed25519:00ff")  # fmt: skip
    else:  # SQLite keeps logs as files beside it
        assert not store.shared and kept is None


def test_a_matchs_seats_output_is_kept_bounded_and_read_from_another_opening(
    new_store: OpenStore,
) -> None:
    """Either back end keeps a match's launched seats' stderr and stdout (the ladder puts them
    there, on whichever machine played): the last MAX_SEAT_OUTPUT bytes of each, any bytes, a
    seat put again replaced, and every other opening of the store (another machine) reads
    them."""
    store = new_store()
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "a", "b"], CLOCK)
    store.matches.create("m2", "belote", {}, 2, ["a", "b", "a", "b"], CLOCK)
    long = b"the start, left out\n" + b"x" * MAX_SEAT_OUTPUT + b"\n\xff the end\n"
    store.logs.put_output(
        [SeatOutput("m1", 2, long, long[::-1]), SeatOutput("m1", 0, b"seat 0 says hi\n", b"hi\n")]
    )
    store.logs.put_output([])  # nothing to keep: nothing changes
    store.logs.put_output([SeatOutput("m2", 1, b"", b"")])  # nothing written, kept as nothing
    reader = new_store()
    kept = reader.logs.output("m1")
    assert list(kept) == [0, 2]
    assert kept[0] == SeatOutput("m1", 0, b"seat 0 says hi\n", b"hi\n")
    assert len(kept[2].stderr) == MAX_SEAT_OUTPUT and kept[2].stderr == long[-MAX_SEAT_OUTPUT:]
    assert kept[2].stderr.endswith(b"\n\xff the end\n") and b"the start" not in kept[2].stderr
    assert kept[2].stdout == long[::-1][-MAX_SEAT_OUTPUT:]
    assert reader.logs.output("m2") == {1: SeatOutput("m2", 1, b"", b"")}
    assert reader.logs.output("no-such-match") == {}
    store.logs.put_output([SeatOutput("m1", 0, b"seat 0, played again\n", None)])
    assert reader.logs.output("m1")[0] == SeatOutput("m1", 0, b"seat 0, played again\n", None)
    assert reader.logs.output("m1")[2].stderr == long[-MAX_SEAT_OUTPUT:]


def test_seats_output_kept_before_a_moment_is_forgotten_and_the_rest_stays(
    new_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ladder forgets its seats' output after ``output_days`` (``forget_output``): every
    seat kept before the moment goes, whichever match, the later ones and the matches stay."""
    store = new_store()
    day = datetime(2026, 3, 1, tzinfo=UTC)
    for number in (1, 2, 3):
        store.matches.create(f"m{number}", "belote", {}, number, ["a", "b", "a", "b"], CLOCK)
        output_kept_at(monkeypatch, day + timedelta(days=number))
        store.logs.put_output([SeatOutput(f"m{number}", seat, b"e\n", b"o\n") for seat in (0, 2)])

    assert store.logs.forget_output(day + timedelta(days=1), 64) == 0  # (before, not at)
    # At most so many at a time (a transaction each: the ladder's sweep takes turns), the
    # oldest first.
    assert store.logs.forget_output(day + timedelta(days=2, hours=1), 3) == 3
    assert new_store().logs.output("m1") == {} and len(new_store().logs.output("m2")) == 1
    assert store.logs.forget_output(day + timedelta(days=2, hours=1), 64) == 1
    reader = new_store()
    assert reader.logs.output("m1") == reader.logs.output("m2") == {}
    assert sorted(reader.logs.output("m3")) == [0, 2]
    assert {"m1", "m2", "m3"} <= {match.id for match in reader.matches.find(None, None)}
    assert store.logs.forget_output(day + timedelta(days=2, hours=1), 64) == 0


def test_the_disk_versions_keep_is_summed_by_account_and_by_address(
    new_store: OpenStore,
) -> None:
    """The league's budgets (``account_bytes``, ``address_bytes``) are sums of what each
    version's kept files take, as recorded, on both back ends (PostgreSQL's SUM of a BIGINT
    is a NUMERIC: review s57's CI); an unmeasured version is found by account and address."""
    store = new_store()
    for name in ("alice", "bob"):
        store.accounts.create(name, "a long enough password")
    here = "2001:db8:1:2::/64"
    big = 3 * 2**31  # past a 32-bit integer
    store.versions.add("alice", "one", VersionKind.HOSTED, "f", "", sent_from=here, kept_bytes=big)
    store.versions.add("bob", "two", VersionKind.HOSTED, "f", "", sent_from=here, kept_bytes=5)
    store.versions.add("bob", "three", VersionKind.HOSTED, "f", "", sent_from="203.0.113.7")
    reader = new_store()
    assert reader.versions.kept_bytes_of("alice") == big
    assert reader.versions.kept_bytes_of("bob") == 5
    assert reader.versions.kept_bytes_sent_from(here) == big + 5
    assert reader.versions.kept_bytes_sent_from("198.51.100.1") == 0
    assert [v.bot for v in reader.versions.unmeasured("alice", "203.0.113.7")] == ["three"]
    assert reader.versions.of_bot("three")[0].sent_from == "203.0.113.7"
    store.versions.set_kept_bytes("one", 1, 0)
    assert reader.versions.kept_bytes_sent_from(here) == 5


def test_workers_heartbeats_and_what_they_run(new_store: OpenStore) -> None:
    store = new_store()
    store.workers.seen("w1", "host-a", 11, 2, "")
    store.workers.seen("w2", "host-b", 12, 1, "")
    store.owner = "w1"
    store.matches.create("m1", "bestia", {}, 1, ["a", "b"], CLOCK)
    store.matches.mark_running("m1")
    store.workers.stopped("w2", "stopped by SIGTERM")
    workers = {w.name: w for w in store.workers.all()}
    later = datetime.now(UTC) + timedelta(seconds=1)
    assert workers["w1"].running == ("m1",) and workers["w1"].alive(later, 30)
    assert not workers["w1"].alive(later + timedelta(seconds=60), 30)
    assert workers["w2"].note == "stopped by SIGTERM" and not workers["w2"].alive(later, 30)
    store.workers.seen("w2", "host-b", 12, 1, "")  # it came back
    assert next(w for w in store.workers.all() if w.name == "w2").alive(later, 30)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("mysql://x", "unknown store 'mysql://x'"),
        ("sqlite:", "needs a path"),
        ("postgresql://bisca@127.0.0.1:1/none", "cannot reach the store postgresql://"),
        ("postgresql://bisca:secret@127.0.0.1:1/none", r"bisca:\*\*\*@127.0.0.1"),
        # psycopg's own message repeats a malformed URL whole (review 50).
        ("postgresql://u:secret@[::1/x", r"IPv6 host address in URI: \"postgresql://u:\*\*\*@"),
    ],
)
def test_a_store_that_cannot_be_opened_is_named(url: str, problem: str, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=problem) as refused:
        open_store(url, tmp_path)
    assert "secret" not in str(refused.value)


def test_a_finished_planned_match_gets_no_second_attempt(new_store: OpenStore) -> None:
    """A worker taking a job back reads the slot unplayed, the slow worker it was taken from
    records its result just then (the taker's abandon finds nothing open), and the taker
    starts its attempt: it must be refused, or the planned match is played again and
    recorded finished twice (the game's standings count both)."""
    store = new_store()
    slots = _first_attempt_running(store)
    seen = store.tournaments.slots("t", 0)[0]  # the taker's read: not played yet
    assert not seen.done
    store.matches.finish_and_rate("t-0", 3, result(slots[0]))  # the slow worker's result
    assert store.matches.abandon_unfinished(["t-0"], "cut off") == 0
    assert not store.tournaments.start_attempt("t", 0, "t-0-r2")
    assert store.tournaments.slots("t", 0)[0].match_id == "t-0"
    assert store.tournaments.unplayed("t") == 0


def test_a_postgresql_store_without_its_driver_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The PostgreSQL back end is loaded when a store asks for it (a SQLite store never loads
    psycopg): without psycopg, a PostgreSQL URL is a one-line error, not a traceback."""
    monkeypatch.delitem(sys.modules, "bisca.server.store._postgresql", raising=False)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an import of it finds: nothing
    with pytest.raises(StoreError, match=r"a PostgreSQL store needs its driver.*\(psycopg\)"):
        open_store("postgresql://bisca@127.0.0.1:1/none", tmp_path)
    with open_store(None, tmp_path) as store:  # SQLite needs none of it
        assert store.bots.all() == []
