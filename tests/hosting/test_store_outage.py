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
from bisca.server.store import (
    OUTAGE_RETRY_MAX_S,
    OneLinePerInterval,
    Store,
    StoreOutage,
    is_store_lost,
    quiet_connection_retries,
)
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

    def forget_ended_files(self) -> int:
        return 0


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


def test_the_pools_tries_to_connect_are_one_line_a_minute() -> None:
    """psycopg's pool says each failed try to connect, several a second in an outage (re-test
    3, C): one line a minute is kept, saying how many it stands for; an error always shows."""
    now = [0.0]
    quiet = OneLinePerInterval(60.0, clock=lambda: now[0])

    def tried(level: int = logging.WARNING) -> logging.LogRecord | None:
        record = logging.LogRecord(
            "psycopg.pool", level, __file__, 1, "error connecting in %r", ("pool-1",), None
        )
        return record if quiet.filter(record) else None

    first = tried()
    assert first is not None and first.getMessage() == "error connecting in 'pool-1'"
    for _ in range(20):
        now[0] += 1.0
        assert tried() is None
    assert tried(logging.ERROR) is not None
    now[0] = 61.0
    later = tried()
    assert later is not None
    assert later.getMessage() == "error connecting in 'pool-1' (and 20 such lines before it)"
    quiet_connection_retries()
    quiet_connection_retries()
    pool_filters = logging.getLogger("psycopg.pool").filters
    assert sum(isinstance(one, OneLinePerInterval) for one in pool_filters) == 1
