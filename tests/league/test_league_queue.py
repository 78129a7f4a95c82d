"""The league's queue while a round of matches is formed: a bot that leaves meanwhile, a store
error while a match is recorded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import trio

from bisca.engine import GAMES
from bisca.server.accounts import SubmissionLimits, connect_version
from bisca.server.league import Matchmaker, start_league
from bisca.server.referee import Referee, ServerOptions
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import AutoBot, hello
from tests.support.league import PASSWORD
from tests.support.waiting import wait_until


def test_a_bot_that_leaves_while_a_league_round_is_formed_is_not_matched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight bots wait: two Belote matches in one round.  One of them disconnects while the
    first match is being recorded; the second match is not formed with it."""
    store = Store.in_directory(tmp_path)
    tokens = {f"bot{n}": store.bots.add(f"bot{n}") for n in range(8)}
    create = store.matches.create
    left: list[str] = []

    async def scenario() -> None:
        referee = Referee(store, ServerOptions(hello_timeout=30))
        trio_token = trio.lowlevel.current_trio_token()

        def create_while_one_leaves(match_id: str, game: str, *args: object, **kw: object) -> None:
            if not left:  # the first match: a bot it does not seat leaves meanwhile
                bots: list[str] = args[2]  # type: ignore[assignment]
                leaving = next(name for name in tokens if name not in bots)
                left.append(leaving)
                trio.from_thread.run_sync(
                    referee.connection_closed, f"conn-{leaving}", trio_token=trio_token
                )
            create(match_id, game, *args, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(store.matches, "create", create_while_one_leaves)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            for name, token in tokens.items():
                AutoBot(referee, f"conn-{name}", playing=False).say(hello(token, pb.GAME_BELOTE))
            await wait_until(lambda: len(referee.online) == 8)
            matchmaker = Matchmaker(referee, {"belote": GAMES["belote"].settings({"deals": 1})})
            await matchmaker.form_matches()  # one round
            seated = [bot for runner in referee.matches.values() for bot in runner.bots]
            assert left and left[0] not in seated
            assert matchmaker.formed == 1
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_store_error_when_forming_a_league_match_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.in_directory(tmp_path)
    tokens = {name: store.bots.add(name) for name in ("n", "e", "s", "w")}
    calls: list[str] = []
    create = store.matches.create

    def create_once_locked(match_id: str, *args: object, **kwargs: object) -> None:
        calls.append(match_id)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database is locked")
        create(match_id, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store.matches, "create", create_once_locked)

    async def scenario() -> None:
        referee = Referee(store, ServerOptions(hello_timeout=30))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            await start_league(referee, {"belote": GAMES["belote"].settings({"deals": 1})})
            bots = [AutoBot(referee, f"conn-{name}") for name in tokens]
            for bot, token in zip(bots, tokens.values(), strict=True):
                bot.say(hello(token, pb.GAME_BELOTE))
            await wait_until(lambda: len(calls) >= 2 and referee.matches)
            runner = next(iter(referee.matches.values()))
            with trio.fail_after(30):
                await runner.done.wait()
            assert runner.status == "finished", runner.reason
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_the_league_leaves_every_connected_version_to_the_ladder(tmp_path: Path) -> None:
    """Review 52: the league's matchmaker learnt which bots were the ladder's connected
    versions only when the ladder drew a pairing; versions connected meanwhile were matched
    here, with no pace and no ladder rule (four of them played 928 rated matches each in 40 s,
    among themselves).  Now it reads them from the store at every round: with four plain bots
    and four connected versions online, only the plain bots are matched, and the versions are
    never in the league's queue."""
    store = Store.in_directory(tmp_path)
    tokens = {name: store.bots.add(name) for name in ("n", "e", "s", "w")}
    versions = {}
    for account in ("ada", "bob", "cy", "dee"):
        store.accounts.create(account, PASSWORD)
        version, token = connect_version(store, SubmissionLimits(), account, f"{account}bot")
        versions[version.player] = token

    async def scenario() -> None:
        referee = Referee(store, ServerOptions(hello_timeout=30))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            matchmaker = await start_league(
                referee, {"belote": GAMES["belote"].settings({"deals": 1})}
            )
            # The versions first: online before any plain bot could make a table.
            for player, token in versions.items():
                AutoBot(referee, f"conn-{player}", playing=False).say(hello(token, pb.GAME_BELOTE))
            await wait_until(lambda: all(player in referee.online for player in versions))
            for name, token in tokens.items():
                AutoBot(referee, f"conn-{name}").say(hello(token, pb.GAME_BELOTE))
            await wait_until(lambda: referee.matches)
            seated = {bot for runner in referee.matches.values() for bot in runner.bots}
            assert seated == set(tokens)
            assert not {entry.bot for entry in matchmaker.queue()} & set(versions)
            nursery.cancel_scope.cancel()

    trio.run(scenario)
