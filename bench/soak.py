"""``make soak``: a bounded run of a league's continuous ladder on PostgreSQL with 2 workers
under faults, then the checks a long run must pass (``soak_checks.py``).  Not part of ``make
test`` or ``make bench``: it lasts ``SOAK_MINUTES`` (10 by default), then waits for the
pairings already queued (a few minutes at most).

The league is the ladder (``server/bisca/server/hosting/_ladder.py``): ``bisca serve --store
URL --league belote:deals=1 --ladder ...`` draws pairings of the active versions of the
league's accounts at a brisk pace (no version is held back by ``matches_per_hour``) and
queues each as a job; two ``bisca worker``\\ s play them, launching each hosted version in the
sandbox from the serving machine's files, rated, in the shared store.

Its accounts and their active hosted versions are put straight in the store, as an operator
would (``tests/support/league.py``: submitted, then moved to active), not through the gate:
the gate's validation match would refuse the faulty ones.  The honest versions are the SDK's
sample greedy and random bots and the thinking bot (``_thinking_bot.py``); the faulty ones
are the thinking bot in its ``crash``, ``hang``, ``late`` and ``flood`` modes, each a folder
with a ``bisca-bot.toml`` manifest and a copy of ``_thinking_bot.py``, told the clock of the
ladder's matches (the arena's default: a launched version lives for one match, so its fault
comes within the match: a crash mid-match, a hang or an answer past the move and the whole
bank in one match of four, a flood of answers to requests that do not exist).

At 30 % of the run one worker is killed with ``kill -9`` (only processes this run started)
and another started in its place, with a folder of its own (another machine taking over); at
60 % the database is stopped as abruptly as a crash (``pg_ctl -m immediate``) and started
again.  ``bisca serve`` is watched throughout: if it dies it is started again (counted).
``SOAK_FAULTS`` chooses among these two (``kill,database``, the default; empty for none), to
look at one alone; ``SOAK_KEEP=FOLDER`` keeps the run's files (the workers' and the server's
output, the versions' stderr beside their matches) in a folder made there.

At the end ``bisca serve`` is stopped (nothing more is queued), the jobs already queued are
played out (for :data:`DRAIN_S` at most), the workers are stopped, and the store must show:
every queued pairing played to one finished match per rotation (none recorded twice, none
never played), no attempt left open (a cut one replayed or recorded failed with its reason),
no job lost; every
complete log verifies; the ratings equal a replay of the recorded results in their order;
the faulty versions' crashes and timeouts happened (the flooding one's refused answers, from
its stderr beside its matches); and the RSS of the worker that lived throughout, and of
``bisca serve`` if it did, grew by at most 10 % over the run's last half (the peak in the
last tenth against the peak between 40 % and 50 %).  Its figures are bench lines.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from bisca.server.accounts import SubmissionLimits, pack_folder, take_submission
from bisca.server.referee import ClockSettings
from bisca.server.store import Store, VersionState, open_store, stamp
from bisca.server.tournament.distributed import LADDER_TASK
from tests.support.postgres import PostgresServer

from .scaling import BISCA, THINKING_BOT, start_worker, stop_workers
from .soak_checks import LadderCheck, check_ladder, queued_pairings

LEASE = "3"
GAME = "belote"
LEAGUE = f"{GAME}:deals=1"
#: A brisk pace: no version waits for its hour's matches; the workers set the pace.
LADDER = ("matches_per_hour=100000", "poll_s=0.5")
THINK_MS = 20
#: The clock the ladder's matches are played on (a worker's arena's default).
CLOCK = ClockSettings()
FAULTS = ("crash", "hang", "late", "flood")
#: The faults the run inflicts: a worker killed, the database stopped (``SOAK_FAULTS``: a
#: comma-separated choice of them, to look at one alone; the faulty versions play anyway).
FAULTS_INFLICTED = frozenset({"kill", "database"})
#: The longest the pairings queued when the time is up may take to be played out.
DRAIN_S = 420.0
MAX_RSS_GROWTH = 0.10
PASSWORD = "a long enough password"


@dataclass(frozen=True)
class Entrant:
    """A version of the league: its bot's name (its account's is ``NAME-owner``), the
    command of its manifest, and the files its folder holds beside the manifest."""

    name: str
    command: str
    files: dict[str, str]


def _sample(bot: str) -> Entrant:
    script = (
        f'"""The SDK\'s sample {bot} bot, hosted (the arena\'s Python has the SDK)."""\n'
        "import sys\n\nfrom bisca.client.cli import main\n\n"
        f'sys.exit(main(["bot", "{bot}", "--game", "{GAME}"]))\n'
    )
    return Entrant(bot, "python bot.py", {"bot.py": script})


def entrants() -> list[Entrant]:
    thinking = {"_thinking_bot.py": THINKING_BOT.read_text()}
    clock = f"{CLOCK.move_ms} {CLOCK.bank_ms}"
    return [
        _sample("greedy"),
        _sample("random"),
        Entrant("thinker", f"python _thinking_bot.py {THINK_MS}", thinking),
        *(
            Entrant(fault, f"python _thinking_bot.py {THINK_MS} {fault} {clock}", thinking)
            for fault in FAULTS
        ),
    ]


def register(store: Store, uploads: Path, folder: Path) -> list[str]:
    """Every entrant's account and its first version, active; their player names."""
    players = []
    for entrant in entrants():
        source = folder / entrant.name
        source.mkdir(parents=True)
        (source / "bisca-bot.toml").write_text(
            f'name = "{entrant.name}"\ngames = ["{GAME}"]\nlanguage = "python"\n'
            f'command = "{entrant.command}"\n'
        )
        for name, text in entrant.files.items():
            (source / name).write_text(text)
        account = f"{entrant.name}-owner"
        store.accounts.create(account, PASSWORD)
        archive = io.BytesIO(pack_folder(source))
        version = take_submission(store, SubmissionLimits(), uploads, account, archive)
        for state in (VersionState.CHECKING, VersionState.VALIDATING, VersionState.ACTIVE):
            version = store.versions.move(version.bot, version.version, state)
        players.append(version.player)
    return players


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def by_tenth(samples: list[tuple[float, int]]) -> str:
    """The peak RSS of each tenth of the run, MB: whether it levels off or keeps rising."""
    peaks = [0] * 10
    for at, kib in samples:
        tenth = min(9, max(0, int(at * 10)))
        peaks[tenth] = max(peaks[tenth], kib)
    return " ".join(f"{kib / 1024:.0f}" for kib in peaks)


def rss_growth(samples: list[tuple[float, int]]) -> tuple[int, int, float]:
    """The peak between 40 % and 50 % (or the last sample before half time: a fault's
    handling may have taken the window's seconds in a short run), the peak in the last
    tenth, and the growth from the one to the other."""
    before_half = [(at, kib) for at, kib in samples if at < 0.5]
    middle = max((kib for at, kib in before_half if at >= 0.4), default=0)
    middle = middle or (before_half[-1][1] if before_half else 0)
    end = max((kib for at, kib in samples if at >= 0.9), default=0)
    return middle, end, (end / middle - 1 if middle else float("nan"))


class Soak:
    def __init__(
        self, minutes: float, folder: Path, inflict: frozenset[str] = FAULTS_INFLICTED
    ) -> None:
        self.seconds = minutes * 60
        self.inflict = inflict
        self.folder = folder
        self.data = folder / "league"
        self.database = PostgresServer(durable=True).start()
        self.url = self.database.new_database()
        with open_store(self.url, self.data) as store:
            self.players = register(store, self.data / "submissions", folder / "bots")
        self.start = time.monotonic()
        self.worker_rss: list[tuple[float, int]] = []
        self.serve_rss: list[tuple[float, int]] = []
        self.killed = self.restarted = self.serve_restarts = 0
        #: When each fault came (the store's timestamps, to read the problems by).
        self.faults: list[str] = []
        self.serve = self._serve()
        #: ``bisca serve``'s RSS is checked only if one process served from 40 % to the end.
        self.serve_since = 0.0
        self.steady = start_worker(self.url, folder, "steady", "--lease", LEASE)
        self.victim = start_worker(self.url, folder, "victim", "--lease", LEASE)
        self.replacements: list[subprocess.Popen[bytes]] = []

    def _serve(self) -> subprocess.Popen[bytes]:
        """``bisca serve`` with the ladder, once it serves (it said so)."""
        out = self.folder / "serve.out"
        start = out.stat().st_size if out.exists() else 0
        argv = [*BISCA, "serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"]
        argv += ["--data", str(self.data), "--store", self.url, "--registration", "open"]
        argv += ["--league", LEAGUE, *(word for s in LADDER for word in ("--ladder", s))]
        with out.open("a") as sink:
            process = subprocess.Popen(argv, stdout=sink, stderr=sink)
        deadline = time.monotonic() + 60
        while "bisca serving on" not in out.read_text()[start:]:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                process.wait()
                raise ServeFailed(out.read_text()[start:][-3000:])
            time.sleep(0.1)
        return process

    def progress(self) -> float:
        return (time.monotonic() - self.start) / self.seconds

    def watch_serve(self) -> None:
        """Start ``bisca serve`` again if it died (the database may be down: try again)."""
        if self.serve.poll() is None:
            return
        died = f"bisca serve died (status {self.serve.returncode}) at {stamp(datetime.now(UTC))}"
        self.faults.append(died)
        while True:
            try:
                self.serve = self._serve()
            except ServeFailed:
                time.sleep(2)
                continue
            self.serve_restarts += 1
            self.serve_since = self.progress()
            return

    def tend(self) -> None:
        """Sample the RSS, keep ``bisca serve`` up, inflict the faults when their time comes."""
        self.watch_serve()
        self.worker_rss.append((self.progress(), _rss_kib(self.steady.pid)))
        self.serve_rss.append((self.progress(), _rss_kib(self.serve.pid)))
        if "kill" in self.inflict and not self.killed and self.progress() >= 0.3:
            os.kill(self.victim.pid, signal.SIGKILL)
            self.victim.wait()
            self.killed = 1
            self.faults.append(f"worker killed with kill -9 at {stamp(datetime.now(UTC))}")
            name = f"replacement-{len(self.replacements)}"
            self.replacements.append(start_worker(self.url, self.folder, name, "--lease", LEASE))
        if "database" in self.inflict and not self.restarted and self.progress() >= 0.6:
            stopped = stamp(datetime.now(UTC))
            self.database.stop("immediate")
            time.sleep(2)
            self.database.start()
            self.restarted = 1
            self.faults.append(
                f"database stopped at {stopped}, started at {stamp(datetime.now(UTC))}"
            )

    def drain(self) -> float:
        """Stop ``bisca serve`` (nothing more is queued) and wait until no pairing waits in
        the queue or is being played by a live worker; the seconds it took."""
        began = time.monotonic()
        self.serve.send_signal(signal.SIGTERM)
        try:
            self.serve.wait(60)
        except subprocess.TimeoutExpired:
            self.serve.kill()
            self.serve.wait()
        while time.monotonic() - began < DRAIN_S:
            try:
                with psycopg.connect(self.url) as db:
                    (pending,) = db.execute(  # type: ignore[misc]
                        "SELECT count(*) FROM procrastinate_jobs WHERE task_name = %s AND"
                        " (status = 'todo' OR (status = 'doing' AND worker_id IS NOT NULL))",
                        [LADDER_TASK],
                    ).fetchone()
            except psycopg.Error:
                pending = 1
            if not pending:
                break
            time.sleep(1)
        return time.monotonic() - began

    def stop_workers(self) -> None:
        stop_workers([self.steady, *self.replacements])
        if self.victim.poll() is None:
            self.victim.kill()
            self.victim.wait()

    def run(self) -> list[str]:
        try:
            while self.progress() < 1:
                self.tend()
                time.sleep(1)
            drained_s = self.drain()
        finally:
            if self.serve.poll() is None:
                self.serve.kill()
                self.serve.wait()
            self.stop_workers()
        elapsed = time.monotonic() - self.start
        with open_store(self.url, self.folder / "reader") as store:
            found = check_ladder(store, queued_pairings(self.url))
        self.database.remove()
        flood = flood_evidence(self.folder)
        return self.lines(found, flood, elapsed, drained_s)

    def lines(
        self, found: LadderCheck, flood: tuple[int, int, int], elapsed: float, drained_s: float
    ) -> list[str]:
        worker_middle, worker_end, worker_growth = rss_growth(self.worker_rss)
        serve_checked = self.serve_since < 0.4
        serve_middle, serve_end, serve_growth = rss_growth(
            [(at, kib) for at, kib in self.serve_rss if at >= self.serve_since]
        )
        statuses = ", ".join(f"{n} {status}" for status, n in sorted(found.jobs.items()))
        lines = [
            f"soak: minutes: {elapsed / 60:.1f} min (the queue played out in {drained_s:.0f} s)",
            f"soak: versions on the ladder: {len(self.players)}",
            f"soak: pairings queued: {sum(found.jobs.values())} ({statuses})",
            f"soak: pairings queued again after a cut: {found.queued_again}",
            f"soak: rotations queued: {found.rotations}",
            f"soak: rotations recorded exactly once: {found.recorded}",
            f"soak: rotations failed, with their reason: {found.rotations_failed}",
            f"soak: rotations never played (their job ended or was lost first): {found.dropped}",
            f"soak: attempts cut off or failed, with their reason: {found.attempts_failed}",
            *(
                f"soak: attempts failed because: {reason} ({n})"
                for reason, n in found.failure_reasons.most_common(5)
            ),
            f"soak: matches played (finished, rated): {found.finished}",
            f"soak: complete logs verified: {found.logs_verified}",
            f"soak: rated matches replayed: {found.ratings_replayed}",
        ]
        for player in self.players:
            seen = found.incidents.get(player)
            if seen is None:
                lines.append(f"soak: {player}: no finished match")
                continue
            lines.append(
                f"soak: {player}: {seen.matches} matches, {seen.crashes} crashes, "
                f"{seen.timeouts} timeouts, {seen.illegal_moves} rejected, "
                f"{seen.defaults_played} defaults"
            )
        lines += [
            f"soak: flood: {flood[1]} answers to requests that do not exist in {flood[0]} "
            f"matches, {flood[2]} errors answered",
            f"soak: faults inflicted: {', '.join(sorted(self.inflict)) or 'none'}",
            f"soak: workers killed with kill -9: {self.killed}",
            f"soak: database restarts: {self.restarted}",
            f"soak: bisca serve started again after it died: {self.serve_restarts}",
            *(f"soak: {fault}" for fault in self.faults),
            f"soak: steady worker RSS at 40-50 %: {worker_middle / 1024:.1f} MB",
            f"soak: steady worker RSS at 90-100 %: {worker_end / 1024:.1f} MB",
            f"soak: steady worker RSS growth over the last half: {100 * worker_growth:.1f} %",
            f"soak: steady worker RSS by tenth of the run: {by_tenth(self.worker_rss)} MB",
        ]
        if serve_checked:
            lines += [
                f"soak: bisca serve RSS at 40-50 %: {serve_middle / 1024:.1f} MB",
                f"soak: bisca serve RSS at 90-100 %: {serve_end / 1024:.1f} MB",
                f"soak: bisca serve RSS growth over the last half: {100 * serve_growth:.1f} %",
            ]
        problems = list(found.problems)
        for fault, what in (("crash", "crashes"), ("hang", "timeouts"), ("late", "timeouts")):
            player = next((p for p in self.players if p.startswith(f"{fault}.")), fault)
            seen = found.incidents.get(player)
            if seen is None or getattr(seen, what) == 0:
                problems.append(f"{player}: no {what} recorded: its fault never happened")
        if flood[1] == 0 or flood[2] == 0:
            problems.append("flood: no answers to requests that do not exist were refused")
        if not worker_growth <= MAX_RSS_GROWTH:
            problems.append(f"the steady worker's RSS grew {100 * worker_growth:.1f} %")
        if serve_checked and not serve_growth <= MAX_RSS_GROWTH:
            problems.append(f"bisca serve's RSS grew {100 * serve_growth:.1f} %")
        if found.recorded == 0:
            problems.append("no rotation was recorded")
        lines += [f"soak: problem: {problem}" for problem in problems[:20]]
        if len(problems) > 20:
            lines.append(f"soak: problem: ... and {len(problems) - 20} more")
        lines.append(f"soak: {'FAILED' if problems else 'passed'}")
        return lines


class ServeFailed(RuntimeError):
    """``bisca serve`` did not start (its output says why)."""


FLOOD_LINE = re.compile(r"flood: (\d+) answers to requests that do not exist sent, (\d+) errors")


def flood_evidence(folder: Path) -> tuple[int, int, int]:
    """What the flooding version's processes said on stderr, beside their matches in the
    workers' folders: matches, bogus answers sent, errors the server answered."""
    matches = sent = errors = 0
    for log in folder.glob("*/matches/*/seat*.stderr.log"):
        found = FLOOD_LINE.search(log.read_text(errors="replace"))
        if found:
            matches += 1
            sent += int(found.group(1))
            errors += int(found.group(2))
    return matches, sent, errors


def main() -> int:
    minutes = float(os.environ.get("SOAK_MINUTES", "10"))
    chosen = os.environ.get("SOAK_FAULTS")
    inflict = FAULTS_INFLICTED
    if chosen is not None:
        inflict = frozenset(fault for fault in chosen.split(",") if fault)
        if not inflict <= FAULTS_INFLICTED:
            print(f"SOAK_FAULTS: {chosen!r}: choose among {', '.join(sorted(FAULTS_INFLICTED))}")
            return 2
    keep = os.environ.get("SOAK_KEEP")  # a folder to keep the run's files in, to look at
    directory = tempfile.mkdtemp(prefix="bisca-soak-", dir=keep)
    try:
        lines = Soak(minutes, Path(directory), inflict).run()
    finally:
        if not keep:
            shutil.rmtree(directory, ignore_errors=True)
    for line in lines:
        print(line, flush=True)
    return 0 if lines[-1] == "soak: passed" else 1


if __name__ == "__main__":
    sys.exit(main())
