"""A version's page over the web, as anybody reads it, made once a second at most however many
ask, and its owner's made for each ask (review s58b W1: built for every anonymous asker,
fourteen a second cut the ladder's matches by three quarters); one bot's rating history, keyed
by a name the asker chooses, kept apart from the listings (review s58b W2)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from bisca.server.accounts import SubmissionLimits, connect_version
from bisca.server.web import _ladder, _recent

from .support import get, league_app
from .test_recent import counting_standings
from .test_submissions import bearer_of


def test_a_versions_public_page_is_made_once_for_a_crowd_and_its_owners_for_each_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_recent, "FRESH_S", 3600.0)  # no answer goes stale during the test
    builds: list[bool] = []
    build = _ladder.version_ladder_page

    def counted(*args: object) -> _ladder.JsonObject:
        builds.append(bool(args[2]))  # owner
        return build(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_ladder, "version_ladder_page", counted)

    async def scenario() -> None:
        async with league_app(tmp_path) as (url, league), aiohttp.ClientSession() as cli:
            dave = await bearer_of(league, "dave")
            await asyncio.to_thread(
                connect_version, league.store, SubmissionLimits(), "dave", "dbot"
            )
            page = f"{url}/api/bots/dbot/versions/1/ladder"
            crowd = await asyncio.gather(*(get(cli, page) for _ in range(40)))
            assert {status for status, _ in crowd} == {200}
            assert all(body == crowd[0][1] for _, body in crowd)
            assert crowd[0][1]["counts"] is None  # what the owner alone reads is not in it
            assert builds == [False]
            for _ in range(2):
                status, own = await get(cli, page, **dave)
                assert status == 200 and own["counts"] is not None
            assert builds == [False, True, True]
            status, _ = await get(cli, f"{url}/api/bots/dbot/versions/2/ladder")
            assert status == 404 and builds == [False, True, True]

    asyncio.run(scenario())


def test_histories_of_many_names_push_no_listing_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_recent, "FRESH_S", 3600.0)
    reads = counting_standings(monkeypatch)

    async def scenario() -> None:
        async with league_app(tmp_path) as (url, _), aiohttp.ClientSession() as cli:
            assert (await get(cli, f"{url}/api/leaderboard/belote"))[0] == 200
            for n in range(_recent.KEYS + 10):
                history = f"{url}/api/leaderboard/belote/history?bot=name{n}"
                assert (await get(cli, history))[0] == 200
            assert (await get(cli, f"{url}/api/leaderboard/belote"))[0] == 200

    asyncio.run(scenario())
    assert reads == ["belote"]
