"""Waiting for a condition with a deadline, never for a fixed time: the machine may be loaded
(or, on trio's mock clock, time may jump), so a test waits for what it needs and fails, naming
it, only when the deadline passes.

* :func:`wait_until` is for trio code (the referee driven in-process by fake bots);
* :func:`poll` and :func:`poll_until` are for plain threads and other processes (files that
  appear, rows in a store, a server's answers);
* :func:`run_on_mock_clock` runs trio code whose timing is the referee's clocks on trio's mock
  clock, where no real time passes.

Their short sleeps between two looks are the only sleeps the tests need.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
import trio
import trio.testing

T = TypeVar("T")

#: Between two looks at a condition in trio (virtual seconds on the mock clock).
TRIO_INTERVAL = 0.005
#: Between two looks at a condition in a thread or another process.
INTERVAL = 0.05


async def wait_until(condition: Callable[[], object], timeout: float = 20) -> None:
    """Return once ``condition()`` is true; ``trio.TooSlowError`` after ``timeout`` seconds."""
    with trio.fail_after(timeout):
        while not condition():
            await trio.sleep(TRIO_INTERVAL)


async def loop_until(condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    """The same on an asyncio loop: return once ``condition()`` is true; fail naming ``what``
    after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"never: {what}"
        await asyncio.sleep(0.01)


def poll(check: Callable[[], T], timeout: float, interval: float = INTERVAL) -> T:
    """``check()`` until it returns something true or ``timeout`` seconds have passed; returns
    what it returned last (true or not: the caller decides what a timeout means)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def poll_until(
    what: str, check: Callable[[], T], timeout: float = 60, interval: float = INTERVAL
) -> T:
    """``check()``'s first true value; an ``AssertionError`` naming ``what`` if none comes
    within ``timeout`` seconds."""
    value = poll(check, timeout, interval)
    if not value:
        raise AssertionError(f"{what}: not within {timeout:g} s")
    return value


def run_on_mock_clock(
    scenario: Callable[[], Awaitable[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``trio.run(scenario)`` on a mock clock that jumps to the next deadline as soon as every
    task waits: a timeout costs no real time and fires in its order however loaded the machine.

    Only for code that never waits on a worker thread (the referee reaches the store through
    ``trio.to_thread``): the clock would jump while the thread works, and a timeout would fire
    that real time never reached.  So ``trio.to_thread.run_sync`` fails here, and the test with
    it, if the code under test starts calling it.
    """
    calls: list[str] = []

    async def no_worker_threads(fn: Callable[..., object], *args: object, **kw: object) -> object:
        calls.append(repr(fn))
        raise AssertionError(f"{fn!r} would run in a worker thread, which the mock clock races")

    monkeypatch.setattr(trio.to_thread, "run_sync", no_worker_threads)
    trio.run(scenario, clock=trio.testing.MockClock(autojump_threshold=0))
    assert calls == [], f"worker threads on the mock clock: {calls} (run this test in real time)"
