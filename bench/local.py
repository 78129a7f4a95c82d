"""In-process matches (``bisca.client.local``): decisions per second of a bot callback played
by the local runner, against the raw engine's random play measured in the same run.

The anchor is :func:`bench.engine.random_playouts`: the engine alone, a random legal action
at every decision.  The local figure plays the same matches (one Belote deal, one Bestia round
of 5 seats) through :func:`bisca.client.local.play_match`, every seat a callback choosing a
random legal action from its :class:`~bisca.client.Request`: what the runner adds per decision
is the request, the call and the checks.  Rounds are interleaved and each ratio is the median
of the rounds' own ratios, as in ``engine.py``.  A third figure is the same local play writing
its match log (every observation, action and event encoded for ``bisca replay``).
"""

from __future__ import annotations

import functools
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bisca.client import Request
from bisca.client.local import play_match
from bisca.engine import GAMES

from .engine import random_playouts

#: (figure name, game, settings): the matches of engine.py.
GAMES_PLAYED = (
    ("belote", "belote", {"deals": 1}),
    ("bestia", "bestia", {"seats": 5, "rounds": 1}),
)


def local_playouts(game: str, settings: Any, seconds: float, log_into: Path | None = None) -> float:
    """Decisions per second of random callbacks in local matches (logged into ``log_into``)."""
    choice = random.Random(1).choice
    seats = GAMES[game].seats(settings)

    def bot(request: Request[Any, Any]) -> Any:
        return choice(request.legal_actions)

    players = [bot] * seats
    decisions = 0
    seed = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        log = None if log_into is None else log_into / f"{game}-{seed}.binlog"
        decisions += play_match(game, players, settings=settings, seed=seed, log=log).steps
        seed += 1
    return decisions / (time.perf_counter() - start)


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    lines = []
    for name, game, mapping in GAMES_PLAYED:
        spec = GAMES[game]
        settings = spec.settings(mapping)
        raw: list[float] = []
        local: list[float] = []
        logged: list[float] = []
        for _ in range(runs):
            raw.append(random_playouts(functools.partial(spec.new_match, settings), seconds))
            local.append(local_playouts(game, settings, seconds))
            with tempfile.TemporaryDirectory() as folder:
                logged.append(local_playouts(game, settings, seconds / 2, Path(folder)))
        ratio = statistics.median(mine / anchor for mine, anchor in zip(local, raw, strict=True))
        for label, figures in (("decisions per second", local), ("raw engine random play", raw)):
            median = statistics.median(figures)
            lines.append(f"local: {label}, {name}: {median:,.0f} decisions/s")
        lines.append(f"ratio local vs raw engine random play, {name}: {ratio:.2f}")
        lines.append(
            f"local with its log: decisions per second, {name}: "
            f"{statistics.median(logged):,.0f} decisions/s"
        )
    return lines
