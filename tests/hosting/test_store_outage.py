"""The gate's and ladder's loops while the store does not answer (operator review, finding 12):
a traceback about every second and no word when the store was back.  Now: one line when the
store is lost, one when it answers again, a backoff between, and a bug still logged in full."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import cast

import pytest

from bisca.server.errors import StoreError, StoreUnavailable
from bisca.server.hosting import Gate, gate_running
from bisca.server.store import OUTAGE_RETRY_MAX_S, Store, StoreOutage, is_store_lost
from tests.support.waiting import poll

LOST = 6  # passes the store does not answer


class _Gate:
    """A gate whose passes find the store lost ``LOST`` times, then a bug once, then pass."""

    def __init__(self) -> None:
        self.passes = 0
        self.done = threading.Event()

    def run_pending(self) -> None:
        self.passes += 1
        if self.passes <= LOST:
            raise StoreUnavailable("cannot reach the store postgresql://db/league: refused")
        if self.passes == LOST + 2:
            raise ValueError("a bug, not the store")
        if self.passes >= LOST + 3:
            self.done.set()


def test_the_gate_says_once_that_it_lost_the_store_and_once_that_it_is_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bisca.gate")
    gate = _Gate()
    with gate_running(cast(Gate, gate), poll_s=0.001):
        poll(lambda: gate.done.is_set() or None, timeout=30)
    said = [(r.levelname, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert said[:3] == [
        (
            "WARNING",
            "the gate: lost the store (cannot reach the store postgresql://db/league: "
            "refused): trying again until it answers",
            False,
        ),
        ("WARNING", "the gate: the store answers again", False),
        ("ERROR", "the gate failed a pass (it tries again)", True),  # a bug: in full
    ], said
    assert len(said) == 3, said


def test_the_wait_doubles_while_the_store_is_lost_up_to_a_bound() -> None:
    outage = StoreOutage(logging.getLogger("test"), "the ladder", 1.0)
    lost = StoreUnavailable("the store postgresql://db/league failed: server closed the connection")
    waits = [outage.failed(lost, "the ladder failed a pairing") for _ in range(6)]
    assert waits == [1.0, 2.0, 4.0, OUTAGE_RETRY_MAX_S, OUTAGE_RETRY_MAX_S, OUTAGE_RETRY_MAX_S]
    outage.answered()
    assert outage.failed(lost, "the ladder failed a pairing") == 1.0


def test_a_refusal_of_the_store_is_not_an_outage(tmp_path: Path) -> None:
    """A request the store refuses (a duplicate bot, an unknown match) is a StoreError and not
    a lost store: a loop or a call that took it for one would say "the store is not reachable"
    and try again for ever; what the database itself fails with is StoreUnavailable."""
    store = Store.in_directory(tmp_path / "data")
    store.bots.add("ann")
    with pytest.raises(StoreError) as refused:
        store.bots.add("ann")
    assert not is_store_lost(refused.value), refused.value
    store.close()
    with pytest.raises(StoreUnavailable) as failed:
        store.bots.has("ann")  # its database closed under it
    assert is_store_lost(failed.value), failed.value
