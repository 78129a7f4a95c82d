"""The sample bots, by game and name: ``BOTS[game][name](seed)`` makes a bot.

Adding a bot is one line here: a :data:`BotFactory` takes an optional seed (only random bots
use it) and returns a :data:`~bisca.client.Bot`.  ``bisca bot NAME --game GAME`` and
:func:`make_bot` look bots up in this registry, so a new entry is playable from the command line
at once.  ``random`` is generic and listed for every game of the engine; rule-based bots are
written per game (``belote_greedy``, ``bestia_greedy``); ``pimc`` searches the card play
(:mod:`.pimc`, the strongest of the three).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bisca.engine import GAMES

from .._types import Bot, Request
from . import belote_greedy, bestia_greedy
from .pimc import pimc_bot
from .random_bot import random_bot

BotFactory = Callable[[int | None], Bot]
"""Makes a bot from an optional seed."""


def stateless(bot: Bot) -> BotFactory:
    """The factory of a deterministic bot, which has no use for a seed."""

    def make(seed: int | None = None) -> Bot:
        return bot

    return make


_GREEDY: dict[str, Bot] = {
    "belote": belote_greedy.greedy,
    "bestia": bestia_greedy.greedy,
}

BOTS: dict[str, dict[str, BotFactory]] = {
    game: {
        "random": random_bot,
        **({"greedy": stateless(_GREEDY[game])} if game in _GREEDY else {}),
        **({"pimc": pimc_bot} if game in _GREEDY else {}),
    }
    for game in sorted(GAMES)
}
"""game -> bot name -> factory."""


def make_bot(game: str, name: str, seed: int | None = None) -> Bot:
    """The bot ``name`` of ``game`` (``ValueError`` listing the known games or bots)."""
    bots = BOTS.get(game)
    if bots is None:
        raise ValueError(f"no bots for game {game!r}; known games: {', '.join(sorted(BOTS))}")
    factory = bots.get(name)
    if factory is None:
        raise ValueError(f"no bot {name!r} for {game}; known: {', '.join(sorted(bots))}")
    return factory(seed)


def by_game(bots: Mapping[str, Bot]) -> Bot:
    """One bot that hands each request to the bot of its game, for a connection that plays
    several games."""
    table = dict(bots)

    def dispatch(request: Request[Any, Any]) -> Any:
        return table[request.game](request)

    return dispatch


__all__ = ["BOTS", "BotFactory", "by_game", "make_bot", "pimc_bot", "random_bot", "stateless"]
