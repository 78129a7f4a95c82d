"""A store error (a locked or broken database) while serving a bot fails that one thing: the
referee, its connections and its matches go on.  (A store error while the league forms a match:
``tests/league/test_league_queue.py``.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import trio

from bisca.server.referee import Referee, ServerOptions
from bisca.server.store import Store
from tests.support.fake_bots import AutoBot, hello
from tests.support.waiting import wait_until


def _locked(*args: object, **kwargs: object) -> None:
    raise sqlite3.OperationalError("database is locked")


def test_a_store_error_during_hello_refuses_that_bot_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.in_directory(tmp_path)
    token = store.bots.add("remote")

    async def scenario() -> None:
        referee = Referee(store, ServerOptions(hello_timeout=30))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            with monkeypatch.context() as patch:
                patch.setattr(store.bots, "for_token", _locked)
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
