"""``make soak``: a bounded run of a league on PostgreSQL with 2 workers under faults, then
the checks a long run must pass (``soak_checks.py``).  Not part of ``make test`` or ``make
bench``: it lasts ``SOAK_MINUTES`` (10 by default).

The league is a tournament after another (a round each, ~a minute), until the time is up,
on one store, with honest bots (the sample greedy and random ones, a thinking bot) beside
bots that crash mid-match, hang, answer late and flood the server with answers to requests
that do not exist (``_thinking_bot.py``).  At 30 % of the run one worker is killed with
``kill -9`` (only processes this run started) and another started in its place; at 60 % the
database is stopped as abruptly as a crash (``pg_ctl -m immediate``) and started again.  A
coordinator that fails meanwhile is run again (it resumes: nothing is queued twice).

At the end: every planned match recorded exactly once, every complete log verifies, the
ratings equal a replay of the recorded results, and the RSS of the worker that lived
throughout grew by at most 10 % over the run's last half (its peak in the last tenth against
its peak between 40 % and 50 %: a worker's memory rises and falls with each round's bots and
matches).  Its figures are bench lines.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bisca.server.store import open_store
from tests.support.postgres import PostgresServer

from .scaling import BISCA, THINKING_BOT, start_worker, stop_workers
from .soak_checks import check_store

LEASE = "3"
#: Honest bots, then the faulty ones.
BOTS = (
    ("greedy", "greedy"),
    ("random", "random"),
    ("thinker", f"{sys.executable} {THINKING_BOT} 20"),
    *((fault, f"{sys.executable} {THINKING_BOT} 20 {fault}") for fault in
      ("crash", "hang", "late", "flood")),
)  # fmt: skip
MAX_RSS_GROWTH = 0.10


def _round(folder: Path, number: int) -> Path:
    path = folder / f"round-{number}.toml"
    bots = "".join(f'\n[[bots]]\nname = "{b}"\ncommand = "{c}"\n' for b, c in BOTS)
    path.write_text(
        f'name = "round-{number}"\ngame = "belote"\nmatches_per_pairing = 1\n'
        f"concurrency = 2\nseed = {number}\n\n[settings]\ndeals = 1\n"
        f"\n[clock]\nmove_ms = 200\nbank_ms = 1000\njoin_timeout_s = 60\n{bots}"
    )
    return path


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Soak:
    def __init__(self, minutes: float, folder: Path) -> None:
        self.seconds = minutes * 60
        self.folder = folder
        self.server = PostgresServer(durable=True).start()
        self.url = self.server.new_database()
        self.start = time.monotonic()
        self.rss: list[tuple[float, int]] = []
        self.killed = self.restarted = self.coordinator_reruns = 0
        self.steady = start_worker(self.url, folder, "steady", "--lease", LEASE)
        self.other = start_worker(self.url, folder, "victim", "--lease", LEASE)
        self.replacements: list[subprocess.Popen[bytes]] = []

    def progress(self) -> float:
        return (time.monotonic() - self.start) / self.seconds

    def tend(self) -> None:
        """Sample the steady worker's RSS and inflict the faults when their time comes."""
        self.rss.append((self.progress(), _rss_kib(self.steady.pid)))
        if not self.killed and self.progress() >= 0.3:
            os.kill(self.other.pid, signal.SIGKILL)
            self.other.wait()
            self.killed = 1
            name = f"replacement-{len(self.replacements)}"
            self.replacements.append(start_worker(self.url, self.folder, name, "--lease", LEASE))
        if not self.restarted and self.progress() >= 0.6:
            self.server.stop("immediate")
            time.sleep(2)
            self.server.start()
            self.restarted = 1

    def play_round(self, number: int) -> str:
        path = _round(self.folder, number)
        for _ in range(10):
            argv = [*BISCA, "tournament", "run", str(path), "--store", self.url, "--distributed"]
            argv += ["--lease", LEASE, "--data", str(self.folder / "coord")]
            with (self.folder / f"round-{number}.out").open("a") as sink:
                coordinator = subprocess.Popen(argv, stdout=sink, stderr=sink)
            while coordinator.poll() is None:
                self.tend()
                time.sleep(1)
            if coordinator.returncode == 0:
                return path.stem
            self.coordinator_reruns += 1
            time.sleep(2)
        raise RuntimeError(f"round {number} never completed: {self.folder}/round-{number}.out")

    def run(self) -> list[str]:
        rounds = []
        try:
            while self.progress() < 1:
                rounds.append(self.play_round(len(rounds) + 1))
        finally:
            stop_workers([self.steady, *self.replacements])
            if self.other.poll() is None:
                self.other.kill()
                self.other.wait()
        elapsed = time.monotonic() - self.start
        with open_store(self.url, self.folder) as store:
            found = check_store(store, rounds)
        self.server.remove()
        # The peak between 40 % and 50 %, or the last sample before half time (a fault's
        # handling may have taken the window's seconds in a short run).
        before_half = [(at, kib) for at, kib in self.rss if at < 0.5]
        middle = max((kib for at, kib in before_half if at >= 0.4), default=0)
        middle = middle or (before_half[-1][1] if before_half else 0)
        end = max((kib for at, kib in self.rss if at >= 0.9), default=0)
        growth = end / middle - 1 if middle else float("nan")
        lines = [
            f"soak: minutes: {elapsed / 60:.1f} min",
            f"soak: rounds (tournaments) played: {len(rounds)}",
            f"soak: planned matches: {found.planned}",
            f"soak: planned matches recorded exactly once: {found.recorded}",
            f"soak: attempts cut off or failed, replayed: {found.attempts_failed}",
            f"soak: complete logs verified: {found.logs_verified}",
            f"soak: rated matches replayed: {found.ratings_replayed}",
            f"soak: seat timeouts in finished matches: {found.seat_timeouts}",
            f"soak: seats forfeited in finished matches: {found.seats_forfeited}",
            f"soak: workers killed with kill -9: {self.killed}",
            f"soak: database restarts: {self.restarted}",
            f"soak: coordinator runs again after a failure: {self.coordinator_reruns}",
            f"soak: steady worker RSS at 40-50 %: {middle / 1024:.1f} MB",
            f"soak: steady worker RSS at 90-100 %: {end / 1024:.1f} MB",
            f"soak: steady worker RSS growth over the last half: {100 * growth:.1f} %",
        ]
        lines += [f"soak: problem: {problem}" for problem in found.problems[:20]]
        ok = found.ok and found.planned == found.recorded and growth <= MAX_RSS_GROWTH
        lines.append(f"soak: {'passed' if ok else 'FAILED'}")
        return lines


def main() -> int:
    minutes = float(os.environ.get("SOAK_MINUTES", "10"))
    with tempfile.TemporaryDirectory(prefix="bisca-soak-") as directory:
        lines = Soak(minutes, Path(directory)).run()
    for line in lines:
        print(line, flush=True)
    return 0 if lines[-1] == "soak: passed" else 1


if __name__ == "__main__":
    sys.exit(main())
