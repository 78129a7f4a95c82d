"""The continuous ladder on a local SQLite league, with the real sandbox and the league
server's own referee: every active version plays rated matches, a new version gets the next
one, a suspended account's versions stop while their ratings stay (the draw's own
statistics: ``tests/league/test_ladder.py``; the ladder in ``bisca serve``:
``tests/cli/test_league_server.py``)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from bisca.engine import GAMES
from bisca.server.edge import ServerConfig
from bisca.server.hosting import Ladder
from bisca.server.league import LadderSettings
from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import AccountStatus, Store
from bisca.server.tournament import running_arena
from tests.support.league import PASSWORD, active_version, starter_bot

pytestmark = pytest.mark.system

BOTS = ("ada", "bob", "cy", "dee", "eve")
#: The account whose bot is the Node starter: the ladder runs it with the arena's Node SDK, as
#: the gate's validation does.
NODE_BOT = "dee"


@dataclass
class Played:
    #: Each pass's matches, as the store recorded them.
    first: list[MatchRecord]
    newcomer: list[MatchRecord]
    suspended: list[MatchRecord]
    players_after: set[str]
    store: Store


async def play_the_ladder(tmp: Path) -> Played:
    data = tmp / "data"
    config = ServerConfig(data_dir=data, listen=["127.0.0.1:0"], admin_token="t" * 32)
    async with running_arena(config, SandboxPolicy()) as (server, launcher):
        store = server.referee.store
        uploads = data / "submissions"
        folders = {}
        for name in BOTS:
            store.accounts.create(name, PASSWORD)
            language = "node" if name == NODE_BOT else "python"
            folders[name] = starter_bot(tmp / f"{name}bot", language)
            active_version(store, uploads, name, folders[name])
        games = {"belote": GAMES["belote"].settings({"deals": 1})}
        settings = LadderSettings(matches_per_hour=50, newcomer_matches=1, duplicate=False)
        ladder = Ladder(store, uploads, games, settings, random.Random(7))

        async def one_pass() -> list[MatchRecord]:
            ids = await ladder.play_next(server, launcher)
            found = [store.matches.get(match_id) for match_id in ids]
            return [match for match in found if match is not None]

        # Five versions, four seats: the one left out is the anchor of the second pairing.
        first = await one_pass() + await one_pass()
        active_version(store, uploads, "ada", folders["ada"])  # adabot v2, a newcomer
        newcomer = await one_pass()
        store.accounts.set_status("eve", AccountStatus.SUSPENDED)
        suspended = await one_pass() + await one_pass()
        players_after = {row.bot for row in store.ratings.leaderboard("belote")}
    return Played(first, newcomer, suspended, players_after, Store(data / "bisca.sqlite3"))


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return asyncio.run(play_the_ladder(tmp_path_factory.mktemp("ladder")))


def test_every_active_version_plays_rated_matches(played: Played) -> None:
    assert len(played.first) == 2
    for match in played.first:
        assert (match.status, match.rated, match.game) == (MatchStatus.FINISHED, True, "belote")
        assert len({player.split(".")[0] for player in match.bots}) == 4  # four bots
        # Every seat played its match to the end: the Node version too, on the arena's SDK.
        assert [seat.crashes for seat in match.seats] == [0] * 4, match.seats
        assert not any(seat.forfeited for seat in match.seats), match.seats
    seated = {player for match in played.first for player in match.bots}
    assert seated == {f"{name}bot.v1" for name in BOTS}
    ids = {match.id for match in played.first}
    history = played.store.ratings.history("belote")
    assert {update.bot for update in history if update.match_id in ids} == seated


def test_a_new_version_gets_the_next_match(played: Played) -> None:
    [match] = played.newcomer
    assert "adabot.v2" in match.bots and "adabot.v1" not in match.bots


def test_a_suspended_accounts_versions_stop_and_their_results_stay(played: Played) -> None:
    assert len(played.suspended) == 2
    for match in played.suspended:
        assert "evebot.v1" not in match.bots
    assert "evebot.v1" in played.players_after


def test_each_seat_of_a_version_keeps_its_stderr_beside_the_match(played: Played) -> None:
    match = played.first[0]
    folder = played.store.data_dir / "matches" / match.id
    assert sorted(path.name for path in folder.glob("seat*.stderr.log")) == [
        f"seat{seat}.stderr.log" for seat in range(4)
    ]
