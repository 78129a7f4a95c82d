"""Standings: wins, draws and losses by bot (not by seat), head to head between opponents only,
and Belote's margin; counted from match records and through a real store."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from bisca.server.records import MatchRecord, MatchStatus, SeatRecord
from bisca.server.store import (
    Result,
    Store,
    match_results,
    render_json,
    render_table,
    standings,
)

from .support import seat


def test_bestia_wins_agree_with_the_chips() -> None:
    """The issue's contradiction: a bot on three of five seats that wins one seat big each
    match but loses chips overall had the most wins and the worst chips."""
    matches = [
        finished(
            "bestia",
            seat(0, "many", 20, 0),
            seat(1, "many", -30, 4),
            seat(2, "many", -30, 4),
            seat(3, "one", 10, 1),
            seat(4, "two", 30 - 20 + 20, 0),
        )
        for _ in range(3)
    ]
    table = standings("bestia", matches)
    many = table.tallies["many"]
    assert (many.wins, many.losses) == (0, 3)
    assert (table.tallies["two"].wins, table.tallies["one"].wins) == (3, 0)
    # Head to head carries the pair's mean margin (side score minus side score).
    versus = table.against("two", "many")
    assert versus is not None and versus.mean_margin == 30 - (20 - 30 - 30) / 3


def test_incidents_are_summed_over_every_seat_of_a_bot() -> None:
    def troubled(number: int, bot: str, score: int, rank: int) -> SeatRecord:
        base = seat(number, bot, score, rank)
        return dataclasses.replace(base, crashes=1, timeouts=2, illegal_moves=3, defaults_played=4)

    match = belote("x", "y", "x", "y", 120, 42)
    match = dataclasses.replace(
        match, seats=[troubled(0, "x", 120, 0), *match.seats[1:3], troubled(3, "y", 42, 1)]
    )
    table = standings("belote", [match, belote("x", "y", "x", "y", 100, 62)])
    assert table.incidents["x"].text() == "1/2/3/4"
    assert dataclasses.astuple(table.incidents["y"]) == (1, 2, 3, 4)


def finished(
    game: str, *seats: SeatRecord, status: MatchStatus = MatchStatus.FINISHED
) -> MatchRecord:
    return MatchRecord(
        id="m",
        game=game,
        settings={},
        seed=1,
        status=status,
        bots=[s.bot_name for s in seats],
        clock={},
        reason="",
        steps=1,
        created_at="",
        finished_at=None,
        seats=list(seats),
        rated=True,
    )


def belote(a: str, b: str, c: str, d: str, team0: int, team1: int) -> MatchRecord:
    """Seats 0 and 2 (a, c) against seats 1 and 3 (b, d)."""
    rank0 = 0 if team0 >= team1 else 1
    rank1 = 0 if team1 >= team0 else 1
    return finished(
        "belote",
        seat(0, a, team0, rank0),
        seat(1, b, team1, rank1),
        seat(2, c, team0, rank0),
        seat(3, d, team1, rank1),
    )


W, D, L = Result.WIN, Result.DRAW, Result.LOSS


def test_partners_win_together_and_a_tie_is_a_draw() -> None:
    assert match_results(belote("x", "y", "z", "y", 120, 42)) == {"x": W, "z": W, "y": L}
    assert match_results(belote("x", "y", "x", "y", 81, 81)) == {"x": D, "y": D}


def test_a_bot_on_several_seats_counts_once_by_its_mean_as_the_rating_does() -> None:
    # Bestia, two bots over four seats: x's mean (2) beats y's (-2).
    match = finished(
        "bestia", seat(0, "x", -5, 3), seat(1, "y", 2, 1), seat(2, "x", 9, 0), seat(3, "y", -6, 2)
    )
    assert match_results(match) == {"x": W, "y": L}
    # First place shared by seats of two bots: a draw for both, whatever the other seats did.
    shared = finished("bestia", seat(0, "x", 4, 0), seat(1, "y", 4, 0), seat(2, "z", -8, 2))
    assert match_results(shared) == {"x": D, "y": D, "z": L}
    # x's best seat came first alone, but its mean is below y's: y wins, as in the rating.
    split = finished(
        "bestia", seat(0, "x", 9, 0), seat(1, "y", 3, 1), seat(2, "x", -15, 3), seat(3, "y", 3, 1)
    )
    assert match_results(split) == {"x": L, "y": W}
    # First place shared by two seats of the same bot is a win.
    alone = finished("bestia", seat(0, "x", 4, 0), seat(1, "y", -8, 2), seat(2, "x", 4, 0))
    assert match_results(alone) == {"x": W, "y": L}


def test_a_match_of_one_bot_counts_for_nobody() -> None:
    assert match_results(belote("x", "x", "x", "x", 100, 62)) == {}
    table = standings("belote", [belote("x", "x", "x", "x", 100, 62)])
    assert table.matches == 0 and table.bots == []


def test_standings_count_results_head_to_head_and_margins() -> None:
    matches = [
        belote("x", "y", "x", "y", 120, 42),
        belote("y", "x", "y", "x", 100, 62),
        belote("x", "y", "x", "y", 81, 81),
        belote("x", "z", "y", "z", 90, 72),  # x and y partners against z
        finished("bestia", seat(0, "x", 5, 0), seat(1, "y", -5, 1)),  # another game
        finished(  # not finished: not counted
            "belote", seat(0, "x", 0, 0), seat(1, "y", 0, 0), status=MatchStatus.FAILED
        ),
    ]
    table = standings("belote", matches)
    assert table.matches == 4
    tally = {bot: (t.wins, t.draws, t.losses) for bot, t in table.tallies.items()}
    assert tally == {"x": (2, 1, 1), "y": (2, 1, 1), "z": (0, 0, 1)}
    # x against y: a win, a loss and a draw; as partners in the fourth match they did not meet.
    versus = table.against("x", "y")
    assert versus is not None and (versus.wins, versus.draws, versus.losses) == (1, 1, 1)
    assert table.against("z", "x") is not None and table.against("z", "y") is not None
    assert table.against("z", "z") is None
    assert table.mean_margin("x") == (78 - 38 + 0 + 18) / 4
    assert table.mean_margin("z") == -18
    # Bestia has no sides to take a margin between.
    assert standings("bestia", matches).mean_margin("x") is None


def test_the_store_counts_rated_finished_matches_and_the_table_shows_them(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "bisca.sqlite3") as store:
        for number, (team0, team1) in enumerate([(120, 42), (50, 112), (81, 81)]):
            match_id = f"m{number}"
            store.matches.create(
                match_id, "belote", {}, number, ["a", "b", "a", "b"], {}, rated=True
            )
            store.matches.mark_running(match_id)
            store.matches.finish_and_rate(
                match_id,
                10,
                list(belote("a", "b", "a", "b", team0, team1).seats),
            )
        store.matches.create("unrated", "belote", {}, 9, ["a", "b", "a", "b"], {}, rated=False)
        store.matches.mark_running("unrated")
        store.matches.finish_and_rate("unrated", 10, list(belote("a", "b", "a", "b", 162, 0).seats))
        table = store.matches.standings("belote")
        rows = store.ratings.leaderboard("belote")
    assert (table.tallies["a"].wins, table.tallies["a"].draws, table.tallies["a"].losses) == (
        1,
        1,
        1,
    )
    text = "\n".join(render_table("belote", rows, table))
    assert "head to head" in text and "1-1-1 +5.3" in text and "mean margin" in text
    assert "not a margin" in text and "C/T/I/D" in text and "0/0/0/0" in text
    # The head-to-head rows follow the leaderboard's ranks, not the wins.
    crossed = text.split("head to head")[1].splitlines()[4:]
    assert [line.split()[0] for line in crossed if line.strip()] == [row.bot for row in rows]
    document = json.loads(render_json("belote", rows, table))
    assert {"crashes", "timeouts", "illegal_moves", "defaults_played"} <= set(document["rows"][0])
