"""A ladder job whose worker was killed on a busy PostgreSQL league (operator re-test): every
ladder job was queued under one queueing lock, procrastinate keeps one waiting job per such
lock, and ``bisca serve`` queues the next pairing as soon as one is taken, so putting the
stalled job back clashed with the next pairing at every beat.  It stayed ``doing`` with no
worker for minutes and its rotations ``waiting``, the finished ones' replays sealed.

Now it goes back outside that lock (``bisca serve`` still keeps one fresh pairing waiting),
is the next ladder job taken, and its worker closes the cut rotations and plays the missing
ones once each; one whose workers keep dying is failed for good and its rotations swept.

No worker process and no sleep: the jobs are fetched as a worker fetches them, a killed
worker is one whose heartbeat is an hour old, pruned as the live workers prune it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from procrastinate import App
from procrastinate.jobs import Job, Status

from bisca.server.hosting import LadderWorker
from bisca.server.hosting._ladder import (
    ORPHANED_ROTATION,
    LadderQueue,
    close_orphaned_rotations,
    ladder_queue,
)
from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.store import open_store
from bisca.server.tournament._queue import (
    LADDER_LOCK,
    LADDER_STALL_LIMIT,
    QUEUE,
    retry_stalled,
)
from tests.hosting.test_ladder_job_end import ONE_DEAL, SEED, _job, _league
from tests.support.postgres import PostgresServer

#: The workers' lease in these tests (``bisca worker``'s default).
LEASE_S = 30.0
#: What the killed worker had recorded of its pairing: the first rotation under way, the
#: others recorded ahead, waiting (``Referee.record_ahead``).
CUT_ROTATION = "victim-0"


async def _taken_by_a_worker_then_killed(
    app: App, queue: LadderQueue, store_url: str, data: Path, pairing: dict[str, object]
) -> Job:
    """``pairing`` queued by ``bisca serve``, taken by a worker that records its rotations and
    is killed; ``bisca serve`` queues the next pairing meanwhile (under the ladder's lock, the
    one the killed worker's job had left); the other workers prune the killed one."""
    assert await queue.queue_ladder_pairing(app, **pairing)  # type: ignore[arg-type]
    victim = await app.job_manager.register_worker()
    taken = await app.job_manager.fetch_job(queues=[QUEUE], worker_id=victim)
    assert taken is not None and taken.queueing_lock == LADDER_LOCK
    following = {**pairing, "seed": SEED + 1}
    assert await queue.queue_ladder_pairing(app, **following)  # type: ignore[arg-type]
    with open_store(store_url, data) as store:
        seatings = pairing["seatings"]
        assert isinstance(seatings, list)
        for rotation, seating in enumerate(seatings):
            store.matches.create(
                f"victim-{rotation}", "belote", dict(ONE_DEAL), SEED, seating, {}, rated=True
            )
        store.matches.mark_running(CUT_ROTATION)
    await app.connector.execute_query_async(
        "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 hour'"
        " WHERE id = %(victim)s",
        victim=victim,
    )
    assert await app.job_manager.prune_stalled_workers(LEASE_S) == [victim]
    return taken


async def _ladder_jobs(app: App) -> list[tuple[int, str, str | None]]:
    """Each ladder job: its id, status and queueing lock."""
    rows = await app.connector.execute_query_all_async(
        "SELECT id, status::text AS status, queueing_lock FROM procrastinate_jobs ORDER BY id"
    )
    return [(int(row["id"]), str(row["status"]), row["queueing_lock"]) for row in rows]


def _deal(store_url: str, data: Path) -> list[MatchRecord]:
    with open_store(store_url, data) as store:
        return store.matches.find(None, None, game="belote", seed=SEED)


def test_a_stalled_ladder_job_goes_back_beside_the_next_pairing_and_is_finished_once(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    players = _league(url, tmp_path)
    pairing = {**_job(players), "uploads": str(tmp_path / "league" / "submissions")}
    queue = ladder_queue()
    queue.ensure_queue_schema(url)

    async def scenario() -> tuple[int, list[tuple[int, str, str | None]], bool, int | None]:
        app = queue.queue_app(url)
        async with app.open_async():
            taken = await _taken_by_a_worker_then_killed(
                app, queue, url, tmp_path / "victim", pairing
            )
            assert taken.id is not None
            await retry_stalled(app, LEASE_S)
            jobs = await _ladder_jobs(app)
            # Still one fresh pairing waiting: bisca serve draws no other.
            another = await queue.queue_ladder_pairing(app, **{**pairing, "seed": SEED + 2})  # type: ignore[arg-type]
            heir = await app.job_manager.register_worker()
            again = await app.job_manager.fetch_job(queues=[QUEUE], worker_id=heir)
            assert again is not None
            worker = LadderWorker(url, tmp_path / "heir", sandbox=False)
            await worker.play(**again.task_kwargs)  # type: ignore[arg-type]
            await app.job_manager.finish_job(again, Status.SUCCEEDED, delete_job=False)
            return taken.id, jobs, another, again.id

    taken, jobs, another, again = asyncio.run(scenario())
    [(stalled_id, stalled, stalled_lock), (_, following, following_lock)] = jobs
    assert (stalled_id, stalled, stalled_lock) == (taken, "todo", None), jobs
    assert (following, following_lock) == ("todo", LADDER_LOCK), jobs
    assert another is False
    assert again == taken, "the pairing queued again is the next one taken"

    deal = _deal(url, tmp_path / "reader")
    left = [(m.id, m.status) for m in deal if not m.status.is_over]
    assert not left, left
    finished = [tuple(m.bots) for m in deal if m.status is MatchStatus.FINISHED]
    assert sorted(finished) == sorted(tuple(s) for s in pairing["seatings"])  # type: ignore[attr-defined]
    cut = [m for m in deal if m.id.startswith("victim-")]
    assert [m.status for m in cut] == [MatchStatus.FAILED] * len(cut)
    assert all(m.reason.startswith("cut off") for m in cut), [m.reason for m in cut]


def test_a_ladder_job_stalled_too_often_is_failed_and_its_rotations_swept(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    open_store(url, tmp_path / "league").close()  # a Bisca store first, then its queue
    pairing = _job(["ada.v1", "bob.v1", "cy.v1", "dee.v1"])
    queue = ladder_queue()
    queue.ensure_queue_schema(url)

    async def scenario() -> tuple[int, list[tuple[int, str, str | None]], int]:
        app = queue.queue_app(url)
        async with app.open_async():
            taken = await _taken_by_a_worker_then_killed(
                app, queue, url, tmp_path / "victim", pairing
            )
            await app.connector.execute_query_async(
                "UPDATE procrastinate_jobs SET attempts = %(stalls)s WHERE id = %(id)s",
                stalls=LADDER_STALL_LIMIT,
                id=taken.id,
            )
            await retry_stalled(app, LEASE_S)
            jobs = await _ladder_jobs(app)
            with open_store(url, tmp_path / "league") as store:
                swept = await close_orphaned_rotations(store, queue, app)
            assert taken.id is not None
            return taken.id, jobs, swept

    taken, jobs, swept = asyncio.run(scenario())
    [(failed_id, failed, _), (_, following, following_lock)] = jobs
    assert (failed_id, failed) == (taken, "failed"), jobs
    assert (following, following_lock) == ("todo", LADDER_LOCK), jobs
    deal = _deal(url, tmp_path / "reader")
    assert swept == len(deal) == len(pairing["seatings"])  # type: ignore[arg-type]
    assert {(m.status, m.reason) for m in deal} == {(MatchStatus.FAILED, ORPHANED_ROTATION)}
