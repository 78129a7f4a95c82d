"""``bisca worker --metrics``: a real worker on a real PostgreSQL store, scraped while it
beats and after it played a distributed tournament."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

from bisca.server.logs import read_log
from bisca.server.store import open_store
from tests.support.commands import BISCA, bisca
from tests.support.postgres import PostgresServer
from tests.support.waiting import poll_until
from tests.tournament.support import tournament_text

from .scrape import scrape, total

LEASE = "3"


def test_a_worker_counts_its_beats_matches_and_decisions(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    stderr = tmp_path / "worker.stderr"
    argv = [*BISCA, "worker", "--store", url, "--data", str(tmp_path / "worker")]
    argv += ["--lease", LEASE, "--metrics", "127.0.0.1:0", "--concurrency", "2"]
    with stderr.open("w") as sink:
        worker = subprocess.Popen(argv, stdout=sink, stderr=sink, text=True)
    try:
        said = poll_until("the worker's metrics page", lambda: re.search(
            r"metrics on (\S+)", stderr.read_text()), 60)  # fmt: skip
        page = said.group(1)
        poll_until("a heartbeat", lambda: total(scrape(page), "bisca_worker_heartbeats_total") >= 1)
        beaten = total(scrape(page), "bisca_worker_last_heartbeat_timestamp_seconds")
        assert abs(beaten - time.time()) < 600  # a Unix time, not a count or a monotonic clock
        path = tmp_path / "t.toml"
        bots = (("g1", "greedy"), ("g2", "greedy"), ("g3", "greedy"))
        path.write_text(tournament_text(name="t", per_pairing=1, bots=bots))
        coordinator = ["--lease", LEASE, "--data", str(tmp_path / "coordinator")]
        done = bisca(
            "tournament", "run", str(path), "--store", url, "--distributed", *coordinator,
            timeout=240,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        with open_store(url, tmp_path) as store:
            ids = [str(slot.match_id) for slot in store.tournaments.slots("t")]
            steps = 0
            for match_id in ids:
                kept = store.logs.get(match_id)
                assert kept is not None
                copy = tmp_path / f"{match_id}.binlog"
                copy.write_bytes(kept.data)
                footer = read_log(copy).footer
                assert footer is not None
                steps += footer.steps
        samples = scrape(page)
        assert total(samples, "bisca_matches_finished_total", game="belote") == len(ids) > 0
        assert total(samples, "bisca_decisions_total", game="belote") == steps
        assert total(samples, "bisca_matches_running") == 0
        # The queue, as the worker's next beat sees it: nothing waits, nothing is played.
        beats = total(samples, "bisca_worker_heartbeats_total")

        def beat_again() -> bool:
            return total(scrape(page), "bisca_worker_heartbeats_total") > beats + 1

        poll_until("a later heartbeat", beat_again, 60)
        samples = scrape(page)
        assert total(samples, "bisca_queue_jobs", status="todo") == 0
        assert total(samples, "bisca_queue_jobs", status="doing") == 0
        assert total(samples, "bisca_queue_oldest_job_age_seconds") == 0
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
