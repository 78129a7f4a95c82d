"""How strong the ``pimc`` sample bot is: a duplicate-deal tournament against ``greedy``,
played in-process (``bisca.client.local``), at Belote and at Bestia.

Duplicate deals take the luck of the cards out of the comparison.  At Belote each seed's deal
is played twice, ``pimc`` holding the cards of team 0 and then those of team 1 (its partner
``pimc`` too, the other team ``greedy``); one result is the mean of the two differences of
``pimc``'s team's score and ``greedy``'s.  At Bestia (5 seats, one round of deals, one hand
per dealer) each seed's match is played with ``greedy`` at every seat, then once with
``pimc`` at each seat instead (``greedy`` at the four others); one result is the mean over the
five seats of ``pimc``'s net chips minus ``greedy``'s at the same seat with the same cards.
The figure is the mean result with its 95 % interval (normal, from the results' spread); the
goal is an interval above zero at both games.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from bisca.client import Bot
from bisca.client.bots import make_bot, pimc_bot
from bisca.client.local import play_match

#: Seeds per game: enough for an interval of a few points either side on a loaded machine.
SEEDS = {"belote": 150, "bestia": 150}
BESTIA_SEATS = 5
#: One round of deals, and one hand per dealer in it (the giro's repeated hands, while a pot
#: is left, would make a match's chips swing by hundreds and hide the bots' difference).
BESTIA_SETTINGS = {"seats": BESTIA_SEATS, "rounds": 1, "giro_max_hands": 1}


def belote_result(pimc: Bot, greedy: Bot, seed: int) -> float:
    first = play_match("belote", [pimc, greedy, pimc, greedy], settings={"deals": 1}, seed=seed)
    second = play_match("belote", [greedy, pimc, greedy, pimc], settings={"deals": 1}, seed=seed)
    return ((first.scores[0] - first.scores[1]) + (second.scores[1] - second.scores[0])) / 2


def bestia_result(pimc: Bot, greedy: Bot, seed: int) -> float:
    settings = BESTIA_SETTINGS
    # What greedy makes of each seat's cards: the match of greedy at every seat.
    baseline = play_match("bestia", [greedy] * BESTIA_SEATS, settings=settings, seed=seed).scores
    margins = []
    for seat in range(BESTIA_SEATS):
        players = [greedy] * BESTIA_SEATS
        players[seat] = pimc
        scores = play_match("bestia", players, settings=settings, seed=seed).scores
        margins.append(scores[seat] - baseline[seat])
    return statistics.mean(margins)


RESULTS: dict[str, tuple[Callable[[Bot, Bot, int], float], str]] = {
    "belote": (belote_result, "points per deal"),
    "bestia": (bestia_result, "chips per match"),
}


def tournament(game: str, seeds: int) -> tuple[float, float, float]:
    """(mean result, half width of its 95 % interval, seconds per seed)."""
    result, _ = RESULTS[game]
    pimc, greedy = pimc_bot(1), make_bot(game, "greedy")
    start = time.perf_counter()
    results = [result(pimc, greedy, seed) for seed in range(seeds)]
    elapsed = (time.perf_counter() - start) / seeds
    half = 1.96 * statistics.stdev(results) / len(results) ** 0.5
    return statistics.mean(results), half, elapsed


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    lines = []
    for game, seeds in SEEDS.items():
        mean, half, per_seed = tournament(game, seeds)
        unit = RESULTS[game][1]
        lines.append(
            f"pimc vs greedy, duplicate deals, {game}: {mean:+.1f} {unit} "
            f"(95% interval {mean - half:+.1f} .. {mean + half:+.1f}, {seeds} seeds, "
            f"{per_seed:.2f} s per seed)"
        )
    return lines
