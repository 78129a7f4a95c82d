"""The public listings' answers, made once a second at most however many ask (review 52: a
flood of anonymous GETs from one address cut the ladder by nine tenths): one making for every
asker of a key, made again once stale, a failed making kept for nobody, the keys bounded."""

from __future__ import annotations

import asyncio
import math
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bisca.server.accounts import Registration
from bisca.server.store import MatchRepository, Standings
from bisca.server.web._recent import FRESH_S, RecentAnswers
from tests.cli.league_app import league_app

from .support import call


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_askers_at_once_share_one_making_and_a_stale_answer_is_made_again() -> None:
    clock = Clock()
    answers: RecentAnswers[int] = RecentAnswers(fresh_s=1.0, clock=clock)
    made: list[int] = []

    async def make() -> int:
        made.append(len(made))
        await asyncio.sleep(0)  # the others ask while it is being made
        return len(made)

    async def scenario() -> list[int]:
        first = await asyncio.gather(*(answers.get("board", make) for _ in range(60)))
        clock.now += 0.5
        fresh = await answers.get("board", make)
        clock.now += 0.5
        stale = await answers.get("board", make)
        other = await answers.get("history", make)
        return [*set(first), fresh, stale, other]

    assert asyncio.run(scenario()) == [1, 1, 2, 3]
    assert made == [0, 1, 2]


def test_a_failed_making_fails_its_askers_and_is_not_kept() -> None:
    answers: RecentAnswers[str] = RecentAnswers(clock=Clock())
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        if calls == 1:
            raise OSError("the store is busy")
        return "ok"

    async def scenario() -> list[object]:
        failed = await asyncio.gather(
            answers.get("k", flaky), answers.get("k", flaky), return_exceptions=True
        )
        return [*failed, await answers.get("k", flaky)]

    first, second, third = asyncio.run(scenario())
    assert isinstance(first, OSError) and isinstance(second, OSError) and third == "ok"
    assert calls == 2


def test_an_asker_that_goes_away_leaves_the_making_to_the_others() -> None:
    answers: RecentAnswers[str] = RecentAnswers(clock=Clock())

    async def scenario() -> str:
        gate = asyncio.Event()

        async def slow() -> str:
            await gate.wait()
            return "made"

        leaving = asyncio.ensure_future(answers.get("k", slow))
        staying = asyncio.ensure_future(answers.get("k", slow))
        await asyncio.sleep(0)
        leaving.cancel()
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await leaving
        return await staying

    assert asyncio.run(scenario()) == "made"


def test_at_most_keys_answers_are_kept() -> None:
    answers: RecentAnswers[str] = RecentAnswers(keys=3, clock=Clock())
    made: list[str] = []

    async def scenario() -> None:
        for bot in ["a", "b", "c", "d", "a"]:

            async def make(bot: str = bot) -> str:
                made.append(bot)
                return bot

            assert await answers.get(bot, make) == bot

    asyncio.run(scenario())
    # "a" was the oldest when "d" came: made again; the others were kept.
    assert made == ["a", "b", "c", "d", "a"]


def counting_standings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each read of a game's standings from now on, by its game."""
    reads: list[str] = []
    standings = MatchRepository.standings

    def counted(self: MatchRepository, game: str) -> Standings:
        reads.append(game)
        return standings(self, game)

    monkeypatch.setattr(MatchRepository, "standings", counted)
    return reads


def test_a_flood_of_the_leaderboard_reads_the_store_once_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sixty anonymous askers of the leaderboard at once, through the app: one read of the
    store's standings for all of them (a second or two more if the machine is so loaded that
    the asking lasts longer than an answer stays fresh), and the same answer for all."""
    reads = counting_standings(monkeypatch)
    with league_app(tmp_path / "data", Registration.OPEN) as app:
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=60) as askers:
            answers = list(
                askers.map(lambda _: call(f"{app.url}/api/leaderboard/belote"), range(60))
            )
        lasted = time.monotonic() - started
    assert all(answer == answers[0] and answer[0] == 200 for answer in answers)
    assert 1 <= len(reads) <= 1 + math.ceil(lasted / FRESH_S), (reads, lasted)
