"""Public answers made once a second at most: what anybody may ask without an account costs
the server what one asker does, however many ask.

The listings every visitor's page polls (the leaderboard and its standings, the rating
history, the match list) read the whole store's matches or ratings; sixty connections of one
anonymous address asking them in a loop held the server's loop so busy that the ladder played
a tenth of its matches and ``/api/info`` took 2 s (review 52).  :class:`RecentAnswers` keeps
each answer ``fresh_s`` seconds, and askers who come while it is being made wait for that one
making (no second read of the store).  Only answers that are the same for everybody go
through it, keyed by what chose them (a game, a status, a version), never by a page number or
anything else an asker may vary at will, and it holds at most ``keys`` of them.  Answers keyed
by a name the asker chooses (one bot's rating history) are kept apart from the others, so that
asking for many names pushes none of those out.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

#: How long an answer stays fresh: a page polls every few seconds, a flood many times a second.
FRESH_S = 1.0
#: Answers kept at most (the oldest made goes first).
KEYS = 256


@dataclass
class _Making(Generic[T]):
    started: float
    answer: asyncio.Future[T]


class RecentAnswers(Generic[T]):
    """Answers by key, each made at most once per ``fresh_s`` seconds of ``clock``."""

    def __init__(
        self,
        fresh_s: float | None = None,
        keys: int = KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fresh_s = FRESH_S if fresh_s is None else fresh_s
        self.keys = keys
        self.clock = clock
        self._answers: OrderedDict[Hashable, _Making[T]] = OrderedDict()

    async def get(self, key: Hashable, make: Callable[[], Awaitable[T]]) -> T:
        """The answer of ``key``: the one made less than ``fresh_s`` ago, the one being made
        now, else a new one from ``make()``.  A making that fails is not kept (the next asker
        makes it again) and fails every asker that waited for it."""
        now = self.clock()
        known = self._answers.get(key)
        if known is None or (known.answer.done() and now - known.started >= self.fresh_s):
            known = _Making(now, asyncio.ensure_future(make()))
            self._answers[key] = known
            self._answers.move_to_end(key)
            while len(self._answers) > self.keys:
                self._answers.popitem(last=False)
            known.answer.add_done_callback(lambda done: self._forget_failed(key, done))
        # Shielded: an asker that goes away (its connection closed) does not cancel the making
        # the others wait for.
        return await asyncio.shield(known.answer)

    def _forget_failed(self, key: Hashable, done: asyncio.Future[T]) -> None:
        known = self._answers.get(key)
        if (
            known is not None
            and known.answer is done
            and (done.cancelled() or done.exception() is not None)
        ):
            del self._answers[key]
