"""A version whose bot fails its last matches before they start rests (``league.resting``,
review 52): from the third failure in a row, 10 minutes after the last, twice as long for each
more, at most a day; read from the store each time, so it heals itself.  Only the version's own
failures count: its seat named, or its name among the bots that never connected; matches its
pairing never came to are not counted, and a match played ends the streak."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path

import pytest

import bisca.server.store._match_repository as match_repository  # its clock, patched
from bisca.server.league import (
    FIRST_REST,
    SERVER_STOPPED_ROTATION,
    UNPLAYED_LADDER_ROTATION,
    in_pace_window,
    resting,
    seconds_played,
)
from bisca.server.records import (
    MatchStatus,
    SeatEnd,
    SeatRecord,
    bots_blamed,
    bots_not_connected,
    seat_bot_failed,
)
from bisca.server.store import Store, stamp

CLOCK = {"move_ms": 1000, "bank_ms": 0, "policy": "default"}
ME = "ada.v1"
BOTS = [ME, "bob.v1", "cy.v1", "dee.v1"]
ids = count()


@pytest.fixture(autouse=True)
def _a_second_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's clock, a second on at each reading: the matches' order is their times'."""
    seconds = count()
    start = datetime(2026, 12, 7, tzinfo=UTC)
    monkeypatch.setattr(
        match_repository, "now", lambda: stamp(start + timedelta(seconds=next(seconds)))
    )


def _failed(store: Store, reason: str) -> str:
    match_id = f"m-{next(ids)}"
    store.matches.create(match_id, "belote", {}, 7, BOTS, CLOCK)
    store.matches.fail(match_id, reason)
    return match_id


def _played(store: Store) -> None:
    match_id = f"m-{next(ids)}"
    store.matches.create(match_id, "belote", {}, 7, BOTS, CLOCK)
    store.matches.mark_running(match_id)
    store.matches.finish(
        match_id,
        32,
        [SeatRecord(n, b, "", 0, 1, SeatEnd.COMPLETED, "", 0, 0) for n, b in enumerate(BOTS)],
    )


def _ended_at(store: Store, match_id: str) -> datetime:
    record = store.matches.get(match_id)
    assert record is not None and record.status is MatchStatus.FAILED and record.finished_at
    return datetime.fromisoformat(record.finished_at)


def test_the_third_failure_in_a_row_rests_the_version_and_each_more_doubles_it(
    tmp_path: Path,
) -> None:
    with Store.in_directory(tmp_path) as store:
        _failed(store, "seat 0's bot exited with status 3 before the match started")
        _failed(store, f"bots not connected after 60 s: {ME}")
        now = datetime(2026, 12, 7, tzinfo=UTC)
        assert resting(store, ME, now) is None  # two
        last = _failed(store, "seat 0's bot could not start: no such file")
        rest = resting(store, ME, now)
        assert rest is not None and rest.streak == 3 and rest.last.id == last
        assert rest.until == _ended_at(store, last) + FIRST_REST
        assert resting(store, ME, rest.until) is None  # over at its end
        _failed(store, UNPLAYED_LADDER_ROTATION)  # not tried: not counted
        last = _failed(store, "seat 0's bot exited with status 3 before the match started")
        rest = resting(store, ME, now)
        assert rest is not None and rest.streak == 4
        assert rest.until == _ended_at(store, last) + 2 * FIRST_REST
        for _ in range(12):
            last = _failed(store, "seat 0's bot exited with status 3 before the match started")
        rest = resting(store, ME, now)
        assert rest is not None and rest.until == _ended_at(store, last) + timedelta(hours=24)
        _played(store)  # a match played ends the streak
        assert resting(store, ME, now) is None


def test_only_the_versions_own_failures_count(tmp_path: Path) -> None:
    with Store.in_directory(tmp_path) as store:
        for _ in range(3):
            _failed(store, "seat 1's bot exited with status 3 before the match started")
            _failed(store, "bots not connected after 60 s: bob.v1, cy.v1")
            _failed(store, "internal error: the log could not be written")
        now = datetime(2026, 12, 7, tzinfo=UTC)
        assert resting(store, ME, now) is None
        assert resting(store, "bob.v1", now) is None  # its failures are not in a row
        for _ in range(3):
            _failed(store, "seat 2's bot exited with status 3 before the match started")
        rest = resting(store, "cy.v1", now)
        assert rest is not None and rest.streak == 3
        assert resting(store, ME, now) is None and resting(store, "bob.v1", now) is None


def test_the_pace_counts_the_matches_tried_and_the_time_they_took(tmp_path: Path) -> None:
    """A pairing stopped at a failed rotation leaves three unplayed, which took nobody's
    time: the pace (matches started in the hour) and the time at the table leave them out."""
    with Store.in_directory(tmp_path) as store:
        _failed(store, "seat 1's bot exited with status 3 before the match started")
        for _ in range(3):
            _failed(store, UNPLAYED_LADDER_ROTATION)
        _failed(store, SERVER_STOPPED_ROTATION)  # (a server's stop closed it: not played)
        _played(store)
        now = datetime(2026, 12, 7, 0, 5, tzinfo=UTC)
        tried = in_pace_window(store, ME, now)
        assert len(tried) == 2
        # Each match's creation and end are two readings of the store's clock: a second each.
        assert seconds_played(tried, now) == 2.0


def test_a_failures_reason_names_the_bots_it_blames() -> None:
    """The two public forms a failure before the start takes, and what they blame."""
    bots = ["a.v1", "b.v1", "c.v1", "d.v1", "e.v1", "f.v1", "g.v1", "h.v1", "i.v1", "j.v1", "k.v1"]
    ended = seat_bot_failed(1, "exited with status 3 before the match started")
    assert ended == "seat 1's bot exited with status 3 before the match started"
    assert bots_blamed(ended, bots) == {"b.v1"}  # not seat 10's
    assert bots_blamed(seat_bot_failed(10, "could not start: no such file"), bots) == {"k.v1"}
    late = bots_not_connected(60, ["c.v1", "j.v1"])
    assert late == "bots not connected after 60 s: c.v1, j.v1"
    assert bots_blamed(late, bots) == {"c.v1", "j.v1"}
    assert bots_blamed("internal error: seat 1's bot", bots) == set()
