"""A store error (a locked or broken database) while serving a bot fails that one thing: the
referee, its connections and its matches go on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import trio

from bisca.engine import GAMES
from bisca.server.league import start_league
from bisca.server.referee import Referee, ServerOptions
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb

from .support import AutoBot, hello, wait_until


def _locked(*args: object, **kwargs: object) -> None:
    raise sqlite3.OperationalError("database is locked")


def test_a_store_error_during_hello_refuses_that_bot_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.in_directory(tmp_path)
    token = store.add_bot("remote")

    async def scenario() -> None:
        referee = Referee(store, ServerOptions(hello_timeout=30))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            with monkeypatch.context() as patch:
                patch.setattr(store, "bot_for_token", _locked)
                unlucky = AutoBot(referee, "unlucky")
                unlucky.say(hello(token))
                await wait_until(lambda: unlucky.of_kind("error"))
            error = unlucky.of_kind("error")[0].error
            assert error.fatal and "try again" in error.message
            await wait_until(lambda: "unlucky" not in referee.connections)
            again = AutoBot(referee, "again")
            again.say(hello(token))
            await wait_until(lambda: again.of_kind("welcome"))
            assert referee.connections_of("remote")
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_store_error_when_forming_a_league_match_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.in_directory(tmp_path)
    tokens = {name: store.add_bot(name) for name in ("n", "e", "s", "w")}
    calls: list[str] = []
    create = store.create_match

    def create_once_locked(match_id: str, *args: object, **kwargs: object) -> None:
        calls.append(match_id)
        if len(calls) == 1:
            _locked()
        create(match_id, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "create_match", create_once_locked)

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
