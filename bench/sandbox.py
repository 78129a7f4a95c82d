"""What the sandbox costs: one local Belote match of four sample bots, sandboxed and not.

Both are real ``run_local_match`` runs (bots as processes, the in-process server), alternated
so that load on the machine weighs on both alike; the figure is the median wall time per match
from start to recorded result, the bots' start-up (which the sandbox adds to) included.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bisca.engine import GAMES
from bisca.server.referee import clock_settings
from bisca.server.sandbox import SandboxPolicy
from bisca.server.tournament import run_local_match


def _match_seconds(data: Path, seed: int, sandboxed: bool) -> float:
    start = time.perf_counter()
    result = asyncio.run(
        run_local_match(
            game="belote",
            settings=GAMES["belote"].settings({"deals": 2}),
            bot_commands=["random"] * 4,
            data_dir=data / ("sandboxed" if sandboxed else "plain") / str(seed),
            seed=seed,
            clock=clock_settings(5000, 5000, "default"),
            sandbox=SandboxPolicy(enabled=sandboxed),
        )
    )
    elapsed = time.perf_counter() - start
    assert result.runner.status == "finished", result.runner.reason
    return elapsed


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    sandboxed: list[float] = []
    plain: list[float] = []
    with tempfile.TemporaryDirectory() as directory:
        for seed in range(max(3, runs)):
            sandboxed.append(_match_seconds(Path(directory), seed, True))
            plain.append(_match_seconds(Path(directory), seed, False))
    with_sandbox, without = statistics.median(sandboxed), statistics.median(plain)
    return [
        f"local belote match, 2 deals, 4 sample bots, sandboxed: {with_sandbox:.2f} s",
        f"local belote match, 2 deals, 4 sample bots, no sandbox: {without:.2f} s",
        f"ratio sandboxed vs no sandbox: {with_sandbox / without:.2f} x",
    ]
