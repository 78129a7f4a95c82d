"""What ``bisca match`` shows: seats named after their bots, places counted by sides, and a
line every few seconds while it plays (in-process; the clock is trio's MockClock)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import trio
import trio.testing

from bisca.engine import GAMES
from bisca.server.records import MatchStatus, SeatEnd, SeatRecord, places
from bisca.server.tournament._local import (
    PROGRESS_EVERY_S,
    LocalMatch,
    _report_steps,
    result_table,
    seat_names,
)


def test_seats_are_named_after_their_bots_not_their_interpreters() -> None:
    commands = ["greedy", "python3 bots/my_bot.py --fast", "random", "random"]
    assert seat_names(commands) == ["greedy", "my_bot", "random-seat2", "random-seat3"]
    assert seat_names(["./build/my_bot", "node 'his bot.js'"]) == ["my_bot", "his_bot"]


def seat(number: int, score: int, rank: int) -> SeatRecord:
    return SeatRecord(number, f"b{number}", "", score, rank, SeatEnd.COMPLETED, "", 0, 0)


def test_a_losing_belote_team_is_second_not_third() -> None:
    belote = [seat(0, 0, 2), seat(1, 162, 0), seat(2, 0, 2), seat(3, 162, 0)]
    assert places(belote, GAMES["belote"].side_of) == [2, 1, 2, 1]
    bestia = [seat(0, 5, 1), seat(1, 9, 0), seat(2, 5, 1), seat(3, -19, 3)]
    assert places(bestia, GAMES["bestia"].side_of) == [2, 1, 2, 4]


@dataclass
class FakeRunner:
    steps: int = 0
    done: trio.Event = field(default_factory=trio.Event)


def test_a_long_match_says_how_far_it_is() -> None:
    lines: list[str] = []

    async def scenario() -> None:
        runner = FakeRunner()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_report_steps, runner, lines.append)
            # Reports at 3 s and 6 s; the steps change halfway between them (no tie of wakeups).
            runner.steps = 40
            await trio.sleep(PROGRESS_EVERY_S * 1.5)
            runner.steps = 90
            await trio.sleep(PROGRESS_EVERY_S)
            runner.done.set()
        assert lines == ["  ... 40 steps played", "  ... 90 steps played"]

    trio.run(scenario, clock=trio.testing.MockClock(autojump_threshold=0))


def test_the_result_names_both_output_logs_of_the_seats(tmp_path: Path) -> None:
    """Review 45 (L5): the guide's bot prints its report on stdout, and `bisca match` sent its
    author to the stderr logs only."""
    runner = SimpleNamespace(
        id="m-1", game="belote", status=MatchStatus.FINISHED, steps=0, seed=1, reason="", results=[]
    )
    match = LocalMatch(runner, tmp_path, [], [])  # type: ignore[arg-type]
    assert result_table(match)[-1] == f"bot output: {tmp_path}/seat*.std{{out,err}}.log"
