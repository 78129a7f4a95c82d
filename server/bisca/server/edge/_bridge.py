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
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, TypeVarTuple

import outcome
import trio

log = logging.getLogger("bisca.server")
T = TypeVar("T")
Args = TypeVarTuple("Args")


class TrioRunEnded(RuntimeError):
    """A call into trio once the trio tasks it needs have ended (a call waiting then fails
    with it too, at once): the server is no longer whole and stops (review op-1)."""


def _named(error: BaseException) -> str:
    """The error's type and first line (that of the one error in nested nurseries' groups)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


class Mailbox:
    """Calls from asyncio to run in trio, in order and in batches: the first call after a
    batch crosses (``run_sync_soon``), the ones made before trio runs it join it.  Every call
    that must keep its order with these (a stream opened, its messages, its end) goes through
    the same mailbox.

    Only for the loop's thread (where guest-mode trio runs too), so it needs no lock."""

    def __init__(self, guest: TrioGuest) -> None:
        self._guest = guest
        self._waiting: list[tuple[Callable[..., object], tuple[Any, ...]]] = []

    @property
    def idle(self) -> bool:
        """Nothing waits to cross: a call made now in the loop's turn keeps its order."""
        return not self._waiting

    def call(self, fn: Callable[[*Args], object], *args: *Args) -> None:
        if not self._waiting:
            self._guest.run_sync_soon(self._drain)
        self._waiting.append((fn, args))

    def _drain(self) -> None:
        batch, self._waiting = self._waiting, []
        for fn, args in batch:
            fn(*args)


class _SharedRun:
    """The one trio run an asyncio loop's thread may have (trio refuses a second one while a
    run is active there), shared by every :class:`TrioGuest` of that loop: a process that
    starts arena after arena (a ``bisca worker`` playing tournament after tournament, for
    weeks) hosts them all in it.  It ends once its last guest stops; a guest started after
    that waits for the run to have really ended before starting a fresh one."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.token: trio.lowlevel.TrioToken | None = None
        self.nursery: trio.Nursery | None = None
        self.guests = 0
        self.ending = False
        self.ready: asyncio.Future[None] = loop.create_future()
        self.ended: asyncio.Future[outcome.Outcome[None]] = loop.create_future()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        async def trio_main() -> None:
            self.token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                self.ready.set_result(None)
                await trio.sleep_forever()

        def done(result: outcome.Outcome[None]) -> None:
            if not self.ended.done():
                self.ended.set_result(result)
            if not self.ready.done():
                self.ready.set_exception(RuntimeError(f"trio stopped before starting: {result!r}"))

        trio.lowlevel.start_guest_run(
            trio_main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=loop.call_soon,
            done_callback=done,
            host_uses_signal_set_wakeup_fd=True,
        )

    async def end(self) -> None:
        """Cancel the run (its guests have all stopped) and wait until it is over."""
        self.ending = True
        if self.token is not None and self.nursery is not None and not self.ended.done():
            # A run that ended by itself: its outcome says how.
            with contextlib.suppress(trio.RunFinishedError):
                self.token.run_sync_soon(self.nursery.cancel_scope.cancel)
        result = await self.ended
        if isinstance(result, outcome.Error) and not isinstance(result.error, trio.Cancelled):
            result.unwrap()


#: Each asyncio loop's trio run, while it has guests (and while it ends).
_RUNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _SharedRun] = (
    weakref.WeakKeyDictionary()
)


async def _join_run() -> _SharedRun:
    """The running loop's trio run, started if it has none, counting one more guest."""
    loop = asyncio.get_running_loop()
    while (run := _RUNS.get(loop)) is not None and run.ending:
        await asyncio.shield(run.ended)  # its end removes it
    if run is None:
        run = _RUNS[loop] = _SharedRun(loop)
        try:
            run.start(loop)
        except BaseException:
            del _RUNS[loop]
            raise
    run.guests += 1
    try:
        await asyncio.shield(run.ready)
    except BaseException:
        await _leave_run(loop, run)
        raise
    return run


async def _leave_run(loop: asyncio.AbstractEventLoop, run: _SharedRun) -> None:
    run.guests -= 1
    if run.guests > 0:
        return
    try:
        await run.end()
    finally:
        if _RUNS.get(loop) is run:
            del _RUNS[loop]


class TrioGuest:
    """Trio code hosted by the current asyncio loop (in the loop's one trio run), with a
    nursery of its own for tasks started from asyncio: stopping it cancels those only."""

    def __init__(self) -> None:
        self._run: _SharedRun | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._nursery: trio.Nursery | None = None
        self._done: asyncio.Future[outcome.Outcome[None]] | None = None
        #: :meth:`stop` was called: the end of the guest's tasks from then on is expected.
        self._stopping = False
        #: Why its tasks ended, once they did (a call from then on fails at once).
        self._ended: str | None = None
        #: The calls waiting for their trio task's result (failed if the tasks end first).
        self._pending: set[asyncio.Future[Any]] = set()
        #: Called when the shared run ends (it crashed, if this guest was not stopped).
        self._run_ended: Callable[[asyncio.Future[outcome.Outcome[None]]], None] | None = None

    async def start(self, main: Callable[[trio.TaskStatus[None]], Awaitable[None]]) -> None:
        """Start ``main`` in trio (a task that calls ``task_status.started()`` when it is
        ready), starting trio if it is not running; returns once ``main`` is ready."""
        loop = asyncio.get_running_loop()
        run = await _join_run()
        self._run, self._loop = run, loop
        ready: asyncio.Future[None] = loop.create_future()
        done: asyncio.Future[outcome.Outcome[None]] = loop.create_future()
        self._done = done
        self._stopping, self._ended = False, None

        def settle(result: outcome.Outcome[None], *, with_outcome: bool) -> None:
            """The guest's end (its outcome too, ``with_outcome``), and a start that never
            came."""
            if with_outcome and not done.done():
                done.set_result(result)
            if not ready.done():
                ready.set_exception(RuntimeError(f"trio stopped before starting: {result!r}"))

        def run_ended(ended: asyncio.Future[outcome.Outcome[None]]) -> None:
            # The shared run over while this guest runs: it crashed (trio says why).
            result = ended.result()
            if not self._stopping and not run.ending:
                self._ended_unasked("run", result, "it returned")
            settle(result, with_outcome=True)

        run.ended.add_done_callback(run_ended)
        self._run_ended = run_ended

        async def guest_main() -> None:
            result: outcome.Outcome[None]
            try:
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    await nursery.start(main)
                    ready.set_result(None)
                    await trio.sleep_forever()
            except BaseException as error:  # this guest's end, not the shared run's
                result = outcome.Error(error)
            else:
                result = outcome.Value(None)
            ended = result.error if isinstance(result, outcome.Error) else None
            unasked = not self._stopping and ready.done()  # the server is no longer whole
            # A cancellation unasked: trio's run crashed, its end says why and ends this guest.
            crashed = unasked and isinstance(ended, trio.Cancelled)
            if unasked and not crashed:
                self._ended_unasked("tasks", result, "its main task returned")
            settle(result, with_outcome=not crashed)
            if isinstance(result, outcome.Error) and not isinstance(result.error, Exception):
                result.unwrap()  # a cancellation (the shared run ending) goes on

        def spawn() -> None:
            assert run.nursery is not None
            run.nursery.start_soon(guest_main)

        assert run.token is not None
        run.token.run_sync_soon(spawn)
        try:
            await ready
        except BaseException:
            await self._leave()
            raise

    def _ended_unasked(self, what: str, result: outcome.Outcome[None], returned: str) -> None:
        """The trio ``what`` ("run", "tasks") ended without :meth:`stop`: logged with why."""
        error = result.error if isinstance(result, outcome.Error) else None
        why = returned if error is None else _named(error)
        log.error("the arena's trio %s ended: %s", what, why, exc_info=error)
        self._tasks_ended(error)

    def _tasks_ended(self, error: BaseException | None) -> None:
        """This guest's trio tasks are over: every call waiting and to come fails at once."""
        if self._ended is None:
            self._ended = "ended" if error is None else f"ended: {_named(error)}"
        for future in self._pending:
            if not future.done():
                future.set_exception(TrioRunEnded(f"the arena's trio tasks {self._ended}"))
        self._pending.clear()

    @property
    def why_ended(self) -> str | None:
        """How its trio tasks ended when nobody stopped them (``None``: they did not)."""
        return self._ended

    async def ended(self) -> outcome.Outcome[None]:
        """Wait until this guest's trio tasks have ended (stopped, or failed), and how."""
        assert self._done is not None, "the guest is not started"
        return await asyncio.shield(self._done)

    def run_sync_soon(self, fn: Callable[[*Args], object], *args: *Args) -> None:
        """Call ``fn(*args)`` in trio soon; safe from any thread, never blocks.  Raises
        :class:`TrioRunEnded` once trio's run is over."""
        assert self._run is not None and self._run.token is not None, "trio is not running"
        try:
            self._run.token.run_sync_soon(fn, *args)
        except trio.RunFinishedError:
            raise TrioRunEnded(f"the arena's trio run has ended ({self._ended})") from None

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
            if future.done():
                return
            assert self._nursery is not None
            try:
                self._nursery.start_soon(runner)
            except RuntimeError:  # its nursery is closed: raising here would end trio's run
                future.set_exception(TrioRunEnded(f"the arena's trio tasks {self._ended}"))

        if self._ended is not None:
            raise TrioRunEnded(f"the arena's trio tasks {self._ended}")
        self._pending.add(future)
        try:
            self.run_sync_soon(spawn)
            return await future
        finally:
            self._pending.discard(future)

    async def stop(self) -> None:
        """Cancel this guest's trio tasks and wait for them to end (and for trio to end, if
        no other guest is in it)."""
        if self._nursery is None or self._done is None:
            await self._leave()
            return
        nursery = self._nursery
        self._stopping = True
        if not self._done.done():
            with contextlib.suppress(TrioRunEnded):  # the run crashed: its end sets ``_done``
                self.run_sync_soon(nursery.cancel_scope.cancel)
        try:
            result = await self._done
        finally:
            await self._leave()
        if isinstance(result, outcome.Error) and not isinstance(result.error, trio.Cancelled):
            result.unwrap()

    async def _leave(self) -> None:
        run, loop = self._run, self._loop
        self._run = self._loop = None
        if run is not None and self._run_ended is not None:
            run.ended.remove_done_callback(self._run_ended)
            self._run_ended = None
        if run is not None and loop is not None:
            await _leave_run(loop, run)
