"""The end of a ladder job on a PostgreSQL league (operator review, findings 2 and 8): however
a pairing's job ends, none of its matches is left waiting or running (such a match, never
played, held its deal's replays and stderr sealed for good); ``bisca serve`` closes, as it
starts, those of jobs that ended while the store was lost; and the worker's log lines about
a pairing's job name it without its seed (its deals are sealed while it is played)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from procrastinate.jobs import Job

from bisca.engine import GAMES
from bisca.server.hosting import Ladder, LadderWorker
from bisca.server.hosting._ladder import (
    ORPHANED_ROTATION,
    DrawnPairing,
    LadderJobFailed,
    close_orphaned_rotations,
    ladder_queue,
)
from bisca.server.league import UNPLAYED_LADDER_ROTATION, unplayed_ladder_rotation
from bisca.server.records import MatchStatus
from bisca.server.referee import MatchPlan
from bisca.server.store import open_store
from bisca.server.tournament._queue import LADDER_TASK, QUEUE, retry_stalled
from bisca.server.tournament._worker import GIVE_BACK_LIMIT, GIVEN_BACK, Worker, WorkerOptions
from tests.support.league import PASSWORD, active_version, starter_bot
from tests.support.postgres import PostgresServer

BOTS = ("ada", "bob", "cy", "dee")
SEED = 5350017821588744242
ONE_DEAL = {"deals": 1}


def _job(players: list[str]) -> dict[str, object]:
    seatings = [players[i:] + players[:i] for i in range(len(players))]
    return {
        "game": "belote",
        "settings": ONE_DEAL,
        "players": players,
        "seed": SEED,
        "seatings": seatings,
        "uploads": "/nowhere/submissions",
    }


def _league(url: str, tmp: Path) -> list[str]:
    with open_store(url, tmp / "league") as store:
        for name in BOTS:
            store.accounts.create(name, PASSWORD)
            folder = starter_bot(tmp / f"{name}bot")
            active_version(store, tmp / "league" / "submissions", name, folder)
    return [f"{name}bot.v1" for name in BOTS]


async def _record_first_rotation(server: object, drawn: DrawnPairing) -> str:
    """What a store outage left (finding 2): a rotation recorded, waiting, that its job never
    plays nor closes."""
    referee = server.referee  # type: ignore[attr-defined]
    seating = tuple(drawn.pairing.seatings[0])
    settings = GAMES["belote"].settings(ONE_DEAL)
    plan = MatchPlan("belote", settings, seating, seed=drawn.pairing.seed, rated=True)
    recorded = await server.in_trio(referee.record_ahead, plan, frozenset(seating))  # type: ignore[attr-defined]
    return str(recorded.match_id)


def _deal(url: str, tmp: Path) -> list[tuple[str, MatchStatus, str]]:
    with open_store(url, tmp / "reader") as store:
        found = store.matches.find(None, None, game="belote", seed=SEED)
        return [(match.id, match.status, match.reason) for match in found]


def test_a_ladder_job_that_ends_closes_the_rotations_it_left_waiting(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job succeeds with a rotation still waiting (its store lost as the rotation's end
    was recorded): the rotation is failed as the job ends, saying why."""
    url = postgres.new_database()
    players = _league(url, tmp_path)
    left: list[str] = []

    async def leaves_one_waiting(
        self: Ladder, server: object, launcher: object, drawn: DrawnPairing
    ) -> list[str]:
        left.append(await _record_first_rotation(server, drawn))
        return []

    monkeypatch.setattr(Ladder, "play_pairing", leaves_one_waiting)
    worker = LadderWorker(url, tmp_path / "w1", sandbox=False)
    asyncio.run(worker.play(**_job(players)))  # type: ignore[arg-type]
    [(match_id, status, reason)] = _deal(url, tmp_path)
    assert match_id == left[0]
    assert status is MatchStatus.FAILED
    assert reason.startswith(f"{UNPLAYED_LADDER_ROTATION}: its job ended"), reason


def test_a_ladder_job_that_fails_closes_its_rotations_and_names_them(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job that fails after a rotation was recorded: the rotation is failed with the job's
    error, and the job's error names the pairing's matches (for the worker's log: finding 8),
    never its seed."""
    url = postgres.new_database()
    players = _league(url, tmp_path)

    async def fails(self: Ladder, server: object, launcher: object, drawn: DrawnPairing) -> None:
        await _record_first_rotation(server, drawn)
        raise OSError("the store went away")

    monkeypatch.setattr(Ladder, "play_pairing", fails)
    worker = LadderWorker(url, tmp_path / "w1", sandbox=False)
    with pytest.raises(LadderJobFailed) as failed:
        asyncio.run(worker.play(**_job(players)))  # type: ignore[arg-type]
    [(match_id, status, reason)] = _deal(url, tmp_path)
    assert status is MatchStatus.FAILED
    assert reason == unplayed_ladder_rotation("the store went away")
    assert match_id in str(failed.value) and str(SEED) not in str(failed.value)


def test_bisca_serve_closes_the_ladder_matches_no_job_holds(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """A job that failed for good while the store was lost could close nothing: ``bisca
    serve`` closes the ladder matches no job waits for or plays as it starts; those of a
    job still queued are that job's, and a match of no ladder job is not the ladder's."""
    url = postgres.new_database()
    open_store(url, tmp_path / "league").close()  # a Bisca store first, then its queue
    queue = ladder_queue()
    queue.ensure_queue_schema(url)

    async def scenario() -> tuple[int, int, int, list[MatchStatus]]:
        app = queue.queue_app(url)
        async with app.open_async():
            with open_store(url, tmp_path / "league") as store:
                ids = []
                for seed in (SEED, SEED + 1, SEED + 2):
                    match_id = f"m-{seed}"
                    bots = ["a.v1", "b.v1", "c.v1", "d.v1"]
                    store.matches.create(
                        match_id, "belote", dict(ONE_DEAL), seed, bots, {}, rated=True
                    )
                    ids.append(match_id)
                for seed in (SEED, SEED + 1):  # no job of SEED + 2
                    await queue.queue_ladder_pairing(app, game="belote", seed=seed)
                    lock = queue.ladder_deal_lock("belote", seed)
                    if seed == SEED:  # taken, then failed for good
                        await app.connector.execute_query_async(
                            "UPDATE procrastinate_jobs SET status = 'doing' WHERE lock = %(l)s",
                            l=lock,
                        )
                        await app.connector.execute_query_async(
                            "UPDATE procrastinate_jobs SET status = 'failed' WHERE lock = %(l)s",
                            l=lock,
                        )
                        # the next pairing may wait now (one at a time)
                        await app.connector.execute_query_async(
                            "UPDATE procrastinate_jobs SET queueing_lock = NULL WHERE lock = %(l)s",
                            l=lock,
                        )
                first = await close_orphaned_rotations(store, queue, app)
                again = await close_orphaned_rotations(store, queue, app)
                statuses = []
                for match_id in ids:
                    record = store.matches.get(match_id)
                    assert record is not None
                    statuses.append(record.status)
                reason = store.matches.get(ids[0])
                assert reason is not None and reason.reason == ORPHANED_ROTATION
                return first, again, len(ids), statuses

    first, again, _, statuses = asyncio.run(scenario())
    assert (first, again) == (1, 0)
    assert statuses == [MatchStatus.FAILED, MatchStatus.WAITING, MatchStatus.WAITING]


def test_a_stalled_ladder_job_is_logged_without_its_seed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Finding 8: "job 257 ({'game': 'belote', 'seed': 5350017821588744242, ...}) lost its
    worker": the seed of a pairing still sealed, in a log line."""
    kwargs = {**_job(["ada.v1", "bob.v1", "cy.v1", "dee.v1"]), GIVEN_BACK: 1}
    job = Job(id=257, queue=QUEUE, lock="l", queueing_lock=None, task_name=LADDER_TASK,
              task_kwargs=kwargs)  # fmt: skip

    class Jobs:
        async def get_stalled_jobs(self, **asked: object) -> list[Job]:
            return [job] if asked["task_name"] == LADDER_TASK else []

        async def retry_job(self, _: Job) -> None:
            return None

    app = SimpleNamespace(job_manager=Jobs())
    with caplog.at_level(logging.WARNING, logger="bisca.queue"):
        asyncio.run(retry_stalled(app, 30.0))  # type: ignore[arg-type]
    [line] = [record.getMessage() for record in caplog.records]
    assert "job 257" in line and "lost its worker" in line and "ada.v1" in line, line
    assert str(SEED) not in line, line


def test_a_ladder_job_failed_for_good_is_logged_as_an_error(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Finding 8: a job that failed for good was said on the worker's stdout only: an error
    line names the job and its pairing's matches (the job's error), not its seed."""
    said: list[str] = []

    async def task(**_: object) -> None:
        raise LadderJobFailed("boom (the pairing's matches: m-1, m-2)")

    worker = Worker(WorkerOptions(store="postgresql://x", data_dir=tmp_path), out=None)
    worker.say = said.append  # type: ignore[method-assign]
    job = worker._giving_back(LADDER_TASK, task)
    context = SimpleNamespace(job=SimpleNamespace(id=41, lock="l"))
    arguments = {**_job(["ada.v1", "bob.v1", "cy.v1", "dee.v1"]), GIVEN_BACK: GIVE_BACK_LIMIT}
    with caplog.at_level(logging.ERROR), pytest.raises(LadderJobFailed):
        asyncio.run(job(context, **arguments))  # type: ignore[arg-type]
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert "job 41" in line and "m-1, m-2" in line and "failed for good" in line, line
    assert str(SEED) not in line, line
