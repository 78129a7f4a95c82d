"""A worker lives for many tournaments (issue 27): one process plays tournament after
tournament, each fully; a failed job says why, on the worker's output and in the
coordinator's; a killed worker's match is taken back by another with no coordinator running;
``bisca workers`` judges a worker by the lease it announced.  Real worker processes on a real
PostgreSQL server (see ``test_distributed.py``), plus the trio host they all rely on."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import trio

from bisca.server.edge._bridge import TrioGuest
from bisca.server.records import MatchStatus
from bisca.server.store import Store
from bisca.server.tournament.distributed import CUT_OFF_BY_A_WORKER
from tests.support.commands import bisca
from tests.support.postgres import PostgresServer
from tests.support.waiting import poll_until

from .test_distributed import (
    GREEDY,
    SLOW_BOT,
    Workers,
    run_distributed,
    store_of,
    write_tournament,
)


@pytest.fixture
def database(postgres: PostgresServer) -> str:
    return postgres.new_database()


@pytest.fixture
def workers(database: str, tmp_path: Path) -> Iterator[Workers]:
    pool = Workers(database, tmp_path)
    yield pool
    pool.stop()


def played_and_rated(store: Store, name: str) -> None:
    """Every planned match of ``name`` finished, rated and its log kept (the store holds
    other tournaments' matches too, unlike in ``recorded_once``)."""
    slots = store.tournaments.slots(name)
    assert slots and all(slot.done for slot in slots)
    rated = {row.match_id for row in store.ratings.history("belote")}
    for slot in slots:
        record = store.matches.get(str(slot.match_id))
        kept = store.logs.get(str(slot.match_id))
        assert record is not None and record.status is MatchStatus.FINISHED
        assert str(slot.match_id) in rated
        assert kept is not None and kept.log_hash == record.log_hash


# ---- one trio run hosts every arena of a process --------------------------------------------


async def _ready(task_status: trio.TaskStatus[None]) -> None:
    task_status.started()
    await trio.sleep_forever()


async def _trio_run_id() -> int:
    return id(trio.lowlevel.current_root_task())


def test_guests_share_one_trio_run_and_a_fresh_one_starts_after_it_ended() -> None:
    async def main() -> tuple[int, int, int, int]:
        first, second = TrioGuest(), TrioGuest()
        await first.start(_ready)
        await second.start(_ready)  # a second arena while the first runs: the same run
        shared = await first.call(_trio_run_id), await second.call(_trio_run_id)
        await first.stop()
        # The second goes on once the first stopped.
        still = await second.call(_trio_run_id)
        await second.stop()
        third = TrioGuest()  # after every guest stopped (trio ended): trio again
        await third.start(_ready)
        again = await third.call(_trio_run_id)
        await third.stop()
        return shared[0], shared[1], still, again

    first, second, still, again = asyncio.run(main())
    assert first == second == still
    assert again != first


# ---- worker processes ---------------------------------------------------------------------


def test_one_worker_plays_three_tournaments_in_a_row(
    workers: Workers, database: str, tmp_path: Path
) -> None:
    worker = workers.start("long-lived", "--no-sandbox")
    with store_of(database, tmp_path) as store:
        for number in range(1, 4):
            name = f"row{number}"
            path = write_tournament(tmp_path, name, per_pairing=1, bots=GREEDY[:2])
            done = run_distributed(path, database)
            assert done.returncode == 0, done.stdout + done.stderr + worker.output()
            assert "1 of 1 planned matches played" in done.stdout, done.stdout
            played_and_rated(store, name)
            # What it held for the tournament is released once the tournament is over.
            released = f"{name}: over, its bots stopped"
            poll_until(released, lambda: released in worker.output())  # noqa: B023 (used now)
    assert worker.process.poll() is None and "job failed" not in worker.output()


def test_a_failed_job_says_why_on_the_worker_and_the_coordinator(
    workers: Workers, database: str, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-bot"
    path = write_tournament(
        tmp_path, "f", per_pairing=1, bots=(("b1", str(missing)), ("b2", str(missing)))
    )
    worker = workers.start("w", "--no-sandbox")
    done = run_distributed(path, database)
    assert "0 of 1 planned matches played" in done.stdout, done.stdout + done.stderr
    failed = [line for line in worker.output().splitlines() if "job failed" in line]
    assert failed and all("f slot 0: job failed: " in line for line in failed), worker.output()
    reason = failed[-1].split("job failed: ", 1)[1]
    # The coordinator prints the worker's reason next to the match, not "see the workers".
    assert f"  f-0001: {reason} (worker w)\n" in done.stdout, done.stdout
    assert "Exceptions from" not in reason and "see the workers" not in done.stdout, reason


def test_a_killed_worker_s_match_is_taken_back_with_no_coordinator(
    workers: Workers, database: str, tmp_path: Path
) -> None:
    warm = workers.start("a", "--no-sandbox")
    # "a" has served a tournament already: it must take on another one (the bug).
    first = write_tournament(tmp_path, "warm", per_pairing=1, bots=GREEDY[:2])
    assert run_distributed(first, database).returncode == 0, warm.output()
    other = workers.start("b", "--no-sandbox")
    slow = f"{sys.executable} {SLOW_BOT}"
    path = write_tournament(tmp_path, "k", per_pairing=1, bots=(("s1", slow), ("s2", slow)))
    submitted = bisca("tournament", "submit", str(path), "--store", database)
    assert submitted.returncode == 0, submitted.stderr
    store = store_of(database, tmp_path)
    try:

        def running() -> tuple[str, str] | None:
            for record in store.workers.all():
                if record.running:
                    return record.name, record.running[0]
            return None

        found = poll_until("a match of k running", running, 90)
        assert found is not None
        playing, cut = found
        doomed, rescuer = (warm, other) if playing == "a" else (other, warm)
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait(30)
        poll_until("k's end", lambda: all(s.done for s in store.tournaments.slots("k")), 180)
        played_and_rated(store, "k")
        finished = [m.id for m in store.matches.find(MatchStatus.FINISHED, limit=100)]
        assert sorted(finished) == sorted(["warm-0001", f"{cut}-r2"])  # k's match once
        lost = store.matches.get(cut)
        assert lost is not None and lost.status is MatchStatus.FAILED
        assert lost.reason == CUT_OFF_BY_A_WORKER
        (slot,) = store.tournaments.slots("k")
        assert slot.match_id == f"{cut}-r2" and slot.attempts == 2  # replayed once
        assert "queued again" in rescuer.output() and "job failed" not in rescuer.output()
    finally:
        store.close()


def test_bisca_workers_judges_a_worker_by_the_lease_it_announced(
    workers: Workers, database: str, tmp_path: Path
) -> None:
    worker = workers.start("short", "--no-sandbox")  # --lease 2 (the tests' lease)
    listed = bisca("workers", "--store", database)  # its own default lease is 30 s
    assert listed.returncode == 0 and "short" in listed.stdout and "alive" in listed.stdout
    with store_of(database, tmp_path) as store:
        (record,) = store.workers.all()
        assert record.lease_seconds == 2
        seen = datetime.fromisoformat(record.seen_at.replace("Z", "+00:00"))
        assert record.alive(seen + timedelta(seconds=1), 30)
        assert not record.alive(seen + timedelta(seconds=3), 30)  # its lease, not the 30 s
    worker.process.send_signal(signal.SIGKILL)
    worker.process.wait(30)

    def shown_lost() -> bool:
        done = bisca("workers", "--store", database, "--all")
        return "lost" in done.stdout

    # Within the default lease of `bisca workers`: only the worker's own lease can say so.
    poll_until("the killed worker shown lost", shown_lost, 20)
    assert "no worker alive" in bisca("workers", "--store", database).stdout


def test_a_stopped_worker_gives_back_the_job_it_fetched_ahead(
    workers: Workers, database: str, tmp_path: Path
) -> None:
    slow = f"{sys.executable} {SLOW_BOT}"
    path = write_tournament(tmp_path, "p", per_pairing=6, bots=(("s1", slow), ("s2", slow)))
    submitted = bisca("tournament", "submit", str(path), "--store", database)
    assert submitted.returncode == 0, submitted.stderr
    # One match at a time, so of its jobs one plays and one waits, fetched ahead; a lease
    # long enough for the playing one to finish once the worker is asked to stop.
    ahead = workers.start("a", "--no-sandbox", "--concurrency", "1", "--lease", "60")

    def status() -> str:
        return bisca("tournament", "status", "p", "--store", database).stdout

    poll_until("two jobs taken", lambda: " 2 being played" in status(), 90)
    ahead.process.send_signal(signal.SIGTERM)
    # From the moment the worker says it stops (not the signal's sending: the running match
    # may end, and the next begin, before the signal is handled) no match begins.
    poll_until("the worker stopping", lambda: "stopping:" in ahead.output(), 60)
    stopped_at = datetime.now().astimezone()
    ahead.process.wait(90)
    assert "job failed" not in ahead.output(), ahead.output()
    store = store_of(database, tmp_path)
    try:
        unplayed = sum(1 for slot in store.tournaments.slots("p") if not slot.done)
        # Every unplayed match's job waits again, the one fetched ahead among them: none
        # failed, none left taken by the stopped worker.
        assert f"queue: {unplayed} waiting, 0 being played, 0 failed" in status()
        # (Seen once under a load average of 16: every match played, unplayed 0; the worker's
        # output says when it took the signal against the matches it played.)
        assert unplayed, ahead.output()
        assert min(slot.attempts for slot in store.tournaments.slots("p")) == 0
        # The job waiting for its turn did not start a match once the worker was stopping.
        started = [
            datetime.fromisoformat(record.created_at.replace("Z", "+00:00"))
            for record in store.matches.find(tournament="p", limit=None)
        ]
        assert started and max(started) < stopped_at, (started, stopped_at)
        workers.start("b", "--no-sandbox")
        poll_until("p's end", lambda: all(s.done for s in store.tournaments.slots("p")), 180)
        played_and_rated(store, "p")
    finally:
        store.close()
