"""What the sandbox costs: one local Belote match of four sample bots, sandboxed and not; and
what a door's guard (``edge/_guard.py``) costs the arena.

The first figures are real ``run_local_match`` runs (bots as processes, the in-process server),
alternated so that load on the machine weighs on both alike; the figure is the median wall
time per match from start to recorded result, the bots' start-up (which the sandbox adds to)
included.  The guard's are the arena's own CPU (this process: server, referee, doors; not the
bots) per decision of a sandboxed match of 20 deals, with each door's guard relaying its bot's
connections and without it (the door's gRPC server on the bot's socket, as before the guard),
alternated.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bisca.engine import GAMES
from bisca.server.edge import BotDoor, BotDoors
from bisca.server.referee import clock_settings
from bisca.server.sandbox import SandboxPolicy
from bisca.server.tournament import run_local_match


def _match(data: Path, seed: int, sandboxed: bool, deals: int) -> tuple[float, float, int]:
    """Wall seconds, the arena's CPU seconds and the decisions of one match."""
    start, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    result = asyncio.run(
        run_local_match(
            game="belote",
            settings=GAMES["belote"].settings({"deals": deals}),
            bot_commands=["random"] * 4,
            data_dir=data / f"{sandboxed}-{deals}-{seed}-{time.monotonic_ns()}",
            seed=seed,
            clock=clock_settings(5000, 5000, "default"),
            sandbox=SandboxPolicy(enabled=sandboxed),
        )
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert result.runner.status == "finished", result.runner.reason
    cpu = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
    return elapsed, cpu, result.runner.steps


_open_guarded = BotDoors.open


def _open_unguarded(doors: BotDoors) -> BotDoor:
    """A door as it was before its guard: the bot's socket is its gRPC server's (a link to
    it, the guard closed before it accepts anything)."""
    door = _open_guarded(doors)
    door.guard.close()
    door.path.unlink()
    door.path.symlink_to(door.server_path)
    door.server_path.chmod(0o666)  # (the bot's uid is another)
    return door


@contextlib.contextmanager
def _doors_unguarded(unguarded: bool) -> Iterator[None]:
    if unguarded:
        BotDoors.open = _open_unguarded  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        BotDoors.open = _open_guarded  # type: ignore[method-assign]


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    sandboxed: list[float] = []
    plain: list[float] = []
    per_decision: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as directory:
        data = Path(directory)
        for seed in range(max(3, runs)):
            sandboxed.append(_match(data, seed, True, 2)[0])
            plain.append(_match(data, seed, False, 2)[0])
            for without_guard in (False, True):
                with _doors_unguarded(without_guard):
                    _, cpu, decisions = _match(data, seed, True, 20)
                per_decision[without_guard].append(cpu / decisions * 1e6)
    with_sandbox, without = statistics.median(sandboxed), statistics.median(plain)
    guarded, unguarded = (statistics.median(per_decision[u]) for u in (False, True))
    return [
        f"local belote match, 2 deals, 4 sample bots, sandboxed: {with_sandbox:.2f} s",
        f"local belote match, 2 deals, 4 sample bots, no sandbox: {without:.2f} s",
        f"ratio sandboxed vs no sandbox: {with_sandbox / without:.2f} x",
        f"arena CPU per decision, sandboxed, doors guarded: {guarded:.0f} us",
        f"arena CPU per decision, sandboxed, doors without their guard: {unguarded:.0f} us",
        f"ratio doors guarded vs without their guard: {guarded / unguarded:.2f} x",
    ]
