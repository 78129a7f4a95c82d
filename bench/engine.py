"""Random-play decisions per second of each game engine, against OpenSpiel's euchre.

The anchor is OpenSpiel's C++ euchre driven from Python through ``pyspiel``: at every decision
a uniformly random legal action, at every chance node an outcome sampled by its probability.
Only decisions are counted (chance nodes are work the anchor does that our engines do inside
``apply``), over the same wall-clock budget, median of several runs.  The first line says which
engine ran: compiled with mypyc, or the plain Python (``BISCA_PURE=1`` forces it; see
``bisca/engine/_native.py``).  ``python -m bench.engine [RUNS] [SECONDS]`` runs this module alone.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bisca.engine import GAMES, GameState

Budget = float


def engine_kind() -> str:
    """Which engine runs: its modules are extension modules when compiled."""
    state_module = sys.modules[
        type(GAMES["bestia"].new_match(GAMES["bestia"].settings(), 0)).__module__
    ]
    compiled = not str(state_module.__file__).endswith(".py")
    return "compiled (mypyc)" if compiled else "pure Python"


def random_playouts(make: Callable[[int], GameState[Any, Any, Any]], seconds: Budget) -> float:
    """Decisions per second of uniformly random play on fresh matches from ``make``."""
    rng = random.Random(1)
    choice = rng.choice
    decisions = 0
    seed = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = make(seed)
        seed += 1
        while not state.is_over:
            state.apply(choice(state.legal_actions()))
            decisions += 1
    return decisions / (time.perf_counter() - start)


def euchre_anchor(seconds: Budget) -> float | None:
    """OpenSpiel euchre decisions per second, or ``None`` when pyspiel is not installed."""
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        return None
    game = pyspiel.load_game("euchre")
    rng = random.Random(1)
    decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, weights = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, weights)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
    return decisions / (time.perf_counter() - start)


def _matches_of(game: str, **settings: Any) -> Callable[[int], GameState[Any, Any, Any]]:
    spec = GAMES[game]
    fixed = spec.settings(settings)
    return lambda seed: spec.new_match(fixed, seed)


# One Belote deal per match (the anchor's euchre game is one deal too); Bestia matches of one
# dealing round.
ENGINES: dict[str, Callable[[int], GameState[Any, Any, Any]]] = {
    "belote": _matches_of("belote", deals=1),
    "bestia-5": _matches_of("bestia", seats=5, rounds=1),
    "bestia-7": _matches_of("bestia", seats=7, rounds=1),
}


def run(runs: int = 3, seconds: Budget = 2.0) -> list[str]:
    # The runs are interleaved (the anchor, then every engine, round after round) and each
    # ratio is the median of the ratios of one round: on a shared machine a burst of load
    # then weighs on the anchor and the engines alike instead of on whichever ran during it.
    anchors: list[float] = []
    figures: dict[str, list[float]] = {name: [] for name in ENGINES}
    for _ in range(runs):
        anchor = euchre_anchor(seconds)
        if anchor is not None:
            anchors.append(anchor)
        for name, make in ENGINES.items():
            figures[name].append(random_playouts(make, seconds))
    lines = [f"engine: {engine_kind()}"]
    if not anchors:
        lines.append("openspiel euchre decisions/s: unavailable (pip install open_spiel)")
    else:
        median = statistics.median(anchors)
        lines.append(f"openspiel euchre random-play decisions/s: {median:,.0f} decisions/s")
    for name, measured in figures.items():
        lines.append(
            f"{name} random-play decisions/s: {statistics.median(measured):,.0f} decisions/s"
        )
        if anchors:
            ratio = statistics.median(f / a for f, a in zip(measured, anchors, strict=True))
            lines.append(f"ratio {name} vs openspiel euchre: {ratio:.2f}")
    return lines


if __name__ == "__main__":
    arguments = [float(value) for value in sys.argv[1:3]]
    for line in run(int(arguments[0]) if arguments else 3, arguments[1] if arguments[1:] else 2.0):
        print(line, flush=True)
