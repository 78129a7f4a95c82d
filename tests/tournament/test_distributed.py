"""Distributed tournaments for real: a PostgreSQL server (Debian's, one per test session, a
fresh database per test), ``bisca worker`` processes, the coordinator as ``bisca tournament
run --distributed``, and faults: a worker killed with SIGKILL mid-match, the coordinator
killed, the database gone and back.  Every planned match is recorded once, and 1 or 3 workers
give the same leaderboard."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bisca.server.records import MatchStatus
from bisca.server.store import Store, open_store
from bisca.server.tournament.distributed import CUT_OFF_BY_A_WORKER
from tests.support.commands import BISCA, bisca
from tests.support.postgres import PostgresServer
from tests.support.waiting import poll_until

from .support import tournament_text

SLOW_BOT = Path(__file__).parent / "bots" / "slow.py"
#: Short leases so that a killed worker's match comes back within seconds.
LEASE = "2"
#: Greedy bots only: their play follows from the deal alone, so two runs of one plan give the
#: same results (the random bot's choices depend on which match asks first).
GREEDY = (("g1", "greedy"), ("g2", "greedy"), ("g3", "greedy"))


@dataclass
class WorkerProcess:
    process: subprocess.Popen[str]
    stderr: Path
    name: str

    def output(self) -> str:
        return self.stderr.read_text()


class Workers:
    """The worker processes of one test, stopped at its end."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        self.folder = folder
        self.started: list[WorkerProcess] = []

    def start(self, name: str, *options: str) -> WorkerProcess:
        stderr = self.folder / f"{name}.stderr"
        argv = [*BISCA, "worker", "--store", self.url, "--data", str(self.folder / name)]
        argv += ["--name", name, "--lease", LEASE, *options]
        with stderr.open("w") as sink:
            process = subprocess.Popen(argv, stdout=sink, stderr=sink, text=True)
        worker = WorkerProcess(process, stderr, name)
        self.started.append(worker)
        poll_until(f"worker {name} to start", lambda: "taking matches" in worker.output(), 60)
        return worker

    def stop(self) -> None:
        for worker in self.started:
            if worker.process.poll() is None:
                worker.process.send_signal(signal.SIGTERM)
        for worker in self.started:
            try:
                worker.process.wait(60)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()


@pytest.fixture
def database(postgres: PostgresServer) -> str:
    return postgres.new_database()


@pytest.fixture
def workers(database: str, tmp_path: Path) -> Iterator[Workers]:
    pool = Workers(database, tmp_path)
    yield pool
    pool.stop()


def write_tournament(folder: Path, name: str, **fields: object) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(tournament_text(name=name, **fields))  # type: ignore[arg-type]
    return path


def run_distributed(path: Path, url: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return bisca(
        "tournament", "run", str(path), "--store", url, "--distributed", "--lease", LEASE,
        "--data", str(path.parent / "coordinator"), timeout=timeout,
    )  # fmt: skip


def store_of(url: str, folder: Path) -> Store:
    return open_store(url, folder)


def recorded_once(store: Store, name: str) -> list[str]:
    """Check every planned match of ``name`` is finished once, rated once, with its complete
    log in the store; returns the matches' ids (the current attempt of each slot)."""
    slots = store.tournaments.slots(name)
    assert all(slot.done for slot in slots)
    ids = [str(slot.match_id) for slot in slots]
    finished = [m.id for m in store.matches.find(MatchStatus.FINISHED, limit=10_000)]
    assert sorted(finished) == sorted(ids), "one finished match per planned match, no other"
    game = store.tournaments.get(name)
    assert game is not None
    rated = {row.match_id for row in store.ratings.history(game.game)}
    assert rated == set(ids)
    for match_id in ids:
        kept = store.logs.get(match_id)
        record = store.matches.get(match_id)
        assert kept is not None and record is not None and kept.log_hash == record.log_hash
    return ids


def leaderboard(url: str, game: str) -> list[dict[str, object]]:
    done = bisca("leaderboard", "--game", game, "--store", url, "--format", "json", check=True)
    rows: list[dict[str, object]] = json.loads(done.stdout)["rows"]
    return rows


@pytest.fixture(scope="module")
def one_and_three(
    postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[int, tuple[str, subprocess.CompletedProcess[str]]]:
    """One tournament played twice, by 1 worker (its bots sandboxed) and by 3 workers."""
    runs = {}
    for count in (1, 3):
        folder = tmp_path_factory.mktemp(f"workers{count}")
        url = postgres.new_database()
        path = write_tournament(folder, "d", per_pairing=2, bots=GREEDY)
        pool = Workers(url, folder)
        try:
            for number in range(count):
                options = ["--concurrency", "2"] + ([] if count == 1 else ["--no-sandbox"])
                pool.start(f"w{number}", *options)
            runs[count] = (url, run_distributed(path, url))
        finally:
            pool.stop()
        for worker in pool.started:
            assert worker.process.returncode == 0, worker.output()
    return runs


def test_three_workers_record_every_planned_match_once(
    one_and_three: dict[int, tuple[str, subprocess.CompletedProcess[str]]], tmp_path: Path
) -> None:
    url, done = one_and_three[3]
    assert done.returncode == 0, done.stdout + done.stderr
    # The coordinator draws the same progress and standings as a local run.
    assert "6/6 (100%)" in done.stdout and "belote leaderboard" in done.stdout
    assert "6 of 6 planned matches played" in done.stdout
    with store_of(url, tmp_path) as store:
        ids = recorded_once(store, "d")
        by_worker = {record.name: record for record in store.workers.all()}
    assert set(by_worker) == {"w0", "w1", "w2"}
    assert all(w.stopped_at is not None for w in by_worker.values())  # each said goodbye
    # A log is read from the store, whichever worker played it: verified, shown, exported.
    verified = bisca("replay", "verify", *ids, "--store", url)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.count(": OK, ") == len(ids)
    shown = bisca("replay", "show", ids[0], "--store", url)
    assert shown.returncode == 0 and "step" in shown.stdout, shown.stderr
    missing = bisca("replay", "show", "no-such-match", "--store", url)
    assert missing.returncode == 2 and "no record of that match" in missing.stderr
    status = bisca("tournament", "status", "d", "--store", url)
    assert status.returncode == 0, status.stderr
    assert "6 of 6 planned matches played" in status.stdout and "0 failed" in status.stdout


def test_one_and_three_workers_give_the_same_leaderboard(
    one_and_three: dict[int, tuple[str, subprocess.CompletedProcess[str]]],
) -> None:
    (one_url, one), (three_url, three) = one_and_three[1], one_and_three[3]
    assert one.returncode == 0, one.stdout + one.stderr
    assert three.returncode == 0, three.stdout + three.stderr
    assert leaderboard(one_url, "belote") == leaderboard(three_url, "belote")
    assert len(leaderboard(one_url, "belote")) == 3


def test_a_worker_killed_mid_match_loses_it_and_it_is_replayed_once(
    workers: Workers, database: str, tmp_path: Path
) -> None:
    slow = f"{sys.executable} {SLOW_BOT}"
    path = write_tournament(
        tmp_path, "k", per_pairing=2, concurrency=1, bots=(("s1", slow), ("s2", slow))
    )
    doomed = workers.start("doomed", "--no-sandbox")
    submitted = bisca("tournament", "submit", str(path), "--store", database)
    assert submitted.returncode == 0 and "2 queued now" in submitted.stdout, submitted.stderr
    store = store_of(database, tmp_path)
    try:

        def doomed_match() -> str | None:
            mine = next((w for w in store.workers.all() if w.name == "doomed"), None)
            return mine.running[0] if mine and mine.running else None

        cut = poll_until("a match running on the doomed worker", doomed_match, 90)
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait(30)
        workers.start("rescuer", "--no-sandbox")
        poll_until(
            "the tournament's end", lambda: all(s.done for s in store.tournaments.slots("k")), 180
        )
        recorded_once(store, "k")
        lost = store.matches.get(cut)
        assert lost is not None and lost.status is MatchStatus.FAILED
        assert lost.reason == CUT_OFF_BY_A_WORKER and lost.log_hash is None
        assert store.logs.get(cut) is None  # the half-written log never counts
        replayed = next(s for s in store.tournaments.slots("k") if s.planned_id == cut)
        again = store.matches.get(str(replayed.match_id))
        assert replayed.match_id == f"{cut}-r2" and replayed.attempts == 2
        assert again is not None and again.seed == lost.seed and again.bots == lost.bots
    finally:
        store.close()


def test_a_killed_coordinator_is_started_again_with_no_loss_and_no_duplicate(
    workers: Workers, database: str, tmp_path: Path
) -> None:
    slow = f"{sys.executable} {SLOW_BOT}"
    path = write_tournament(tmp_path, "c", per_pairing=3, bots=(("s1", slow), ("s2", slow)))
    workers.start("w", "--no-sandbox", "--concurrency", "2")
    argv = [*BISCA, "tournament", "run", str(path), "--store", database, "--distributed"]
    coordinator = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = store_of(database, tmp_path)
    try:
        poll_until(
            "a first match played", lambda: any(s.done for s in store.tournaments.slots("c")), 120
        )
        coordinator.send_signal(signal.SIGKILL)
        coordinator.wait(30)
        again = run_distributed(path, database)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "3 of 3 planned matches played" in again.stdout
        recorded_once(store, "c")
        assert all(slot.attempts == 1 for slot in store.tournaments.slots("c"))
    finally:
        store.close()


def test_a_worker_that_loses_the_database_says_so_and_goes_on_when_it_is_back(
    workers: Workers, database: str, postgres: PostgresServer, tmp_path: Path
) -> None:
    worker = workers.start("w", "--no-sandbox")
    postgres.stop("immediate")
    try:
        poll_until("the worker to notice the loss", lambda: "lost the store" in worker.output())
        assert "taking no matches until it answers again" in worker.output()
        assert worker.process.poll() is None
    finally:
        postgres.start()
    poll_until("the worker to come back", lambda: "answers again" in worker.output())
    path = write_tournament(tmp_path, "b", per_pairing=1, bots=GREEDY[:2])
    done = run_distributed(path, database)
    assert done.returncode == 0, done.stdout + done.stderr
    with store_of(database, tmp_path) as store:
        recorded_once(store, "b")


def test_distributed_commands_need_a_postgresql_store(tmp_path: Path) -> None:
    """Refused before any store is opened: a SQLite file was made at the path given, then
    refused (review s59b, M6)."""
    path = write_tournament(tmp_path, "s", per_pairing=1)
    sqlite = f"sqlite:{tmp_path / 'data' / 'bisca.sqlite3'}"
    for argv in (
        ["tournament", "run", str(path), "--store", sqlite, "--distributed"],
        ["tournament", "submit", str(path), "--store", sqlite],
        ["tournament", "status", "s", "--store", sqlite],
        ["worker", "--store", sqlite, "--data", str(tmp_path / "w")],
        ["workers", "--store", sqlite],
    ):
        done = bisca(*argv)
        assert done.returncode == 1, argv
        assert "needs a PostgreSQL store" in done.stderr and "Traceback" not in done.stderr
        assert not (tmp_path / "data").exists() and not (tmp_path / "w").exists(), argv
    no_store = bisca("tournament", "run", str(path), "--distributed")
    assert no_store.returncode == 2 and "--distributed needs --store" in no_store.stderr


def test_bots_and_the_server_take_the_shared_store(database: str, tmp_path: Path) -> None:
    added = bisca("bots", "add", "shared-bot", "--store", database, "--data", str(tmp_path))
    assert added.returncode == 0, added.stderr
    listed = bisca("bots", "list", "--store", database, "--data", str(tmp_path / "elsewhere"))
    assert listed.returncode == 0 and "shared-bot" in listed.stdout, listed.stderr
    refused = bisca("serve", "--store", "mysql://x", "--data", str(tmp_path / "s"))
    assert refused.returncode == 1 and "unknown store 'mysql://x'" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_file_fixed_and_submitted_again_is_the_one_its_workers_read(
    database: str, tmp_path: Path
) -> None:
    """Review s59c, F7: a tournament submitted with a bot command that could not start, its
    file fixed and submitted again, kept the first text (the commands are not the plan), and
    every job failed again with the old command; the status said to submit it again."""
    path = write_tournament(tmp_path, "fixed", per_pairing=1, bots=GREEDY[:2])
    good = path.read_text()
    path.write_text(good.replace("greedy", "/no/such/greedy", 1))
    first = bisca("tournament", "submit", str(path), "--store", database)
    assert first.returncode == 0, first.stderr
    assert "file changed" not in first.stdout
    path.write_text(good)
    again = bisca("tournament", "submit", str(path), "--store", database)
    assert again.returncode == 0, again.stderr
    assert "fixed: its file changed since it was first submitted: the new text is stored" in (
        again.stdout
    )
    with store_of(database, tmp_path) as store:
        stored = store.tournaments.get("fixed")
        assert stored is not None and stored.spec == good
