"""The continuous ladder on a local SQLite league, with the real sandbox and the league
server's own referee: every active version plays rated matches, a new version gets the next
one, a suspended account's versions stop while their ratings stay; with duplicate deals every
rotation of a pairing plays one deal; a version that crashes or runs out of its clock has it
counted, for its owner to see (the draw's own statistics: ``tests/league/test_ladder.py``;
the ladder in ``bisca serve``: ``tests/cli/test_league_server.py``)."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from bisca.engine import GAMES
from bisca.server.edge import ServerConfig
from bisca.server.hosting import Ladder
from bisca.server.league import LadderSettings
from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.referee import ServerOptions, clock_settings
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import AccountStatus, BotVersionRecord, Incidents, Store
from bisca.server.tournament import running_arena
from bisca.server.web import version_ladder_page
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


def test_each_seat_of_a_version_keeps_its_output_in_the_store_and_none_beside_the_match(
    played: Played,
) -> None:
    """What the owner's page reads, whichever machine played: each seat's streams, in the
    store; the files the sandbox wrote beside the match are removed once it holds them."""
    match = played.first[0]
    kept = played.store.logs.output(match.id)
    assert sorted(kept) == [0, 1, 2, 3]
    for seat, record in kept.items():
        assert f"match {match.id} started".encode() in record.stderr, record
        assert f"seat {seat}".encode() in record.stderr, record
        assert record.stdout is not None
    folder = played.store.data_dir / "matches" / match.id
    assert folder.is_dir() and not list(folder.glob("seat*.log"))


#: The troubled ladder's clock: two seconds a move, no bank, a default move for a late seat.
MOVE_MS = 2000
#: A starter that ends its process at its third decision of a match.
CRASHES = """
_decisions = 0


def choose(request: Request[Any, Any]) -> Any:
    global _decisions
    _decisions += 1
    if _decisions == 3:
        print("crashbot: leaving mid-match", file=sys.stderr, flush=True)
        os._exit(3)
    return random.choice(request.legal_actions)
"""
#: A starter that sleeps past its move clock at its first decision of a match.
SLEEPS = f"""
_decisions = 0


def choose(request: Request[Any, Any]) -> Any:
    global _decisions
    _decisions += 1
    if _decisions == 1:
        time.sleep({1.5 * MOVE_MS / 1000})
    return random.choice(request.legal_actions)
"""


def troubled_bot(folder: Path, choose: str) -> Path:
    """The Python starter with its ``choose`` replaced."""
    starter_bot(folder)
    script = folder / "my_bot.py"
    text = script.read_text()
    start, end = text.index("def choose("), text.index('if __name__ == "__main__":')
    head = text[:start].replace("import random\n", "import os, random, sys, time\n")
    script.write_text(head + choose.lstrip() + "\n\n" + text[end:])
    return folder


@dataclass
class Troubled:
    #: The matches of the one pairing played, with duplicate deals.
    matches: list[MatchRecord]
    versions: dict[str, BotVersionRecord]
    store: Store


async def play_a_troubled_pairing(tmp: Path) -> Troubled:
    data = tmp / "data"
    clock = clock_settings(MOVE_MS, 0, "default")
    options = ServerOptions(clock=clock)
    config = ServerConfig(
        data_dir=data, listen=["127.0.0.1:0"], admin_token="t" * 32, options=options
    )
    async with running_arena(config, SandboxPolicy()) as (server, launcher):
        store = server.referee.store
        uploads = data / "submissions"
        folders = {
            "crash": troubled_bot(tmp / "crashbot", CRASHES),
            "sleep": troubled_bot(tmp / "sleepbot", SLEEPS),
            "ada": starter_bot(tmp / "adabot"),
            "bob": starter_bot(tmp / "bobbot"),
        }
        versions = {}
        for name, folder in folders.items():
            store.accounts.create(name, PASSWORD)
            version = active_version(store, uploads, name, folder)
            versions[version.bot] = version
        games = {"belote": GAMES["belote"].settings({"deals": 1})}
        settings = LadderSettings(matches_per_hour=50, newcomer_matches=1, duplicate=True)
        ladder = Ladder(store, uploads, games, settings, random.Random(11))
        ids = await ladder.play_next(server, launcher)
        matches = [match for match in map(store.matches.get, ids) if match is not None]
    return Troubled(matches, versions, Store(data / "bisca.sqlite3"))


@pytest.fixture(scope="module")
def troubled(tmp_path_factory: pytest.TempPathFactory) -> Troubled:
    return asyncio.run(play_a_troubled_pairing(tmp_path_factory.mktemp("troubled")))


def test_with_duplicate_deals_the_rotations_of_a_pairing_share_one_deal(
    troubled: Troubled,
) -> None:
    matches = troubled.matches
    assert len(matches) == 4  # one match per rotation of the four versions
    assert len({match.seed for match in matches}) == 1, [match.seed for match in matches]
    assert all(match.rated and match.status is MatchStatus.FINISHED for match in matches)
    # The same four versions, each in every seat once: the rotations of one seating.
    first = matches[0].bots
    assert sorted(first) == sorted(f"{bot}.v1" for bot in troubled.versions)
    assert [match.bots for match in matches] == [first[i:] + first[:i] for i in range(4)]


def test_a_version_that_crashes_or_times_out_has_it_counted_for_its_owner(
    troubled: Troubled,
) -> None:
    counted: dict[str, Incidents] = {}
    for bot, version in troubled.versions.items():
        incidents = counted.setdefault(bot, Incidents())
        for match in troubled.matches:
            for seat in match.seats:
                if seat.bot_name == version.player:
                    incidents.add(seat)
    # The crasher left each of its four matches, the sleeper ran out of its clock in each.
    assert counted["crashbot"].crashes == 4, counted
    assert counted["sleepbot"].timeouts >= 4 and counted["sleepbot"].crashes == 0, counted
    assert counted["adabot"].crashes == counted["bobbot"].crashes == 0, counted
    # What the owner reads on the version's ladder page (anybody else gets no counts).
    for bot, forfeits in (("crashbot", 4), ("sleepbot", 0)):
        page = version_ladder_page(troubled.store, troubled.versions[bot], owner=True)
        assert page["counts"] == {
            "matches": 4, "timeouts": counted[bot].timeouts,
            "illegal_moves": counted[bot].illegal_moves, "crashes": counted[bot].crashes,
            "defaults": counted[bot].defaults_played, "forfeits": forfeits,
        }, bot  # fmt: skip
    anybody = version_ladder_page(troubled.store, troubled.versions["crashbot"], owner=False)
    assert anybody["counts"] is None and anybody["matches"][0]["stderr"] is None  # type: ignore[index]


@dataclass
class Replayed:
    seatings: tuple[tuple[str, ...], ...]
    #: The ids the pairing played again returned, and every match of its deal after.
    played_again: list[str]
    deal: list[MatchRecord]
    cut_id: str


async def play_a_pairing_again(tmp: Path) -> Replayed:
    """A pairing whose job was cut off after its first seating finished and while its second
    was under way, then played again (as a worker plays a job queued again)."""
    data = tmp / "data"
    config = ServerConfig(data_dir=data, listen=["127.0.0.1:0"], admin_token="t" * 32)
    async with running_arena(config, SandboxPolicy()) as (server, launcher):
        store = server.referee.store
        uploads = data / "submissions"
        for name in BOTS[:4]:
            store.accounts.create(name, PASSWORD)
            active_version(store, uploads, name, starter_bot(tmp / f"{name}bot"))
        games = {"belote": GAMES["belote"].settings({"deals": 1})}
        settings = LadderSettings(matches_per_hour=50, newcomer_matches=1, duplicate=True)
        ladder = Ladder(store, uploads, games, settings, random.Random(5))
        drawn = await asyncio.to_thread(ladder.draw, {})
        assert drawn is not None
        seatings = drawn.pairing.seatings
        first = dataclasses.replace(
            drawn, pairing=dataclasses.replace(drawn.pairing, seatings=seatings[:1])
        )
        await ladder.play_pairing(server, launcher, first)
        # The second seating's attempt, left running by the worker that was cut off.
        cut_id = "m-cut0ff"
        store.matches.create(
            cut_id, "belote", {"deals": 1}, drawn.pairing.seed, seatings[1], {}, rated=True
        )
        store.matches.mark_running(cut_id)
        played_again = await ladder.play_pairing(server, launcher, drawn)
        deal = store.matches.find(None, None, game="belote", seed=drawn.pairing.seed)
    return Replayed(seatings, played_again, deal, cut_id)


def test_a_pairing_played_again_closes_its_cut_attempt_and_plays_only_what_is_missing(
    tmp_path: Path,
) -> None:
    replayed = asyncio.run(play_a_pairing_again(tmp_path))
    assert len(replayed.seatings) == 4
    assert len(replayed.played_again) == 3, "the finished seating is not played again"
    finished: dict[tuple[str, ...], list[str]] = {}
    for match in replayed.deal:
        if match.status is MatchStatus.FINISHED:
            finished.setdefault(tuple(match.bots), []).append(match.id)
    assert sorted(finished) == sorted(replayed.seatings)
    assert all(len(ids) == 1 for ids in finished.values()), finished
    (cut,) = [match for match in replayed.deal if match.id == replayed.cut_id]
    assert cut.status is MatchStatus.FAILED
    assert cut.reason.startswith("cut off: the worker playing its ladder pairing"), cut.reason
