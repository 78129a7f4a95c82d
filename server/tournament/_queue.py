"""The match queue of distributed tournaments: jobs of ``procrastinate`` on the PostgreSQL
store, one per planned match.

A job names a tournament and a slot of its plan, nothing else: the plan, the file and every
result are in the store, so a job can run on any worker and run again.  Its procrastinate
``lock`` (the slot) lets one worker at a time play a slot, and its ``queueing_lock`` keeps one
job per slot waiting, so submitting a tournament twice (or after the coordinator was killed)
queues nothing twice.  A worker's heartbeat is procrastinate's; a job whose worker stopped
beating for a lease is *stalled*, and whoever sees it first (any worker, or the coordinator
that waits) puts it back in the queue (:func:`retry_stalled`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import procrastinate
import psycopg
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.jobs import Status
from procrastinate.schema import SchemaManager

from bisca.server.errors import StoreError
from bisca.server.store import Store, StoreKind

log = logging.getLogger("bisca.queue")

#: procrastinate's name of the task that plays one planned match, and its queue.
PLAY_TASK = "bisca.play_planned_match"
QUEUE = "bisca-matches"
#: A worker that has not beaten for this long is taken for dead and its matches are played
#: again elsewhere; it beats every third of it.
DEFAULT_LEASE_SECONDS = 30.0


def require_shared(store: Store, what: str) -> None:
    """Distributed commands need a PostgreSQL store: say so, naming the command."""
    if store.kind is not StoreKind.POSTGRESQL:
        raise StoreError(
            f"{what} needs a PostgreSQL store (--store postgresql://USER@HOST/DATABASE); "
            f"{store.describe()} is a SQLite file only this machine can use"
        )


def queue_app(url: str) -> procrastinate.App:
    """A procrastinate app on the store's database (opened with ``open_async``)."""
    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))


def ensure_queue_schema(url: str) -> None:
    """Create procrastinate's tables in the store's database, once: several workers may
    start on a new store together, so under an advisory lock, in one transaction."""
    try:
        with psycopg.connect(url, connect_timeout=5) as db:
            db.execute("SELECT pg_advisory_xact_lock(hashtext('bisca-queue-schema'))")
            row = db.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is None or row[0] is None:
                db.execute(SchemaManager.get_schema())
    except psycopg.Error as problem:
        raise StoreError(f"cannot set up the match queue: {problem}") from None


@dataclass(frozen=True)
class Queued:
    queued: int
    already: int


async def queue_slots(app: procrastinate.App, tournament: str, slots: list[int]) -> Queued:
    """A job for each slot not waiting in the queue already."""
    queued = already = 0
    for slot in slots:
        key = f"{tournament}/{slot}"
        try:
            await app.configure_task(
                PLAY_TASK, queue=QUEUE, lock=key, queueing_lock=key
            ).defer_async(tournament=tournament, slot=slot)
        except AlreadyEnqueued:
            already += 1
        else:
            queued += 1
    return Queued(queued, already)


@dataclass(frozen=True)
class QueueState:
    """A tournament's jobs: waiting, being played, and those that failed (with why)."""

    waiting: int
    doing: int
    failed: int


#: Counted in the database (procrastinate's job table), not by listing every job.
_COUNT_JOBS = """
SELECT status::text AS status, count(*) AS jobs FROM procrastinate_jobs
 WHERE queue_name = %(queue)s AND task_name = %(task)s AND args->>'tournament' = %(tournament)s
 GROUP BY status
"""


async def queue_state(app: procrastinate.App, tournament: str) -> QueueState:
    rows = await app.connector.execute_query_all_async(
        _COUNT_JOBS, queue=QUEUE, task=PLAY_TASK, tournament=tournament
    )
    counts = {row["status"]: int(row["jobs"]) for row in rows}
    return QueueState(
        counts.get(Status.TODO.value, 0),
        counts.get(Status.DOING.value, 0),
        counts.get(Status.FAILED.value, 0),
    )


async def retry_stalled(app: procrastinate.App, lease_seconds: float) -> int:
    """Put back in the queue the jobs of workers that stopped beating for a lease (a worker
    killed mid-match, a machine that went away); returns how many."""
    stalled = await app.job_manager.get_stalled_jobs(
        queue=QUEUE, task_name=PLAY_TASK, seconds_since_heartbeat=lease_seconds
    )
    count = 0
    for job in stalled:
        log.warning("job %s (%s) lost its worker: queued again", job.id, job.task_kwargs)
        await app.job_manager.retry_job(job)
        count += 1
    return count
