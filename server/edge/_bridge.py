"""Trio in guest mode on the running asyncio loop, and the two non-blocking crossings.

The transport is grpc.aio (asyncio); the referee is trio.  ``trio.lowlevel.start_guest_run``
runs trio's scheduler as callbacks on the asyncio loop's thread, so:

* trio -> asyncio needs nothing special: trio code may call ``asyncio.Queue.put_nowait`` and
  ``Future.set_result`` directly (same thread, never awaiting);
* asyncio -> trio goes through the trio token (``run_sync_soon``), which is thread-safe and
  never blocks.  Each crossing wakes trio's I/O thread when trio is idle (a socket write, a
  thread hand-off and a loop wake-up), so messages that arrive together cross together
  (:class:`Mailbox`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, TypeVarTuple

import outcome
import trio

T = TypeVar("T")
Args = TypeVarTuple("Args")


class Mailbox:
    """Calls from asyncio to run in trio, in order and in batches: the first call after a
    batch crosses (``run_sync_soon``), the ones made before trio runs it join it.  Every call
    that must keep its order with these (a stream opened, its messages, its end) goes through
    the same mailbox.

    Only for the loop's thread (where guest-mode trio runs too), so it needs no lock."""

    def __init__(self, guest: TrioGuest) -> None:
        self._guest = guest
        self._waiting: list[tuple[Callable[..., object], tuple[Any, ...]]] = []

    def call(self, fn: Callable[[*Args], object], *args: *Args) -> None:
        if not self._waiting:
            self._guest.run_sync_soon(self._drain)
        self._waiting.append((fn, args))

    def _drain(self) -> None:
        batch, self._waiting = self._waiting, []
        for fn, args in batch:
            fn(*args)


class TrioGuest:
    """A trio run hosted by the current asyncio loop, with a nursery for tasks started from
    asyncio."""

    def __init__(self) -> None:
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._done: asyncio.Future[outcome.Outcome[None]] | None = None

    async def start(self, main: Callable[[trio.TaskStatus[None]], Awaitable[None]]) -> None:
        """Start trio and ``main`` in it (a task that calls ``task_status.started()`` when it
        is ready); returns once it is."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._done = loop.create_future()

        async def trio_main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                await nursery.start(main)
                ready.set_result(None)
                await trio.sleep_forever()

        def done(result: outcome.Outcome[None]) -> None:
            assert self._done is not None
            if not self._done.done():
                self._done.set_result(result)
            if not ready.done():
                ready.set_exception(RuntimeError(f"trio stopped before starting: {result!r}"))

        trio.lowlevel.start_guest_run(
            trio_main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=loop.call_soon,
            done_callback=done,
            host_uses_signal_set_wakeup_fd=True,
        )
        await ready

    def run_sync_soon(self, fn: Callable[[*Args], object], *args: *Args) -> None:
        """Call ``fn(*args)`` in trio soon; safe from any thread, never blocks."""
        assert self._token is not None, "trio is not running"
        self._token.run_sync_soon(fn, *args)

    async def call(self, fn: Callable[[*Args], Awaitable[T]], *args: *Args) -> T:
        """Run ``await fn(*args)`` as a trio task and wait for its result from asyncio."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        async def runner() -> None:
            try:
                result = await fn(*args)
            except BaseException as error:  # handed to the asyncio caller
                if not future.done():
                    future.set_exception(
                        error if isinstance(error, Exception) else RuntimeError(repr(error))
                    )
                if not isinstance(error, Exception):
                    raise
            else:
                if not future.done():
                    future.set_result(result)

        def spawn() -> None:
            assert self._nursery is not None
            self._nursery.start_soon(runner)

        self.run_sync_soon(spawn)
        return await future

    async def stop(self) -> None:
        """Cancel every trio task and wait for trio to finish."""
        if self._nursery is None or self._done is None:
            return
        nursery = self._nursery
        self.run_sync_soon(nursery.cancel_scope.cancel)
        result = await self._done
        if isinstance(result, outcome.Error) and not isinstance(result.error, trio.Cancelled):
            result.unwrap()
