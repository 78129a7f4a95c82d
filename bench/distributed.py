"""Distributed tournaments: matches per second with 1 and 2 ``bisca worker`` processes on a
PostgreSQL store, against the same tournament played by one ``bisca tournament run`` on its
SQLite file, in the same run; and what the queue adds to each match.

Every run is the real command line: a throwaway PostgreSQL server from Debian's packages
(``make bench`` installs them through ``make system``), workers started first and ready, the
coordinator timed from its start to its summary (so the bots' start-up counts, as it does for
the local run).  Each worker plays 2 matches at once, as the local run does.  The log sizes
are those the store keeps, per match.  The PostgreSQL server is durable (``fsync`` on, as
SQLite's file is), and on the same machine as the workers: a network between them adds its
round trips to each match's few transactions.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bisca.server.store import open_store
from tests.support.postgres import PostgresServer, find_bin

BISCA = [sys.executable, "-m", "bisca.server.cli"]
MATCHES_PER_PAIRING = 8
CONCURRENCY = 2


def _tournament(folder: Path, name: str) -> Path:
    path = folder / f"{name}.toml"
    bots = "".join(
        f'\n[[bots]]\nname = "{bot}"\ncommand = "greedy"\n' for bot in ("g1", "g2", "g3")
    )
    path.write_text(
        f'name = "{name}"\ngame = "belote"\nmatches_per_pairing = {MATCHES_PER_PAIRING}\n'
        f"concurrency = {CONCURRENCY}\nseed = 7\n\n[settings]\ndeals = 1\n"
        f"\n[clock]\nmove_ms = 3000\nbank_ms = 10000\njoin_timeout_s = 60\n{bots}"
    )
    return path


def _timed(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
    return elapsed


def _distributed(server: PostgresServer, folder: Path, workers: int) -> tuple[float, int, float]:
    """Seconds, matches and mean log bytes of the tournament on ``workers`` workers."""
    url = server.new_database()
    path = _tournament(folder, f"w{workers}")
    processes = []
    try:
        for number in range(workers):
            log = folder / f"w{workers}-{number}.stderr"
            argv = [*BISCA, "worker", "--store", url, "--concurrency", str(CONCURRENCY)]
            argv += ["--data", str(folder / f"w{workers}-{number}")]
            with log.open("w") as sink:
                processes.append(subprocess.Popen(argv, stdout=sink, stderr=sink))
            deadline = time.monotonic() + 60
            while "taking matches" not in log.read_text():
                if time.monotonic() > deadline or processes[-1].poll() is not None:
                    raise RuntimeError(f"worker did not start:\n{log.read_text()}")
                time.sleep(0.05)
        seconds = _timed([*BISCA, "tournament", "run", str(path), "--store", url,
                          "--distributed", "--data", str(folder / "coordinator")])  # fmt: skip
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(60)
    with open_store(url, folder) as store:
        ids = [str(slot.match_id) for slot in store.tournaments.slots(path.stem)]
        sizes = [len(kept.data) for i in ids if (kept := store.logs.get(i)) is not None]
    return seconds, len(ids), sum(sizes) / max(len(sizes), 1)


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    del runs, seconds  # one tournament per figure: each is many matches already
    if find_bin() is None:
        return ["distributed: skipped: no PostgreSQL in /usr/lib/postgresql (`make system`)"]
    server = PostgresServer(durable=True).start()
    try:
        with tempfile.TemporaryDirectory(prefix="bisca-bench-") as directory:
            folder = Path(directory)
            local_path = _tournament(folder, "local")
            local = _timed([*BISCA, "tournament", "run", str(local_path),
                            "--data", str(folder / "local")])  # fmt: skip
            one, matches, log_bytes = _distributed(server, folder, 1)
            two, _, _ = _distributed(server, folder, 2)
    finally:
        server.remove()
    return [
        f"tournament on SQLite, 1 process ({CONCURRENCY} at once): {matches / local:.2f} matches/s",
        f"distributed, 1 worker ({CONCURRENCY} at once): {matches / one:.2f} matches/s",
        f"distributed, 2 workers ({CONCURRENCY} at once each): {matches / two:.2f} matches/s",
        f"queue overhead per match (1 worker vs SQLite): {1000 * (one - local) / matches:.0f} ms",
        f"match log kept in PostgreSQL, belote 1 deal: {log_bytes / 1024:.1f} KiB",
    ]
