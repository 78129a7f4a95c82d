"""The match queue of distributed tournaments: jobs of ``procrastinate`` on the PostgreSQL
store, one per planned match.

A job names a tournament and a slot of its plan, nothing else: the plan, the file and every
result are in the store, so a job can run on any worker and run again.  Its procrastinate
``lock`` (the slot) lets one worker at a time play a slot, and its ``queueing_lock`` keeps one
job per slot waiting, so submitting a tournament twice (or after the coordinator was killed)
queues nothing twice.  A worker's heartbeat is procrastinate's; a job whose worker stopped
beating for a lease is *stalled*, and whoever sees it first (any worker, or the coordinator
that waits) puts it back in the queue (:func:`retry_stalled`); a ladder pairing's goes back
outside the ladder's queueing lock, and one stalled too often is failed for good.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import procrastinate
import psycopg
from procrastinate.exceptions import AlreadyEnqueued, ConnectorException, UniqueViolation
from procrastinate.jobs import Job, Status
from procrastinate.schema import SchemaManager
from procrastinate.types import JSONValue

from bisca.server.errors import StoreError
from bisca.server.store import POSTGRESQL_SCHEMES, Store, StoreKind, open_store

log = logging.getLogger("bisca.queue")

#: procrastinate's name of the task that plays one planned match, and its queue.
PLAY_TASK = "bisca.play_planned_match"
QUEUE = "bisca-matches"
#: procrastinate's name of the task that plays one pairing of a league's ladder
#: (``bisca.server.hosting``), and the queueing lock of the pairing ``bisca serve`` drew last:
#: one such job waits at a time, so the next pairing is drawn only when the last one is taken
#: and its draw sees the latest ratings and pace.  A pairing queued again (its worker stopped
#: beating, or gave it back) was drawn long ago: it waits outside that lock
#: (:func:`retry_stalled`), or it would wait for every fresh pairing to be taken first.
LADDER_TASK = "bisca.play_ladder_pairing"
LADDER_LOCK = "bisca-ladder"
#: How many times a ladder job whose worker stopped beating is queued again: at the next
#: stall it is failed for good (a pairing that takes its worker down with it, a machine
#: running out of memory say, would otherwise take down every worker in turn).  Its matches
#: left open are then closed by ``bisca serve``'s sweep of the matches no job holds.
LADDER_STALL_LIMIT = 3


def require_shared(store: Store, what: str) -> None:
    """Distributed commands need a PostgreSQL store: say so, naming the command."""
    if store.kind is not StoreKind.POSTGRESQL:
        raise StoreError(
            f"{what} needs a PostgreSQL store (--store postgresql://USER@HOST/DATABASE); "
            f"{store.describe()} is a SQLite file only this machine can use"
        )


def open_shared_store(url: str | None, data_dir: Path, what: str, *, upgrade: bool = True) -> Store:
    """The PostgreSQL store ``url`` names for the command ``what``, refused before anything
    is opened when it is none (a SQLite file was made at the path given, then refused: review
    s59b, M6)."""
    if url is None or not url.startswith(POSTGRESQL_SCHEMES):
        given = "no --store" if url is None else f"--store {url}"
        raise StoreError(
            f"{what} needs a PostgreSQL store (--store postgresql://USER@HOST/DATABASE), not "
            f"{given}: a SQLite file is only this machine's"
        )
    return open_store(url, data_dir, upgrade=upgrade)


def queue_app(url: str, *, flushed: bool = True) -> procrastinate.App:
    """A procrastinate app on the store's database (opened with ``open_async``).

    A worker's app is not ``flushed``: its commits (a job fetched, finished, put back, a
    failure's reason) do not wait for the database's disk, which took a worker as long per
    match as everything else it does between two matches.  Nothing is lost by it: the
    database's log is one sequence, so the store's next commit (the match's attempt, its
    result: flushed) flushes them too, and a database that crashes before loses only a
    suffix of them, which leaves the queue as it was a moment earlier: a job fetched goes
    back to waiting, a job finished looks still running, is taken for stalled and queued
    again, and its job then finds its match recorded and plays nothing.
    """
    connection = {} if flushed else {"options": "-c synchronous_commit=off"}
    return procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=url, kwargs=connection)
    )


def ensure_queue_schema(url: str) -> None:
    """Create procrastinate's tables in the store's database, once: several workers may
    start on a new store together, so under an advisory lock, in one transaction."""
    try:
        with psycopg.connect(url, connect_timeout=5) as db:
            db.execute("SELECT pg_advisory_xact_lock(hashtext('bisca-queue-schema'))")
            row = db.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is None or row[0] is None:
                db.execute(SchemaManager.get_schema())
            db.execute(_JOB_FAILURES_TABLE)
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


def ladder_deal_lock(game: JSONValue, seed: JSONValue) -> str:
    """The lock of the jobs playing one ladder pairing (its game and deal): procrastinate runs
    jobs of one lock one at a time, so a pairing queued again (its worker killed, or it gave
    the job back) is never played twice at once."""
    return f"bisca-ladder:{game}:{seed}"


async def queue_ladder_pairing(app: procrastinate.App, **job: JSONValue) -> bool:
    """A job playing one ladder pairing; ``False`` when one waits in the queue already."""
    lock = ladder_deal_lock(job.get("game"), job.get("seed"))
    try:
        await app.configure_task(
            LADDER_TASK, queue=QUEUE, lock=lock, queueing_lock=LADDER_LOCK
        ).defer_async(**job)
    except AlreadyEnqueued:
        return False
    return True


#: A job cut off on a worker goes back as a fresh job (its copy) only while its original is
#: still the one that worker held: ended there (``failed``), or still ``doing`` because the
#: lost store could not record its end, which is then ended here.  The lease puts a job left
#: ``doing`` back too (:func:`retry_stalled`, which counts an attempt, as procrastinate's end
#: of a job does): whichever of the two
#: comes first settles it, under the row's lock, and the other finds it settled, so a cut job
#: is queued again once (operator re-test 3, defect B: an outage of 30 s queued each twice).
_QUEUE_COPY_OF_CUT_JOB = """
WITH ended AS (
    UPDATE procrastinate_jobs SET status = 'failed'
     WHERE id = %(original)s AND attempts = %(attempts)s AND status = 'doing'
    RETURNING id
), settled AS (
    SELECT id FROM ended
    UNION ALL
    SELECT id FROM procrastinate_jobs
     WHERE id = %(original)s AND attempts = %(attempts)s + 1 AND status = 'failed'
)
INSERT INTO procrastinate_jobs (queue_name, task_name, lock, args)
SELECT %(queue)s, %(task)s, %(lock)s, %(args)s FROM settled LIMIT 1
RETURNING id
"""


async def queue_copy_of_cut_job(
    app: procrastinate.App,
    original: int,
    attempts: int,
    task: str,
    lock: str | None,
    arguments: dict[str, JSONValue],
) -> int | None:
    """Queue a fresh job of ``task`` in place of job ``original`` (taken at ``attempts``),
    cut off on this worker; its id, or ``None`` when the lease put the original back first."""
    rows = await app.connector.execute_query_all_async(
        _QUEUE_COPY_OF_CUT_JOB,
        original=original,
        attempts=attempts,
        queue=QUEUE,
        task=task,
        lock=lock,
        args=arguments,
    )
    return int(rows[0]["id"]) if rows else None


#: The ladder deals (their jobs' locks) that have jobs, and whether one of them is waiting or
#: being played.
_LADDER_DEALS = """
SELECT lock, bool_or(status IN ('todo', 'doing')) AS live FROM procrastinate_jobs
 WHERE task_name = %(task)s AND lock = ANY(%(locks)s)
 GROUP BY lock
"""


async def ladder_deals_held(app: procrastinate.App, locks: list[str]) -> dict[str, bool]:
    """Of ``locks`` (:func:`ladder_deal_lock`), those with ladder jobs: whether a job of the
    deal waits or is being played (its matches are that job's to close)."""
    rows = await app.connector.execute_query_all_async(_LADDER_DEALS, task=LADDER_TASK, locks=locks)
    return {str(row["lock"]): bool(row["live"]) for row in rows}


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


@dataclass(frozen=True)
class QueueDepth:
    """The whole queue, every tournament: jobs waiting and being played, and how long the
    oldest waiting one has waited (seconds since it was queued; 0 when none waits)."""

    waiting: int
    doing: int
    oldest_waiting_s: float


#: Only the jobs waiting or being played are read (procrastinate indexes them by status); a
#: job's age is from its ``deferred`` event.
_QUEUE_DEPTH = """
SELECT j.status::text AS status, count(*) AS jobs,
       COALESCE(EXTRACT(EPOCH FROM now() - min(deferred.at)), 0)::float8 AS oldest
  FROM procrastinate_jobs j
  LEFT JOIN LATERAL (SELECT min(e.at) AS at FROM procrastinate_events e
                      WHERE e.job_id = j.id AND e.type = 'deferred') deferred ON true
 WHERE j.queue_name = %(queue)s AND j.status IN ('todo', 'doing')
 GROUP BY j.status
"""


async def queue_depth(app: procrastinate.App) -> QueueDepth:
    rows = await app.connector.execute_query_all_async(_QUEUE_DEPTH, queue=QUEUE)
    by_status = {row["status"]: row for row in rows}
    waiting = by_status.get(Status.TODO.value)
    doing = by_status.get(Status.DOING.value)
    return QueueDepth(
        int(waiting["jobs"]) if waiting else 0,
        int(doing["jobs"]) if doing else 0,
        float(waiting["oldest"]) if waiting else 0.0,
    )


@dataclass(frozen=True)
class JobKey:
    """What a job plays: a planned match of a tournament."""

    tournament: str
    slot: int


def job_label(arguments: dict[str, JSONValue]) -> str:
    """What a job plays, for a log line: a tournament's planned match, or a ladder pairing's
    game and versions; never a pairing's seed (its deals stay sealed until it is over, and
    logs travel)."""
    tournament, slot = arguments.get("tournament"), arguments.get("slot")
    if tournament is not None:
        return f"{tournament} slot {slot}"
    players = arguments.get("players")
    named = ", ".join(str(p) for p in players) if isinstance(players, list) else "?"
    return f"ladder pairing of {arguments.get('game')}: {named}"


async def retry_stalled(app: procrastinate.App, lease_seconds: float) -> list[JobKey]:
    """Put back in the queue the jobs of workers that stopped beating for a lease (a worker
    killed mid-match, a machine that went away), a tournament's and a ladder's; returns the
    tournaments' planned matches among them (a ladder pairing played again closes its own
    cut attempts: ``hosting/_ladder.py``).

    A ladder job goes back outside :data:`LADDER_LOCK` (:func:`_requeue_stalled_ladder_job`):
    on a busy ladder a fresh pairing waits under that lock nearly all the time, and a retry
    under it clashed with that one at every beat, which left the job ``doing`` with no worker
    for minutes and its pairing's matches waiting, its finished ones' replays sealed.  The
    lock keeps ``bisca serve`` from queueing a second *fresh* pairing; one queued again was
    drawn already, and its rotations are what keeps its deal sealed.  Its open rotations are
    left to the job played again, not closed here: it closes them itself and plays the
    missing seatings on the same deal, which must stay sealed until they are over; being the
    older job it is the next ladder job a worker takes.  One stalled more than
    :data:`LADDER_STALL_LIMIT` times is failed for good instead."""
    stalled = [
        job
        for task in (PLAY_TASK, LADDER_TASK)
        for job in await app.job_manager.get_stalled_jobs(
            queue=QUEUE, task_name=task, seconds_since_heartbeat=lease_seconds
        )
    ]
    retried = []
    for job in stalled:
        try:
            if job.task_name == LADDER_TASK:
                if not await _requeue_stalled_ladder_job(app, job):
                    continue
            else:
                await app.job_manager.retry_job(job)
        except ConnectorException as problem:
            if isinstance(problem, UniqueViolation):
                # Another job of the same planned match waits (its tournament was submitted
                # again while this one was played): this one goes back once that one is taken
                # (the next beat tries again), and then finds its match played.
                log.info("job %s waits to be queued again: %s", job.id, problem.__cause__)
                continue
            if not isinstance(problem.__cause__, psycopg.errors.RaiseException):
                raise
            # Another worker (or the coordinator) saw it stalled too and was first.
            log.info("job %s was settled by another: %s", job.id, problem.__cause__)
            continue
        log.warning("job %s (%s) lost its worker: queued again", job.id, job_label(job.task_kwargs))
        tournament, slot = job.task_kwargs.get("tournament"), job.task_kwargs.get("slot")
        if isinstance(tournament, str) and isinstance(slot, int):  # what queue_slots defers
            retried.append(JobKey(tournament, slot))
    return retried


#: A ladder job being played leaves the ladder's queueing lock (which only counts among the
#: waiting jobs: procrastinate's unique index is on ``todo`` rows), so it can wait again.
_LEAVE_LADDER_LOCK = """
UPDATE procrastinate_jobs SET queueing_lock = NULL
 WHERE id = %(job_id)s AND status = 'doing' AND task_name = %(task)s
"""


async def _requeue_stalled_ladder_job(app: procrastinate.App, job: Job) -> bool:
    """Queue a stalled ladder job again, outside :data:`LADDER_LOCK`; or, stalled more than
    :data:`LADDER_STALL_LIMIT` times, fail it for good (``bisca serve`` then closes the
    matches it left open).  Whether it was queued again."""
    # procrastinate counts each retry as an attempt, and a ladder task has no retry strategy
    # (a worker gives a cut pairing back as a fresh job): a ladder job's attempts are its stalls.
    if job.attempts >= LADDER_STALL_LIMIT:
        await app.job_manager.finish_job(job, Status.FAILED, delete_job=False)
        log.error(
            "job %s (%s) lost its worker (%s) %d times: failed for good (bisca serve closes "
            "the matches it left open)",
            job.id,
            job_label(job.task_kwargs),
            "no longer registered" if job.worker_id is None else f"worker {job.worker_id}",
            job.attempts + 1,
        )
        return False
    # Another worker may queue it again first: then retry_job raises, whose caller says so.
    if job.queueing_lock is not None:
        await app.connector.execute_query_async(_LEAVE_LADDER_LOCK, job_id=job.id, task=LADDER_TASK)
    await app.job_manager.retry_job(job)
    return True


#: Why each failed job failed, the latest attempt of each planned match (procrastinate keeps
#: a job's status, not its error): the coordinator and ``status`` say it, whichever machine
#: the job failed on.
_JOB_FAILURES_TABLE = """
CREATE TABLE IF NOT EXISTS bisca_job_failures (
    tournament TEXT NOT NULL,
    slot       BIGINT NOT NULL,
    worker     TEXT NOT NULL,
    reason     TEXT NOT NULL,
    failed_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (tournament, slot)
)
"""

_RECORD_FAILURE = """
INSERT INTO bisca_job_failures (tournament, slot, worker, reason)
VALUES (%(tournament)s, %(slot)s, %(worker)s, %(reason)s)
ON CONFLICT (tournament, slot) DO UPDATE
   SET worker = excluded.worker, reason = excluded.reason, failed_at = now()
"""

_FAILURES = """
SELECT slot, worker, reason FROM bisca_job_failures
 WHERE tournament = %(tournament)s ORDER BY slot
"""


@dataclass(frozen=True)
class JobFailure:
    slot: int
    worker: str
    reason: str


async def record_job_failure(app: procrastinate.App, job: JobKey, worker: str, reason: str) -> None:
    await app.connector.execute_query_async(
        _RECORD_FAILURE, tournament=job.tournament, slot=job.slot, worker=worker, reason=reason
    )


async def job_failures(app: procrastinate.App, tournament: str) -> dict[int, JobFailure]:
    """The last failure of each of ``tournament``'s planned matches whose job failed, by
    slot (a match played since may still have one: callers ask about the unplayed ones)."""
    rows = await app.connector.execute_query_all_async(_FAILURES, tournament=tournament)
    return {
        int(row["slot"]): JobFailure(int(row["slot"]), row["worker"], row["reason"]) for row in rows
    }
