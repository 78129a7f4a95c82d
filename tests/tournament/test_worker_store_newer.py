"""Operator review, findings 5 and 7, the worker's part.

5: a shared store migrated by a newer Bisca while an older worker ran: the worker took job
after job and failed each "for good" (41 in a minute), using up their retries.  Now the first
job that finds the store newer is given back unplayed (its retries untouched), the worker says
once why and stops, and ``bisca worker`` exits non-zero.

7: the worker counted tournament matches only ("stopped after 0 match(es)" after hundreds of
ladder matches) and printed no line per match: a ladder job's finished matches count, and
``bisca worker`` prints the referee's line per match started and ended, as ``bisca serve``."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest

from bisca.server.errors import StoreUnavailable
from bisca.server.hosting import Ladder, LadderWorker
from bisca.server.hosting._ladder import DrawnPairing
from bisca.server.metrics import REGISTRY
from bisca.server.referee import MATCH_LINES_LOGGER
from bisca.server.store import open_store
from bisca.server.store._migrations import MIGRATIONS
from bisca.server.tournament._queue import (
    LADDER_TASK,
    ensure_queue_schema,
    queue_app,
    queue_ladder_pairing,
)
from bisca.server.tournament._worker import (
    GIVE_BACK_LIMIT,
    GIVEN_BACK,
    GivenBack,
    Worker,
    WorkerOptions,
    run_worker,
)
from tests.hosting.test_ladder_job_end import _job, _league, _record_first_rotation
from tests.support.postgres import PostgresServer
from tests.support.waiting import loop_until

NEWER = len(MIGRATIONS) + 1
JOB = {
    "game": "belote",
    "settings": {"deals": 1},
    "players": ["ada.v1", "bob.v1", "cy.v1", "dee.v1"],
    "seed": 5350017821588744242,
    "seatings": [["ada.v1", "bob.v1", "cy.v1", "dee.v1"]],
    "uploads": "/nowhere/submissions",
}


def _migrated_by_a_newer_bisca(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("UPDATE bisca_schema SET version = %s", (NEWER,))


def _worker(url: str, tmp_path: Path, said: list[str]) -> Worker:
    options = WorkerOptions(store=url, data_dir=tmp_path / "w1", lease_seconds=3.0, name="w1")
    worker = Worker(options, tasks={LADDER_TASK: LadderWorker(url, tmp_path / "w1", False).play})
    worker.say = said.append  # type: ignore[method-assign]
    return worker


def _says_newer_once(said: list[str]) -> None:
    newer = [line for line in said if "newer than this Bisca" in line]
    assert len(newer) == 1, said
    assert f"schema version {NEWER}, newer than this Bisca ({len(MIGRATIONS)})" in newer[0]
    assert "upgrade Bisca on this machine" in newer[0]
    assert not [line for line in said if "failed" in line or "cut off" in line], said


def test_a_ladder_job_on_a_newer_store_is_given_back_unplayed_and_the_worker_stops(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """The job on its last try (it would have failed for good): given back as it came, not
    failed; a second such job is given back too, and the reason is said once."""
    url = postgres.new_database()
    open_store(url, tmp_path / "league").close()
    _migrated_by_a_newer_bisca(url)
    said: list[str] = []
    worker = _worker(url, tmp_path, said)
    job = worker._giving_back(LADDER_TASK, worker.tasks[LADDER_TASK])
    context = SimpleNamespace(job=SimpleNamespace(id=7, lock="l"))
    for _ in range(2):
        with pytest.raises(GivenBack):
            asyncio.run(job(context, **JOB, **{GIVEN_BACK: GIVE_BACK_LIMIT}))  # type: ignore[arg-type]
    _says_newer_once(said)
    assert worker.stopping.is_set() and worker.too_new is not None
    assert [back.arguments[GIVEN_BACK] for back in worker._given_back] == [GIVE_BACK_LIMIT] * 2
    assert worker.played == 0


def test_a_tournament_job_on_a_newer_store_is_given_back_not_failed(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    open_store(url, tmp_path / "league").close()
    _migrated_by_a_newer_bisca(url)
    said: list[str] = []
    worker = _worker(url, tmp_path, said)
    with pytest.raises(GivenBack):  # procrastinate queues it again (its retry strategy)
        asyncio.run(worker.play("cup", 3))
    _says_newer_once(said)
    assert worker.stopping.is_set()


def test_bisca_worker_exits_non_zero_once_its_store_is_migrated_by_a_newer_bisca(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """A running worker, the store migrated under it, then a ladder job queued: the worker
    stops by itself, the job waits in the queue unplayed, and the store's record of the
    worker says why."""
    url = postgres.new_database()
    open_store(url, tmp_path / "league").close()
    ensure_queue_schema(url)
    said: list[str] = []
    worker = _worker(url, tmp_path, said)

    async def scenario() -> list[tuple[str, object]]:
        running = asyncio.create_task(worker.run())
        await loop_until(lambda: any("taking matches" in line for line in said), "the start")
        await asyncio.to_thread(_migrated_by_a_newer_bisca, url)
        app = queue_app(url)
        async with app.open_async():
            await queue_ladder_pairing(app, **JOB)  # type: ignore[arg-type]
            await asyncio.wait_for(running, 120)  # without a signal
            rows = await app.connector.execute_query_all_async(
                "SELECT status, args FROM procrastinate_jobs WHERE task_name = %(t)s",
                t=LADDER_TASK,
            )
        return [(str(row["status"]), row["args"].get(GIVEN_BACK, 0)) for row in rows]

    jobs = asyncio.run(scenario())
    _says_newer_once(said)
    assert ("todo", 0) in jobs, jobs  # back in the queue, its retries untouched
    with psycopg.connect(url) as db:
        row = db.execute("SELECT note FROM workers WHERE name = 'w1'").fetchone()
    assert row is not None and "newer than this Bisca" in row[0], row
    assert worker.too_new is not None  # `run_worker` returns 1 for it


def test_a_ladder_job_s_finished_matches_count_as_played(tmp_path: Path) -> None:
    """Finding 7: `bisca workers` said "(0 running, 0 played)" of a worker playing the
    ladder: a ladder job counts as running while it plays, its finished matches as played."""
    worker = Worker(WorkerOptions(store="postgresql://x", data_dir=tmp_path), out=None)
    running: list[int] = []

    async def pairing(**_: object) -> int:
        running.append(worker._playing_elsewhere)
        return 3  # its matches that finished

    job = worker._giving_back(LADDER_TASK, pairing)
    context = SimpleNamespace(job=SimpleNamespace(id=1, lock="l"))
    asyncio.run(job(context, **JOB))  # type: ignore[arg-type]
    asyncio.run(job(context, **JOB))  # type: ignore[arg-type]
    assert worker.played == 6 and running == [1, 1] and worker._playing_elsewhere == 0


def test_bisca_worker_prints_a_line_per_match(tmp_path: Path) -> None:
    """The referee's line per match started and ended (a ladder's too: its id and result,
    never its seed) is printed by `bisca worker` as by `bisca serve`."""
    lines = logging.getLogger(MATCH_LINES_LOGGER)
    before = lines.level
    try:
        lines.setLevel(logging.NOTSET)
        options = WorkerOptions(store=str(tmp_path / "a.sqlite3"), data_dir=tmp_path)
        assert run_worker(options) == 1  # (a SQLite store: refused at once)
        assert lines.isEnabledFor(logging.INFO)
    finally:
        lines.setLevel(before)


def test_a_ladder_job_returns_how_many_of_its_matches_finished(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the worker counts: the pairing's matches that finished, not a failed one."""
    url = postgres.new_database()
    players = _league(url, tmp_path)

    async def one_finished_one_failed(
        self: Ladder, server: object, launcher: object, drawn: DrawnPairing
    ) -> list[str]:
        finished = await _record_first_rotation(server, drawn)
        failed = await _record_first_rotation(server, drawn)
        store = server.referee.store  # type: ignore[attr-defined]
        await asyncio.to_thread(store.matches.finish, finished, 1, [])
        await asyncio.to_thread(store.matches.fail, failed, "a bot crashed")
        return [finished, failed]

    monkeypatch.setattr(Ladder, "play_pairing", one_finished_one_failed)
    worker = LadderWorker(url, tmp_path / "w1", sandbox=False)
    assert asyncio.run(worker.play(**_job(players))) == 1  # type: ignore[arg-type]


def test_a_tournament_job_cut_off_by_a_lost_store_is_queued_again_not_failed(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review s59c, F3: a tournament's job that met the store lost failed for good (a ladder
    job was queued again): only running the coordinator again played its match.  It is given
    back (procrastinate's retry strategy queues it again), said in a line, and the worker
    takes no job until the store answers."""
    url = postgres.new_database()
    open_store(url, tmp_path / "league").close()
    said: list[str] = []
    worker = _worker(url, tmp_path, said)

    async def lost(*args: object) -> None:
        raise StoreUnavailable(f"the store {url} failed: server closed the connection")

    monkeypatch.setattr(worker, "_play", lost)
    counted = {"outcome": "queued_again"}
    before = REGISTRY.get_sample_value("bisca_worker_jobs_total", counted)
    with pytest.raises(GivenBack):
        asyncio.run(worker.play("cup", 3))
    assert said == ["cup slot 3: cut off, the store lost: queued again"], said
    # Counted where an operator sees it (review s59c, F5: no metric said so).
    assert REGISTRY.get_sample_value("bisca_worker_jobs_total", counted) == (before or 0) + 1
    assert worker._job_lost_the_store.is_set()
