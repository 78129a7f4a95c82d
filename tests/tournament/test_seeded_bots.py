"""Seeded sample bots: a run with a fixed seed plays the same moves again.

The arena gives every bot it launches ``BISCA_SEED`` (``bisca match``: from the match's seed and
the seat; a tournament: from its seed and the bot's name), and the sample ``random`` bot draws
each choice from its seed and the request, so neither the order in which concurrent matches
send their requests nor a fresh match id changes a move.  Unseeded random bots would make
these runs differ at once: a one-deal Belote match between random bots has thousands of
outcomes.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
from pathlib import Path

from bisca.client import Clock, Request
from bisca.client.bots import random_bot
from bisca.engine import new_match
from bisca.server.store import Store
from tests.support.commands import BISCA, bisca

from .support import tournament_text

#: A match's line of the result table, without its (fresh) match id.
_RESULT = re.compile(r"^(?:match m-\S+: (.*)|( +\d+ .*))$")


def outcomes(data: Path) -> dict[str, tuple[object, ...]]:
    """Every match's seed, steps and seats' scores and ranks, by match id."""
    db = sqlite3.connect(f"file:{data / 'bisca.sqlite3'}?mode=ro", uri=True)
    try:
        matches = db.execute("SELECT id, seed, steps, status FROM matches").fetchall()
        seats = db.execute(
            "SELECT match_id, seat, bot_name, score, rank FROM match_seats ORDER BY seat"
        ).fetchall()
    finally:
        db.close()
    return {
        match_id: (seed, steps, status, [s[1:] for s in seats if s[0] == match_id])
        for match_id, seed, steps, status in matches
    }


def test_a_tournament_with_a_fixed_seed_gives_the_same_results_twice(tmp_path: Path) -> None:
    spec = tmp_path / "seeded.toml"
    spec.write_text(
        tournament_text(
            name="seeded",
            per_pairing=3,
            concurrency=2,  # concurrent matches: their requests interleave differently each run
            bots=(("alice", "random"), ("bob", "random"), ("carol", "greedy")),
        )
    )
    runs = []
    for run in ("first", "second"):
        data = tmp_path / run
        done = bisca("tournament", "run", str(spec), "--data", str(data), timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        board = Store.in_directory(data).ratings.leaderboard("belote")
        runs.append(
            (
                outcomes(data),
                # Ratings are applied as matches finish, an order concurrency changes; the
                # results per bot are the same whatever the order.
                sorted((row.bot, row.matches, round(row.mean_result, 6)) for row in board),
            )
        )
    (first, first_board), (second, second_board) = runs
    assert len(first) == 9 and all(match[2] == "finished" for match in first.values())
    assert second == first
    assert second_board == first_board


def table(data: Path, *options: str) -> list[str]:
    done = bisca(
        "match", "--game", "belote", "--deals", "1", "--data", str(data), *options,
        *("--bot", "random") * 4,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [_RESULT.match(line) for line in done.stdout.splitlines()]
    return [next(group for group in found.groups() if group) for found in lines if found]


def test_bisca_match_with_a_seed_plays_the_same_moves_again(tmp_path: Path) -> None:
    first = table(tmp_path / "a", "--seed", "11")
    assert first[0].startswith("belote, finished,") and len(first) == 5
    assert table(tmp_path / "b", "--seed", "11") == first


def test_the_seeded_random_bot_depends_on_the_request_alone() -> None:
    """Two bots of one seed agree on every request of a match, whatever they were asked
    before; another seed disagrees somewhere."""
    state = new_match("belote", {"deals": 1}, seed=3)
    one, same, other = random_bot(5), random_bot(5), random_bot(6)
    differs = False
    while not state.is_over:
        seat = state.to_act
        request = Request(
            "r", "m", "belote", seat, state.observation(seat), state.legal_actions(), Clock(1, 1)
        )
        choice = one(request)
        assert same(request) == choice == same(request)
        differs |= other(request) != choice
        state.apply(choice)
    assert differs


def test_a_bisca_seed_that_is_not_a_number_is_named() -> None:
    done = subprocess.run(
        [*BISCA, "bot", "random", "--address", "127.0.0.1:9"],
        env={**os.environ, "BISCA_SEED": "seven"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "bisca bot: BISCA_SEED must be a whole number, got 'seven'"
