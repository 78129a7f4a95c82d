"""A store error (a locked or broken database) while serving a bot fails that one thing: the
referee, its connections and its matches go on.  (A store error while the league forms a match:
``tests/league/test_league_queue.py``.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import trio

from bisca.engine import GAMES
from bisca.server.records import MatchStatus
from bisca.server.referee import MatchPlan, Referee, ServerOptions
from bisca.server.store import Store
from tests.support.fake_bots import AutoBot, connect, hello
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


def test_a_late_result_the_store_refuses_leaves_the_complete_log_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A match's end records its result and its log in one transaction; a result the store
    refuses (the match was given up while it ran: a late worker) still leaves its complete
    log recorded, as it was before the two shared a transaction."""
    store = Store.in_directory(tmp_path)
    mark_running = store.matches.mark_running

    def given_up_at_once(match_id: str) -> bool:
        marked = mark_running(match_id)  # (it runs, and is given up as soon as it does)
        store.matches.fail(match_id, "given up: its worker stopped answering")
        return marked

    async def scenario() -> None:
        referee = Referee(store, ServerOptions(hello_timeout=30))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            await connect(referee, ["a", "b"])
            monkeypatch.setattr(store.matches, "mark_running", given_up_at_once)
            plan = MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), ("a", "b") * 2)
            runner = await referee.create_match(plan)
            await runner.done.wait()
            assert runner.status is MatchStatus.FAILED and "given up" in runner.reason
            nursery.cancel_scope.cancel()
        record = store.matches.get(runner.id)
        assert record is not None and record.status is MatchStatus.FAILED
        assert record.log_hash is not None and record.log_path is not None
        assert Path(record.log_path).is_file() and not record.log_path.endswith(".partial")

    trio.run(scenario)
