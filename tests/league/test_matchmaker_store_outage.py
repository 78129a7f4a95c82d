"""The league's matchmaker while the store does not answer (operator review, findings 1 and
12): a store error read at a round ended the referee's trio run, and with it every gRPC call
of ``bisca serve``.  Now it says once that the store is lost, looks again after a backoff that
doubles up to a bound, and says once that the store answers again."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from bisca.engine import GAMES
from bisca.server.errors import StoreUnavailable
from bisca.server.league import Matchmaker
from bisca.server.league._matchmaker import POLL_SECONDS
from bisca.server.referee import Referee, ServerOptions
from bisca.server.store import OUTAGE_RETRY_MAX_S, Store
from tests.support.waiting import wait_until

LOST = 7  # rounds the store does not answer


def test_the_matchmaker_rides_out_a_store_outage_saying_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store.in_directory(tmp_path)
    looks: list[float] = []
    clock = trio.testing.MockClock(autojump_threshold=0)

    def of_kind(kind: object) -> list[object]:
        looks.append(clock.current_time())
        if len(looks) <= LOST:
            raise StoreUnavailable("cannot reach the store postgresql://db/league: refused")
        return []

    async def inline(fn: Callable[[], object], *args: object, **kw: object) -> object:
        return fn(*args)  # no worker thread: the mock clock would race it

    monkeypatch.setattr(store.versions, "of_kind", of_kind)
    monkeypatch.setattr(trio.to_thread, "run_sync", inline)
    caplog.set_level(logging.INFO, logger="bisca.server.league")

    async def scenario() -> None:
        referee = Referee(store, ServerOptions(hello_timeout=30))
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            matchmaker = Matchmaker(referee, {"belote": GAMES["belote"].settings({"deals": 1})})
            referee.spawn(matchmaker.run)
            await wait_until(lambda: len(looks) >= LOST + 3, timeout=600)
            nursery.cancel_scope.cancel()

    trio.run(scenario, clock=clock)

    said = [r.getMessage() for r in caplog.records if "store" in r.getMessage()]
    assert len(said) == 2, said
    assert said[0].startswith("league: lost the store (cannot reach the store postgresql://")
    assert said[1] == "league: the store answers again"
    assert not any(r.exc_info for r in caplog.records)  # one line, not a traceback a round
    waits = [later - earlier for earlier, later in itertools.pairwise(looks[: LOST + 1])]
    assert waits[0] == pytest.approx(POLL_SECONDS)
    assert all(b >= a for a, b in itertools.pairwise(waits)), waits
    assert max(waits) == pytest.approx(OUTAGE_RETRY_MAX_S), waits
