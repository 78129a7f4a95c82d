"""Ratings move the right way: winners up, losers down, ties level, teams together, forfeits
last, a bot holding several seats rated once; and the leaderboard's interval narrows."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from bisca.server.store import (
    INITIAL,
    Rating,
    leaderboard_row,
    rate_match,
    render_csv,
    render_json,
    render_table,
    sides_of,
    t_quantile_975,
)

from .conftest import OpenStore
from .support import seat

CLOCK = {"move_ms": 1000, "bank_ms": 0, "policy": "default"}


def changes_by_bot(game: str, seats: list, current: dict | None = None) -> dict:
    return {c.bot: c for c in rate_match(game, seats, current or {})}


def test_bestia_winner_up_loser_down_in_order_of_chips() -> None:
    seats = [seat(0, "a", 60, 0), seat(1, "b", 10, 1), seat(2, "c", -30, 2), seat(3, "d", -40, 3)]
    changes = changes_by_bot("bestia", seats)
    mus = [changes[bot].after.mu for bot in "abcd"]
    assert mus[0] > INITIAL.mu > mus[3]
    assert mus == sorted(mus, reverse=True)
    assert all(changes[bot].after.sigma < INITIAL.sigma for bot in "abcd")
    assert [changes[bot].rank for bot in "abcd"] == [0, 1, 2, 3]
    assert changes["a"].result == 60


def test_ties_stay_level() -> None:
    seats = [seat(0, "a", 0, 0), seat(1, "b", 0, 0), seat(2, "c", 0, 0), seat(3, "d", 0, 0)]
    changes = changes_by_bot("bestia", seats)
    for bot in "abcd":
        assert changes[bot].after.mu == pytest.approx(INITIAL.mu)
    # A tie between the two leaders: they move together, above the others.
    seats = [seat(0, "a", 50, 0), seat(1, "b", 50, 0), seat(2, "c", -40, 2), seat(3, "d", -60, 3)]
    changes = changes_by_bot("bestia", seats)
    assert changes["a"].after.mu == pytest.approx(changes["b"].after.mu)
    assert changes["a"].rank == changes["b"].rank == 0


def test_belote_teams_are_rated_together() -> None:
    # Seats 0 and 2 against 1 and 3; a team's seats carry its match points.
    seats = [seat(0, "a", 500, 0), seat(1, "b", 300, 2), seat(2, "c", 500, 0), seat(3, "d", 300, 2)]
    changes = changes_by_bot("belote", seats)
    assert changes["a"].after.mu == pytest.approx(changes["c"].after.mu)
    assert changes["b"].after.mu == pytest.approx(changes["d"].after.mu)
    assert changes["a"].after.mu > INITIAL.mu > changes["b"].after.mu
    assert changes["a"].rank == changes["c"].rank == 0 and changes["b"].rank == 1
    # A strong partner takes a smaller share of a win than a doubtful one: the team is one unit
    # whose update is shared by the members' uncertainty.
    current = {"a": Rating(30.0, 2.0)}
    changes = changes_by_bot("belote", seats, current)
    assert changes["a"].after.mu - 30.0 < changes["c"].after.mu - INITIAL.mu


def test_a_draw_in_belote_is_a_tie() -> None:
    seats = [seat(0, "a", 400, 0), seat(1, "b", 400, 0), seat(2, "c", 400, 0), seat(3, "d", 400, 0)]
    changes = changes_by_bot("belote", seats)
    assert {round(c.after.mu, 9) for c in changes.values()} == {round(INITIAL.mu, 9)}


def test_forfeited_seats_rank_last_whatever_their_score() -> None:
    seats = [
        seat(0, "a", 90, 3, forfeited=True),
        seat(1, "b", 10, 0),
        seat(2, "c", -40, 1),
        seat(3, "d", -60, 2),
    ]
    changes = changes_by_bot("bestia", seats)
    assert changes["a"].rank == 3
    assert changes["a"].after.mu < changes["d"].after.mu
    # In Belote a forfeit sinks the whole team.
    seats = [
        seat(0, "a", 600, 3, forfeited=True),
        seat(1, "b", 100, 1),
        seat(2, "c", 600, 0),
        seat(3, "d", 100, 1),
    ]
    changes = changes_by_bot("belote", seats)
    assert changes["a"].rank == changes["c"].rank == 1 and changes["b"].rank == 0
    assert changes["c"].after.mu < INITIAL.mu < changes["b"].after.mu


def test_a_bot_holding_several_seats_is_rated_once() -> None:
    # Bestia: greedy holds seats 0 and 2 and is rated by the mean chips of its seats.
    seats = [seat(0, "g", 40, 0), seat(1, "r", -10, 1), seat(2, "g", -20, 2), seat(3, "r", -10, 1)]
    sides = sides_of("bestia", seats)
    assert [(sorted(s.bots), s.score) for s in sides] == [(["g"], 10.0), (["r"], -10.0)]
    changes = rate_match("bestia", seats, {})
    assert [c.bot for c in changes] == ["g", "r"]
    assert changes[0].after.mu > INITIAL.mu > changes[1].after.mu
    # Belote: one bot per team is a team of two equal members, updated once.
    seats = [seat(0, "g", 500, 0), seat(1, "r", 200, 2), seat(2, "g", 500, 0), seat(3, "r", 200, 2)]
    changes = rate_match("belote", seats, {})
    assert [c.bot for c in changes] == ["g", "r"]
    assert changes[0].after.mu > INITIAL.mu > changes[1].after.mu
    # A bot on both sides of a Belote table: nothing left to rate.
    seats = [seat(0, "g", 500, 0), seat(1, "g", 200, 2), seat(2, "r", 500, 0), seat(3, "x", 200, 2)]
    assert rate_match("belote", seats, {}) == []


def test_t_quantiles() -> None:
    assert t_quantile_975(1) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile_975(30) == pytest.approx(2.042, abs=1e-3)
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=1e-3)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=1e-3)
    assert t_quantile_975(100_000) == pytest.approx(1.95996, abs=1e-4)
    with pytest.raises(ValueError):
        t_quantile_975(0)


def test_confidence_interval_narrows_with_more_matches(new_store: OpenStore) -> None:
    store = new_store()
    noise = random.Random(3)
    widths = {}
    for number in range(1, 61):
        match_id = f"m{number}"
        store.matches.create(
            match_id, "bestia", {}, number, ["a", "b", "a", "b"], CLOCK, rated=True
        )
        chips = noise.randint(-100, 140)
        rank_a = 0 if chips > 0 else 1 if chips < 0 else 0
        rank_b = 0 if chips < 0 else 1 if chips > 0 else 0
        store.matches.finish_and_rate(
            match_id,
            10,
            [
                seat(0, "a", chips, rank_a),
                seat(1, "b", -chips, rank_b),
                seat(2, "a", chips, rank_a),
                seat(3, "b", -chips, rank_b),
            ],
        )
        if number in (5, 20, 60):
            row = next(r for r in store.ratings.leaderboard("bestia") if r.bot == "a")
            assert row.matches == number
            widths[number] = row.ci_half
    assert widths[5] is not None and widths[20] is not None and widths[60] is not None
    assert widths[5] > widths[20] > widths[60] > 0
    store.close()


def test_leaderboard_row_statistics() -> None:
    results = [10.0, 20.0, 60.0]
    mean = sum(results) / 3
    m2 = sum((x - mean) ** 2 for x in results)
    row = leaderboard_row(1, "a", Rating(30.0, 2.0), 3, mean, m2)
    assert row.conservative == pytest.approx(24.0)
    sd = (m2 / 2) ** 0.5
    assert row.ci_half == pytest.approx(4.3027 * sd / 3**0.5, rel=1e-4)
    assert leaderboard_row(1, "a", INITIAL, 1, 5.0, 0.0).ci_half is None


def test_leaderboard_is_sorted_by_the_conservative_rating_and_renders(new_store: OpenStore) -> None:
    store = new_store()
    # "steady" wins often; "lucky" wins once: more matches, less doubt, a higher μ−3σ.
    for number in range(8):
        match_id = f"m{number}"
        bots = ["steady", "lucky", "weak", "weaker"] if number == 0 else ["steady", "weak"] * 2
        store.matches.create(match_id, "bestia", {}, number, bots, CLOCK, rated=True)
        if number == 0:
            seats = [seat(0, "lucky", 90, 0), seat(1, "steady", 10, 1), seat(2, "weak", -40, 2)]
            seats.append(seat(3, "weaker", -60, 3))
        else:
            seats = [seat(0, "steady", 30, 0), seat(1, "weak", -30, 1)]
            seats += [seat(2, "steady", 30, 0), seat(3, "weak", -30, 1)]
        store.matches.finish_and_rate(match_id, 5, seats)
    rows = store.ratings.leaderboard("bestia")
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    conservative = [r.conservative for r in rows]
    assert conservative == sorted(conservative, reverse=True)
    assert rows[0].bot == "steady"
    assert store.ratings.leaderboard("bestia", limit=2) == rows[:2]
    assert store.ratings.leaderboard("belote") == []
    table = "\n".join(render_table("bestia", rows))
    assert "μ−3σ" in table and "chips" in table and "steady" in table
    data = json.loads(render_json("bestia", rows))
    assert data["game"] == "bestia" and [r["bot"] for r in data["rows"]] == [r.bot for r in rows]
    parsed = list(csv.DictReader(io.StringIO(render_csv(rows))))
    assert parsed[0]["bot"] == "steady" and float(parsed[0]["mu"]) == pytest.approx(rows[0].mu)
    history = store.ratings.history("bestia", "steady")
    assert len(history) == 8 and history[-1].mu == pytest.approx(rows[0].mu)
    # The newest only (the web's history answer is bounded), still oldest first.
    assert store.ratings.history("bestia", "steady", newest=3) == history[-3:]
    assert store.ratings.history("bestia", newest=10_000) == store.ratings.history("bestia")
    store.close()
