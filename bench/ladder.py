"""A league for strangers: seconds from an upload to an active version (the gate: unpack,
build in the sandbox, check-bot, one validation match), for ``bisca new-bot python``'s
starter, in process; and how fast the ladder draws its pairings among 8 active versions.

The upload-to-first-rated-match figure of the issue needs the ladder on the workers, which
is not built yet: upload to active is the gate's share of it.
"""

from __future__ import annotations

import contextlib
import io
import random
import tempfile
import time
from pathlib import Path

from bisca.server.accounts import SubmissionLimits, pack_folder, take_submission
from bisca.server.cli import main as bisca
from bisca.server.hosting import Gate
from bisca.server.league import LadderEntrant, LadderSettings, next_pairing
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store, VersionState


def _upload_to_active(folder: Path) -> float:
    with contextlib.redirect_stdout(io.StringIO()):
        assert bisca(["new-bot", "python", str(folder / "benchbot")]) == 0
    with Store(folder / "data" / "bisca.sqlite3") as store:
        store.accounts.create("bench", "a long enough password")
        limits = SubmissionLimits()
        uploads = folder / "data" / "submissions"
        gate = Gate(store, uploads, limits, SandboxPolicy(), folder / "data" / "gate")
        start = time.perf_counter()
        archive = io.BytesIO(pack_folder(folder / "benchbot"))
        version = take_submission(store, limits, uploads, "bench", archive)
        done = gate.run(version)
        elapsed = time.perf_counter() - start
        assert done.state is VersionState.ACTIVE, store.versions.steps(done.bot, done.version)
    return elapsed


def _pairings_per_second(seconds: float) -> float:
    rng = random.Random(0)
    entrants = [LadderEntrant(f"bot{i}.v1", f"bot{i}", 15.0 + 2 * i, 2.0, 50, 0) for i in range(8)]
    settings = LadderSettings(matches_per_hour=10**9)
    drawn = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        next_pairing(entrants, 2, settings, rng)
        drawn += 1
    return drawn / (time.perf_counter() - start)


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    # One upload: the gate takes seconds of two cores, and its parts are each measured already
    # (the sandbox lines, check-bot's own run).
    with tempfile.TemporaryDirectory() as directory:
        gate_s = _upload_to_active(Path(directory))
    drawn = _pairings_per_second(seconds)
    return [
        f"ladder: seconds from upload to active (build, check-bot, validation): {gate_s:.1f} s",
        f"ladder: pairings drawn per second, 8 active versions: {drawn:.0f} /s",
    ]
