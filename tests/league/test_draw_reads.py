"""The ladder reads each version's matches of the last hour (its pace) and of the last week (its
rest) at every draw: those reads go through the index of when matches were created, so their
cost follows the recent matches, not the whole history of the league (migration 14)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bisca.server.league import in_pace_window, resting
from bisca.server.store import Store, stamp
from tests.support.sqlite_work import counted_work

ME = "ada.v1"
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def _old_matches(path: Path, first: int, count: int) -> None:
    """``count`` finished matches of ``ME`` from a month ago, written straight to the file."""
    rows = [
        (
            f"m-{first + n}",
            "belote",
            "{}",
            n,
            "finished",
            json.dumps([ME, "bob.v1", "cy.v1", "dee.v1"]),
            "{}",
            stamp(NOW - timedelta(days=30, seconds=n)),
            stamp(NOW - timedelta(days=30, seconds=n - 20)),
        )
        for n in range(count)
    ]
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO matches (id, game, settings, seed, status, bots, clock, created_at,"
            " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


def _work_of_a_draws_reads(path: Path) -> int:
    """SQLite's instructions (in thousands) for the pace's and the rest's reads of ``ME``."""
    work, (recent, rest) = counted_work(
        path, lambda store: (in_pace_window(store, ME, NOW), resting(store, ME, NOW))
    )
    assert recent == [] and rest is None  # a month-old history: no pace, no rest
    return work


def test_a_versions_reads_at_a_draw_do_not_grow_with_its_old_matches(tmp_path: Path) -> None:
    path = tmp_path / "data" / "bisca.sqlite3"
    Store(path).close()
    _old_matches(path, 0, 2_000)
    with_few = _work_of_a_draws_reads(path)
    _old_matches(path, 2_000, 8_000)
    with_many = _work_of_a_draws_reads(path)
    # Scanned, 10,000 matches of the version cost some hundreds of thousands of instructions
    # more than 2,000; through the index, the month-old ones are never visited.
    assert with_many <= with_few + 2, (with_few, with_many)
