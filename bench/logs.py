"""Match log figures: bytes per Belote match and per Bestia hand, and logs verified per second.

The logs come from real local matches (sample random bots as processes, the in-process server),
so they hold exactly what the referee writes.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bisca.engine import GAMES
from bisca.server.logs import read_log, verify
from bisca.server.referee import clock_settings
from bisca.server.tournament import run_local_match


def _play(game: str, settings: dict[str, Any], seats: int, data: Path, seed: int) -> Path:
    result = asyncio.run(
        run_local_match(
            game=game,
            settings=GAMES[game].settings(settings),
            bot_commands=["random"] * seats,
            data_dir=data,
            seed=seed,
            clock=clock_settings(5000, 5000, "default"),
        )
    )
    path = result.runner.log_path
    assert path is not None, result.runner.reason
    return Path(path)


def _hands(path: Path) -> int:
    return sum(
        1
        for entry in read_log(path).entries()
        if entry.WhichOneof("kind") == "events"
        for logged in entry.events.events
        if logged.event.bestia.WhichOneof("event") == "hand_started"
    )


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    with tempfile.TemporaryDirectory() as directory:
        data = Path(directory)
        belote = [_play("belote", {}, 4, data, seed) for seed in range(runs)]
        bestia = [_play("bestia", {"seats": 5}, 5, data, seed) for seed in range(runs)]
        per_match = statistics.median(path.stat().st_size for path in belote)
        per_hand = statistics.median(path.stat().st_size / _hands(path) for path in bestia)
        logs = belote + bestia
        rates = []
        for _ in range(runs):
            verified = 0
            start = time.perf_counter()
            while time.perf_counter() - start < seconds:
                for path in logs:
                    assert verify(path).ok
                    verified += 1
            rates.append(verified / (time.perf_counter() - start))
    return [
        f"log bytes per belote match (4 deals): {per_match:,.0f} bytes",
        f"log bytes per bestia hand (5 seats): {per_hand:,.0f} bytes",
        f"logs verified per second (belote matches and bestia 5-seat matches): "
        f"{statistics.median(rates):,.1f} logs/s",
    ]
