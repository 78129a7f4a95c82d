"""A version's page sums what went wrong in its seats, for its owner, at every view
(``MatchRepository.player_totals``): the store counts it from the indexed seats of the finished
matches and the indexed statuses of the others (migration 15), so the sums are exact on both back
ends and a view's work does not grow with the rest of the league's history."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

from bisca.server.records import SeatRecord
from bisca.server.store import Incidents, PlayerTotals, Store
from tests.store.conftest import OpenStore
from tests.store.support import seat
from tests.support.sqlite_work import counted_work

ME = "ada.v1"
CLOCK = {"move_ms": 1000, "bank_ms": 0}


def _troubled(number: int, bot: str, **went_wrong: int) -> SeatRecord:
    return dataclasses.replace(seat(number, bot, 0, number + 1), **went_wrong)


def test_the_totals_count_every_match_and_sum_the_finished_ones_seats(
    new_store: OpenStore,
) -> None:
    store = new_store()
    # "ada.v10" begins with "ada.v1": never counted as it.
    bots = [ME, "bob.v1", "ada.v10", "cy.v1"]
    for n in range(3):
        store.matches.create(f"done-{n}", "belote", {}, n, bots, CLOCK)
        store.matches.finish(
            f"done-{n}",
            40,
            [
                _troubled(0, ME, timeouts=n, illegal_moves=1, defaults_played=2 * n),
                _troubled(1, "bob.v1", timeouts=5, crashes=1),
                _troubled(2, "ada.v10", timeouts=7, illegal_moves=3),
                seat(3, "cy.v1", 0, 4),
            ],
        )
    store.matches.create("crashed", "belote", {}, 9, bots, CLOCK)
    store.matches.finish(
        "crashed",
        3,
        [
            dataclasses.replace(seat(0, ME, 0, 4, forfeited=True), crashes=1, defaults_played=9),
            seat(1, "bob.v1", 0, 1),
            seat(2, "ada.v10", 0, 2),
            seat(3, "cy.v1", 0, 3),
        ],
    )
    store.matches.create("failed", "belote", {}, 10, bots, CLOCK)
    store.matches.fail("failed", "a bot never came")
    store.matches.create("running", "belote", {}, 11, bots, CLOCK)
    store.matches.mark_running("running")
    store.matches.create("waiting", "belote", {}, 12, bots, CLOCK)
    store.matches.create(
        "not-mine", "belote", {}, 13, ["ada.v10", "bob.v1", "cy.v1", "x.v1"], CLOCK
    )
    store.matches.fail("not-mine", "a bot never came")

    totals = store.matches.player_totals(ME)

    # The same as every match the store finds for it, summed seat by seat.
    found = store.matches.find(None, None, player=ME)
    counted = Incidents()
    for match in found:
        for record in match.seats:
            if record.bot_name == ME:
                counted.add(record)
    assert totals == PlayerTotals(matches=len(found), forfeits=1, incidents=counted)
    assert totals == PlayerTotals(
        matches=7,  # four finished, one failed, one running, one waiting
        forfeits=1,
        incidents=Incidents(crashes=1, timeouts=3, illegal_moves=3, defaults_played=15),
    )
    assert store.matches.player_totals("nobody.v1") == PlayerTotals(0, 0, Incidents())


def _history(path: Path, first: int, count: int, players: list[str]) -> None:
    """``count`` finished matches of ``players``, with their seats, written straight to the
    file (the store's way syncs each), created before every match the store writes itself."""
    matches, seats = [], []
    for n in range(first, first + count):
        matches.append(
            (f"old-{n}", "belote", "{}", n, "finished", json.dumps(players), "{}",
             f"2026-01-01T00:00:{n:09d}Z", f"2026-01-01T00:01:{n:09d}Z")
        )  # fmt: skip
        seats += [(f"old-{n}", number, bot, 0, number + 1, 0) for number, bot in enumerate(players)]
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO matches (id, game, settings, seed, status, bots, clock, created_at,"
            " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            matches,
        )
        db.executemany(
            "INSERT INTO match_seats (match_id, seat, bot_name, score, rank, forfeited)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            seats,
        )


def _work_of_the_totals(path: Path) -> tuple[int, PlayerTotals]:
    """SQLite's instructions (in thousands) for ``ME``'s totals, and the totals."""
    return counted_work(path, lambda store: store.matches.player_totals(ME))


def test_the_totals_read_the_players_seats_not_the_leagues_history(tmp_path: Path) -> None:
    path = tmp_path / "data" / "bisca.sqlite3"
    Store(path).close()
    _history(path, 0, 50, [ME, "bob.v1", "cy.v1", "dee.v1"])
    _history(path, 50, 2_000, ["bob.v1", "cy.v1", "dee.v1", "eve.v1"])
    with_few, totals = _work_of_the_totals(path)
    assert totals.matches == 50
    _history(path, 2_050, 8_000, ["bob.v1", "cy.v1", "dee.v1", "eve.v1"])
    with_many, totals = _work_of_the_totals(path)
    assert totals.matches == 50
    # Scanned, 8,000 more matches of other bots (32,000 seats) cost some millions of
    # instructions; through the indexes, they are never visited.
    assert with_many <= with_few + 2, (with_few, with_many)
