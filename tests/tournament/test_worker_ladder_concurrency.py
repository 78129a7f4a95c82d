"""``bisca worker --concurrency 1`` played two ladder pairings at once (seen in operation: two
ladder jobs ``doing`` under one worker, started 0.01 s apart).  The worker fetches a job ahead
of the matches it plays; a tournament's job fetched ahead waits for its turn, but a ladder's
began its pairing at once.  Now a ladder job takes a turn too, holds it until its pairing
ends, and one still waiting for it when the worker stops is given back unplayed, its count
of give-backs unchanged.

A worker in process on a real PostgreSQL, the ladder's task stood in for by pairings that
record their start and end and end when the test lets them.  What the tests wait for is
procrastinate starting the job fetched ahead: its worker logs that (``action="start_job"``)
as it calls the job, which then runs to its first wait without yielding, so once the test
sees the record, the job has either begun its pairing (the defect) or waits for its turn.
No sleep: each step waits for what it needs."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from procrastinate import App
from procrastinate.types import JSONValue

from bisca.server.store import open_store
from bisca.server.tournament._queue import (
    LADDER_TASK,
    QUEUE,
    ensure_queue_schema,
    ladder_deal_lock,
    queue_app,
)
from bisca.server.tournament._worker import GIVEN_BACK, Worker, WorkerOptions
from tests.support.postgres import PostgresServer
from tests.support.waiting import loop_until

#: A ladder job's arguments, but its seed (each test's pairings are told apart by it).
JOB: dict[str, JSONValue] = {
    "game": "belote",
    "settings": {"deals": 1},
    "players": ["ada.v1", "bob.v1", "cy.v1", "dee.v1"],
    "seatings": [["ada.v1", "bob.v1", "cy.v1", "dee.v1"]],
    "uploads": "/nowhere/submissions",
}
FIRST, SECOND = 1001, 1002
#: How long a worker in process may take to stop once its pairings may end.
STOP_TIMEOUT_S = 120


class _StartedJobs(logging.Handler):
    """The ids of the jobs procrastinate's workers start, in order: their ``start_job``
    records, logged as each job is called."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[int] = []

    def emit(self, record: logging.LogRecord) -> None:
        worker = getattr(record, "worker", None)
        if getattr(record, "action", None) == "start_job" and isinstance(worker, dict):
            self.ids.append(worker["job_id"])


@pytest.fixture
def started_jobs() -> Iterator[list[int]]:
    handler = _StartedJobs()
    # Each worker logs under a child of this logger (``procrastinate.worker.NAME``).
    logger = logging.getLogger("procrastinate.worker")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.ids
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


class Pairings:
    """The ladder's task stood in for: each pairing (named by its seed) records its start and
    its end, and ends once the test lets it; it finished one match."""

    def __init__(self) -> None:
        self.events: list[tuple[str, JSONValue]] = []
        self.may_end = asyncio.Event()

    async def play(self, **job: JSONValue) -> int:
        self.events.append(("start", job["seed"]))
        await self.may_end.wait()
        self.events.append(("end", job["seed"]))
        return 1


def _store(url: str, tmp_path: Path) -> None:
    open_store(url, tmp_path / "league").close()  # a Bisca store first, then its queue
    ensure_queue_schema(url)


def _worker(url: str, tmp_path: Path, pairings: Pairings) -> Worker:
    options = WorkerOptions(store=url, data_dir=tmp_path / "w1", concurrency=1, name="w1")
    # (What it says is not what these tests are about.)
    return Worker(options, out=io.StringIO(), tasks={LADDER_TASK: pairings.play})


async def _queue_pairing(app: App, seed: int, given_back: int = 0) -> int:
    """A ladder job of the pairing ``seed`` (the deal's lock only, as a pairing queued again
    waits: two of them wait at once); its id."""
    job: dict[str, JSONValue] = {**JOB, "seed": seed, GIVEN_BACK: given_back}
    lock = ladder_deal_lock(JOB["game"], seed)
    deferred = app.configure_task(LADDER_TASK, queue=QUEUE, lock=lock)
    return await deferred.defer_async(**job)


def test_a_worker_playing_one_match_at_a_time_plays_one_ladder_pairing_at_a_time(
    postgres: PostgresServer, tmp_path: Path, started_jobs: list[int]
) -> None:
    url = postgres.new_database()
    _store(url, tmp_path)

    async def scenario() -> tuple[Pairings, Worker]:
        pairings = Pairings()
        worker = _worker(url, tmp_path, pairings)
        app = queue_app(url)
        async with app.open_async():
            await _queue_pairing(app, FIRST)
            second = await _queue_pairing(app, SECOND)
            running = asyncio.create_task(worker.run())
            await loop_until(lambda: second in started_jobs, "the job fetched ahead started")
            pairings.may_end.set()
            await loop_until(lambda: ("end", SECOND) in pairings.events, "the second's end")
            worker.stopping.set()
            await asyncio.wait_for(running, STOP_TIMEOUT_S)
        return pairings, worker

    pairings, worker = asyncio.run(scenario())
    assert pairings.events == [
        ("start", FIRST),
        ("end", FIRST),
        ("start", SECOND),
        ("end", SECOND),
    ], "the second pairing began before the first ended"
    assert worker.played == 2


def test_a_ladder_job_waiting_for_its_turn_when_the_worker_stops_is_given_back_unplayed(
    postgres: PostgresServer,
    tmp_path: Path,
    started_jobs: list[int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The job fetched ahead (given back once already, by a worker cut off) goes back to the
    queue as it came: waiting, its count of give-backs and attempts unchanged, its pairing
    never begun; the running pairing finishes and alone counts."""
    url = postgres.new_database()
    _store(url, tmp_path)

    async def scenario() -> tuple[Pairings, Worker, int, list[tuple[JSONValue, ...]]]:
        pairings = Pairings()
        worker = _worker(url, tmp_path, pairings)
        app = queue_app(url)
        async with app.open_async():
            await _queue_pairing(app, FIRST)
            second = await _queue_pairing(app, SECOND, given_back=1)
            running = asyncio.create_task(worker.run())
            await loop_until(lambda: second in started_jobs, "the job fetched ahead started")
            running_while_one_waits = worker._playing_elsewhere
            worker.stopping.set()
            # The first pairing ends (its turn free) only once the worker stops taking turns.
            await loop_until(worker._draining.is_set, "the worker stopping its queue")
            pairings.may_end.set()
            await asyncio.wait_for(running, STOP_TIMEOUT_S)
            rows = await app.connector.execute_query_all_async(
                "SELECT status::text AS status, args, attempts FROM procrastinate_jobs"
                " WHERE task_name = %(task)s AND status = 'todo' ORDER BY id",
                task=LADDER_TASK,
            )
        waiting: list[tuple[JSONValue, ...]] = [
            (row["args"]["seed"], row["args"][GIVEN_BACK], row["attempts"]) for row in rows
        ]
        return pairings, worker, running_while_one_waits, waiting

    pairings, worker, running_while_one_waits, waiting = asyncio.run(scenario())
    assert pairings.events == [("start", FIRST), ("end", FIRST)], "the job fetched ahead played"
    assert waiting == [(SECOND, 1, 0)], waiting
    assert running_while_one_waits == 1, "a job waiting for its turn counted as running"
    assert worker.played == 1 and worker._playing_elsewhere == 0
    # A normal stop: its give-back is one line, not an error with a traceback (re-test 3, A).
    given_back = [r for r in caplog.records if "given back unplayed" in r.getMessage()]
    assert given_back, [r.getMessage() for r in caplog.records]
    assert all(r.levelno <= logging.WARNING and r.exc_info is None for r in given_back), [
        (r.levelname, r.getMessage()) for r in given_back
    ]


def test_a_job_cancelled_while_it_waits_for_its_turn_takes_no_turn_with_it(
    tmp_path: Path,
) -> None:
    """procrastinate cancels a job it aborts: one cancelled while it waited for its turn (a
    tournament's or a ladder's) leaves the worker its matches at once, not one fewer for good."""

    async def scenario() -> None:
        worker = Worker(WorkerOptions(store="postgresql://x", data_dir=tmp_path), out=None)
        playing = await worker._turn("the first job")
        waiting = asyncio.create_task(worker._turn("a job fetched ahead"))
        await asyncio.sleep(0)  # (a task begins at the loop's next turn) it waits for its turn
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        playing.end()
        await loop_until(lambda: not worker._playing.locked(), "the worker's turn free again")

    asyncio.run(scenario())
