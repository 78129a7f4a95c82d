"""Distributed tournaments whose bots think: each move takes a fixed delay and almost no
CPU (``_thinking_bot.py``), so a match lasts as long as its bots think and throughput is
bounded by how many matches are played at once and by what coordinating them costs (the
queue, the store), not by this machine's two cores.  The same tournament shape on 1, 2 and 4
``bisca worker`` processes, each playing :data:`CONCURRENCY` matches at once, on a durable
local PostgreSQL; each worker count plays :data:`WAVES` matches per slot, so every run lasts
about as long.

Figures, from the store's own times of the matches (``matches``: which worker, created,
finished), over the window from the moment every worker had started its first match to
the moment the first worker ran out of jobs, so the bots' start-up (each worker's, once per
tournament: the same on a real league's machines) and the queue's tail are not counted:

* ``matches/s``: the matches inside the window (a match half inside counts half) over its
  length;
* ``queue overhead per match``: the time a worker's slot spends between two matches: from
  a match's result (its ``finished_at``, stamped as the transaction recording the result,
  the ratings and the log begins) to the next match's creation on the same slot (its
  ``created_at``), so the result's commit, the job's completion, the next job's fetch and
  the next attempt's opening, with 1 worker; the mean and the median of these gaps.  A
  worker's matches are put back on its slots by their times (each match on the slot that
  freed last before it began).  The window's slot-time not spent in matches, per match (the
  figure before), also counted each slot's idle tail once the queue ran dry and is shown
  beside it;
* ``per statement``: pg_stat_statements' mean time and calls per match of the statements
  that cost the most in total, in the 4 workers' run: where the store or the queue would be
  the limit.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import psycopg

from bisca.server.store import open_store
from tests.support.postgres import PostgresServer, find_bin

BISCA = [sys.executable, "-m", "bisca.server.cli"]
THINKING_BOT = Path(__file__).with_name("_thinking_bot.py")
#: A move's thinking time: far above the referee's and the bot's CPU per move (about a
#: millisecond each), far below a real clock.
THINK_MS = 40
CONCURRENCY = 2
#: Matches per slot (worker x concurrency) in every run.
WAVES = 8
WORKER_COUNTS = (1, 2, 4)


@dataclass(frozen=True)
class Run:
    """A run's matches, measured over the window where every worker had started playing
    and none had run out of jobs (the bots' start-up before it, the queue's tail after)."""

    workers: int
    matches: int
    window_s: float
    #: The matches' time inside the window, summed.
    inside_s: float
    #: The matches inside the window, a match half in it counting half.
    inside_matches: float
    mean_match_s: float
    #: Each slot's gaps between a match's end and its next match's start, seconds.
    gaps_s: tuple[float, ...]
    #: The CPU time the worker processes used (refereeing included; the bots not).
    worker_cpu_s: float = 0.0

    @property
    def gap_ms(self) -> float:
        """The mean time a slot spent between two of its matches."""
        return 1000 * sum(self.gaps_s) / len(self.gaps_s)

    @property
    def median_gap_ms(self) -> float:
        ordered = sorted(self.gaps_s)
        middle = len(ordered) // 2
        return 1000 * (ordered[middle] + ordered[~middle]) / 2

    @property
    def rate(self) -> float:
        return self.inside_matches / self.window_s

    @property
    def overhead_ms(self) -> float:
        """What each slot spent not playing a match, per match played."""
        slots = self.workers * CONCURRENCY
        return 1000 * (slots * self.window_s - self.inside_s) / self.inside_matches


def measured(workers: int, played: list[tuple[str, float, float]]) -> Run:
    """``played``: each match's worker, start and end (Unix seconds)."""
    by_worker: dict[str, list[tuple[float, float]]] = {}
    for worker, start, end in played:
        by_worker.setdefault(worker, []).append((start, end))
    if len(by_worker) != workers:
        raise RuntimeError(f"{len(by_worker)} of {workers} workers played")
    opens = max(min(start for start, _ in spans) for spans in by_worker.values())
    closes = min(max(end for _, end in spans) for spans in by_worker.values())
    inside = [max(0.0, min(end, closes) - max(start, opens)) for _, start, end in played]
    spans = [end - start for _, start, end in played]
    fractions = sum(part / span for part, span in zip(inside, spans, strict=True))
    mean = sum(spans) / len(spans)
    gaps = [gap for spans in by_worker.values() for gap in slot_gaps(spans)]
    return Run(workers, len(played), closes - opens, sum(inside), fractions, mean, tuple(gaps))


def slot_gaps(spans: list[tuple[float, float]]) -> list[float]:
    """A worker's matches (start, end) put back on its slots, each on the slot that freed
    last before it began (its matches follow one another there): the gaps between them."""
    slot_ends: list[float] = []
    gaps = []
    for start, end in sorted(spans):
        free = [number for number, freed in enumerate(slot_ends) if freed <= start]
        if not free:
            slot_ends.append(end)  # a slot's first match
            continue
        number = max(free, key=lambda candidate: slot_ends[candidate])
        gaps.append(start - slot_ends[number])
        slot_ends[number] = end
    return gaps


def _tournament(folder: Path, name: str, matches: int) -> Path:
    path = folder / f"{name}.toml"
    command = f"{sys.executable} {THINKING_BOT} {THINK_MS}"
    bots = "".join(f'\n[[bots]]\nname = "{bot}"\ncommand = "{command}"\n' for bot in ("a", "b"))
    path.write_text(
        f'name = "{name}"\ngame = "belote"\nmatches_per_pairing = {matches}\n'
        f"concurrency = {CONCURRENCY}\nseed = 7\n\n[settings]\ndeals = 1\n"
        f"\n[clock]\nmove_ms = 3000\nbank_ms = 10000\njoin_timeout_s = 60\n{bots}"
    )
    return path


def _moment(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def start_worker(url: str, folder: Path, name: str, *options: str) -> subprocess.Popen[bytes]:
    """A worker on ``url`` named ``name`` (its folder and stderr in ``folder``), once ready
    (it said it takes matches)."""
    log = folder / f"{name}.stderr"
    argv = [*BISCA, "worker", "--store", url, "--concurrency", str(CONCURRENCY)]
    argv += ["--data", str(folder / name), "--name", name, *options]
    with log.open("w") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=sink)
    deadline = time.monotonic() + 60
    while "taking matches" not in log.read_text():
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"worker did not start:\n{log.read_text()}")
        time.sleep(0.05)
    return process


def start_workers(url: str, folder: Path, count: int) -> list[subprocess.Popen[bytes]]:
    return [start_worker(url, folder, f"w{number}") for number in range(count)]


def stop_workers(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        process.wait(60)


def _play(server: PostgresServer, folder: Path, workers: int) -> tuple[Run, str]:
    url = server.new_database()
    name = f"thinking-{workers}"
    path = _tournament(folder, name, WAVES * workers * CONCURRENCY)
    processes = start_workers(url, folder / name, workers)
    try:
        done = subprocess.run(
            [*BISCA, "tournament", "run", str(path), "--store", url, "--distributed",
             "--data", str(folder / name / "coordinator")],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"the tournament failed:\n{done.stdout}{done.stderr}")
        cpu_s = sum(_cpu_seconds(process.pid) for process in processes)
    finally:
        stop_workers(processes)
    with open_store(url, folder) as store:
        ids = {str(slot.match_id) for slot in store.tournaments.slots(name) if slot.done}
    with psycopg.connect(url) as db:
        rows = db.execute("SELECT id, server, created_at, finished_at FROM matches").fetchall()
    played = [(w, _moment(a), _moment(b)) for match, w, a, b in rows if match in ids and b]
    if len(played) != WAVES * workers * CONCURRENCY:
        raise RuntimeError(f"{len(played)} matches played of {WAVES * workers * CONCURRENCY}")
    return dataclasses.replace(measured(workers, played), worker_cpu_s=cpu_s), url


def _cpu_seconds(pid: int) -> float:
    """The CPU time a process (its threads, not its children: the bots) has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_TOP_STATEMENTS = """
SELECT calls, total_exec_time, mean_exec_time, regexp_replace(query, '\\s+', ' ', 'g')
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)
   AND query NOT ILIKE 'CREATE %%'  -- the schema, made once per store
 ORDER BY total_exec_time DESC LIMIT 5
"""


def _statements(server: PostgresServer, url: str, matches: int) -> list[str]:
    """The costliest statements of the database at ``url`` (the extension's view lives in
    the server's first database, where it was created)."""
    with psycopg.connect(server.url()) as db:
        rows = db.execute(_TOP_STATEMENTS, [url.rsplit("/", 1)[1]]).fetchall()
    return [
        f"distributed, thinking bots, 4 workers, statement {rank} by total time "
        f"({calls / matches:.1f} calls/match, {total / matches:.2f} ms/match): "
        f"{mean:.2f} ms mean   [{query[:90]}]"
        for rank, (calls, total, mean, query) in enumerate(rows, 1)
    ]


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    del runs, seconds  # one tournament per figure: each is many matches already
    if find_bin() is None:
        return ["scaling: skipped: no PostgreSQL in /usr/lib/postgresql (`make system`)"]
    server = PostgresServer(durable=True).start()
    try:
        with psycopg.connect(server.url(), autocommit=True) as db:
            db.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
        server.stop()
        server.start()
        with tempfile.TemporaryDirectory(prefix="bisca-bench-") as directory:
            folder = Path(directory)
            played: dict[int, Run] = {}
            for workers in WORKER_COUNTS:
                (folder / f"thinking-{workers}").mkdir()
                if workers == max(WORKER_COUNTS):
                    with psycopg.connect(server.url(), autocommit=True) as db:
                        db.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                        db.execute("SELECT pg_stat_statements_reset()")
                played[workers], url = _play(server, folder, workers)
            statements = _statements(server, url, played[max(WORKER_COUNTS)].matches)
    finally:
        server.remove()
    one = played[1]
    lines = [
        f"distributed, thinking bots ({THINK_MS} ms a move): matches/s with {w} "
        f"worker{'s' if w > 1 else ''}: {played[w].rate:.2f} matches/s"
        for w in WORKER_COUNTS
    ]
    lines += [
        f"distributed, thinking bots: ratio 4 workers vs 1: {played[4].rate / one.rate:.2f}",
        f"distributed, thinking bots: ratio 2 workers vs 1: {played[2].rate / one.rate:.2f}",
        f"distributed, thinking bots: queue overhead per match: {one.gap_ms:.1f} ms",
        f"distributed, thinking bots: queue overhead per match, median: {one.median_gap_ms:.1f} ms",
        f"distributed, thinking bots: queue overhead per match, 4 workers: "
        f"{played[4].gap_ms:.1f} ms",
        f"distributed, thinking bots: idle slot-time per match in the window (tails "
        f"included): {one.overhead_ms:.1f} ms",
        f"distributed, thinking bots: mean match, 1 worker: {1000 * one.mean_match_s:.0f} ms",
        f"distributed, thinking bots: worker CPU per match (refereeing included), 1 worker: "
        f"{1000 * one.worker_cpu_s / one.matches:.1f} ms",
    ]
    return lines + statements
