"""The trio side of ``bisca serve`` ending by itself (operator review, finding 1): a store error
ended the arena's trio tasks, every later gRPC call failed with ``RunFinishedError``, a replay
hung 11 minutes and nothing was logged.  Now the end is logged, naming the error, the host can
wait for it (``bisca serve`` exits), and a call into trio fails at once, never hangs."""

from __future__ import annotations

import asyncio
import logging

import outcome
import pytest
import trio

from bisca.server.edge._bridge import TrioGuest, TrioRunEnded
from bisca.server.errors import StoreError, StoreUnavailable

#: Only for a hang (the bug): with the fix each wait ends at once.
HANG_S = 5


def test_a_guest_whose_tasks_fail_says_why_and_fails_every_call_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="bisca.server")

    async def main() -> None:
        fail = trio.Event()

        async def arena(task_status: trio.TaskStatus[None]) -> None:
            task_status.started()
            await fail.wait()
            raise StoreUnavailable("cannot reach the store postgresql://db/league: refused")

        guest = TrioGuest()
        await guest.start(arena)
        guest.run_sync_soon(fail.set)
        ended = await asyncio.wait_for(guest.ended(), HANG_S)
        assert isinstance(ended, outcome.Error)
        assert guest.why_ended == (
            "ended: StoreUnavailable: cannot reach the store postgresql://db/league: refused"
        )
        # A call made now used to raise in trio's own callback (the guest's nursery closed),
        # which ended trio's run and left the call waiting for good.
        with pytest.raises(TrioRunEnded, match="StoreUnavailable: cannot reach the store"):
            await asyncio.wait_for(guest.call(trio.sleep, 0), HANG_S)
        with pytest.raises(TrioRunEnded):
            await asyncio.wait_for(guest.call(trio.sleep, 0), HANG_S)
        with pytest.raises(ExceptionGroup) as stopped:  # stopping it ends, saying how
            await asyncio.wait_for(guest.stop(), HANG_S)
        assert stopped.value.subgroup(StoreError) is not None

    asyncio.run(main())
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [
        "the arena's trio tasks ended: StoreUnavailable: cannot reach the store "
        "postgresql://db/league: refused"
    ]


def test_a_call_waiting_when_trio_s_run_crashes_fails_at_once() -> None:
    async def main() -> None:
        async def arena(task_status: trio.TaskStatus[None]) -> None:
            task_status.started()
            await trio.sleep_forever()

        def crash() -> None:  # an error in trio's own callback ends the whole run
            raise RuntimeError("boom")

        guest = TrioGuest()
        await guest.start(arena)
        started = asyncio.Event()

        async def waiting() -> None:
            started.set()
            await trio.sleep_forever()

        call = asyncio.ensure_future(guest.call(waiting))
        await asyncio.sleep(0)
        guest.run_sync_soon(crash)
        ended = await asyncio.wait_for(guest.ended(), HANG_S)
        assert isinstance(ended, outcome.Error)
        with pytest.raises((TrioRunEnded, RuntimeError)):
            await asyncio.wait_for(call, HANG_S)
        with pytest.raises(TrioRunEnded, match="trio run has ended"):
            guest.run_sync_soon(print)
        with pytest.raises(TrioRunEnded):
            await asyncio.wait_for(guest.call(trio.sleep, 0), HANG_S)
        with pytest.raises(BaseException):  # noqa: B017 - trio's own error, whichever
            await asyncio.wait_for(guest.stop(), HANG_S)

    asyncio.run(main())
