"""Operator re-test 3, defect B: a store outage of 30 s queued each cut ladder job twice.  The
worker could not record the job's end (procrastinate's ``finish_job`` met a ``PoolTimeout``),
so the job stayed ``doing``; the worker queued its own copy, and the lease then put the
original back too.  And the unrecorded end was raised in a task no one awaited ("Task
exception was never retrieved", 45 lines).

Now the copy is queued only while the original is still the worker's (and ended with it), so
whichever of the give-back and the lease comes first queues it, once.  Real PostgreSQL; a job
fetched as a worker fetches it; no sleep."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from procrastinate import App
from procrastinate.jobs import Job, Status
from psycopg_pool import PoolTimeout

from bisca.server.store import open_store
from bisca.server.tournament._queue import LADDER_TASK, QUEUE, ensure_queue_schema, queue_app
from bisca.server.tournament._worker import (
    GIVEN_BACK,
    Worker,
    WorkerOptions,
    _GivenBack,
    _JobEndsHere,
)
from tests.support.postgres import PostgresServer
from tests.tournament.test_worker_ladder_concurrency import JOB, _queue_pairing

SEED = 4242


async def _taken_and_cut(app: App, worker: Worker) -> Job:
    """A ladder job taken by the worker and cut off by an outage, its end not recorded (left
    ``doing``): given back by the worker, not queued yet."""
    await _queue_pairing(app, SEED)
    taker = await app.job_manager.register_worker()
    job = await app.job_manager.fetch_job(queues=[QUEUE], worker_id=taker)
    assert job is not None and job.id is not None
    again = {**JOB, "seed": SEED, GIVEN_BACK: 1}
    worker._given_back.append(_GivenBack(LADDER_TASK, job.lock, again, job.id, job.attempts))
    return job


async def _jobs(app: App) -> list[tuple[int, str, int]]:
    rows = await app.connector.execute_query_all_async(
        "SELECT id, status::text AS status, attempts FROM procrastinate_jobs ORDER BY id"
    )
    return [(int(row["id"]), str(row["status"]), int(row["attempts"])) for row in rows]


def _setup(postgres: PostgresServer, tmp_path: Path) -> tuple[str, Worker]:
    url = postgres.new_database()
    open_store(url, tmp_path / "league").close()
    ensure_queue_schema(url)
    worker = Worker(WorkerOptions(store=url, data_dir=tmp_path / "w"), out=None)
    return url, worker


def test_a_cut_job_whose_end_was_not_recorded_is_queued_again_once_by_the_give_back(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url, worker = _setup(postgres, tmp_path)

    async def scenario() -> tuple[int, list[tuple[int, str, int]]]:
        async with queue_app(url).open_async() as app:
            job = await _taken_and_cut(app, worker)
            await worker._queue_given_back(app)
            # The lease comes later: the original is no longer doing, nothing to put back.
            await app.connector.execute_query_async(
                "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 hour'"
            )
            stalled = await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=30)
            assert stalled == [], stalled
            assert job.id is not None
            return job.id, await _jobs(app)

    original, jobs = asyncio.run(scenario())
    assert jobs[0] == (original, "failed", 0), jobs
    assert [status for _, status, _ in jobs[1:]] == ["todo"], jobs
    assert not worker._given_back


def test_a_cut_job_the_lease_queued_again_first_is_not_given_back_too(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url, worker = _setup(postgres, tmp_path)

    async def scenario() -> tuple[int, list[tuple[int, str, int]]]:
        async with queue_app(url).open_async() as app:
            job = await _taken_and_cut(app, worker)
            await app.job_manager.retry_job(job)  # the lease, first
            await worker._queue_given_back(app)
            assert job.id is not None
            return job.id, await _jobs(app)

    original, jobs = asyncio.run(scenario())
    assert jobs == [(original, "todo", 1)], jobs
    assert not worker._given_back


class _LostConnector:
    """A connector whose database does not answer, as psycopg's pool says it after 30 s."""

    async def execute_query_async(self, query: str, **arguments: Any) -> None:
        raise PoolTimeout("couldn't get a connection after 30.00 sec")


def test_the_unrecorded_end_of_a_job_held_here_is_not_raised() -> None:
    held = {7}
    jobs = _JobEndsHere(_LostConnector(), held)  # type: ignore[arg-type]
    job = Job(id=7, queue=QUEUE, lock="l", queueing_lock=None, task_name=LADDER_TASK)
    asyncio.run(jobs.finish_job(job, Status.FAILED, delete_job=False))
    assert held == set()
    # A job not taken here (the lease's own calls) still raises.
    other = Job(id=8, queue=QUEUE, lock="l", queueing_lock=None, task_name=LADDER_TASK)
    with pytest.raises(PoolTimeout):
        asyncio.run(jobs.finish_job(other, Status.FAILED, delete_job=False))
