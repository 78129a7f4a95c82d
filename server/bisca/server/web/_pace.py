"""Requests per peer address, paced: one address's flood costs the loop what its pace allows.

The listings are answered from what is kept (``_recent.py``) and each connection is counted
(``_connections.py``), but an address that asks in a loop over its 64 connections is answered
thousands of times a second: ~85 µs of the loop each, on the loop the referee plays its
matches on (review s58b, finding W2: one client process held 40 % of a core).  So each
address (an IPv6 one by its /64, as every limit per client counts it) is given a pace of
``per_second`` requests, with a burst of ``burst_s`` seconds of it (a page's load, a few
people behind one NAT address); a request beyond the burst is not refused but held until its
turn, as nginx's ``limit_req`` with a burst holds it.  A held request holds its connection,
and an address holds at most ``connections_per_client`` of those, so a flood slows down to
the pace instead of being answered faster with refusals.  Only a request whose turn is more
than ``max_wait_s`` away (pipelined requests, or a pace far below the connections) is refused
at once, 429 with ``Retry-After``, and takes no turn.

The pace is the generic cell rate algorithm: per address one number, the time its next
request is due at the pace (``due``); a request at ``now`` is answered at
``max(now, due - burst_s)`` and moves ``due`` on by one interval.  An address whose ``due`` has
passed is idle and forgotten, so the table holds the addresses active in the last seconds; were
it full of active ones (:data:`MAX_ADDRESSES`, a flood from as many networks), a new address
shares one pace with the others not in it.  A page's WebSocket messages take turns of the
same pace as its requests (``_api.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from bisca.server.referee import counted_address

from ._guards import Handler
from ._json import Problem

#: The option that sets the pace (named in a refusal, so an operator knows what to raise).
OPTION = "--http-requests-per-client"
#: Seconds of the pace an address may spend at once before its requests are held.
BURST_S = 5.0
#: The longest a request is held for its turn; one due later is refused.
MAX_WAIT_S = 10.0
#: Addresses paced apart; beyond them, active ones all, the newcomers share one pace.
MAX_ADDRESSES = 65_536
#: Whom the newcomers beyond :data:`MAX_ADDRESSES` are counted as.
OVERFLOW = "*"


@dataclass(frozen=True)
class Turn:
    """When a request is answered: ``wait`` seconds from now, or refused (``refused``) and
    to be asked again in ``wait`` seconds."""

    wait: float
    refused: bool = False


class RequestPace:
    """The pace of each peer address (see the module's docstring); ``clock`` is monotonic
    seconds (the tests give their own)."""

    def __init__(
        self,
        per_second: float,
        *,
        burst_s: float = BURST_S,
        max_wait_s: float = MAX_WAIT_S,
        max_addresses: int = MAX_ADDRESSES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not per_second > 0 or math.isinf(per_second):
            raise ValueError(f"{OPTION} must be a number of requests a second above 0")
        self.per_second = per_second
        self._interval = 1.0 / per_second
        self._burst_s = burst_s
        self._max_wait_s = max_wait_s
        self._max_addresses = max_addresses
        self._clock = clock
        #: Each address's due time.
        self._due: dict[str, float] = {}
        #: When the table is next worth sweeping: its earliest due time, past which an entry
        #: is idle (so a full table of active addresses is not swept at every newcomer).
        self._sweep_at = 0.0
        #: Set when the app shuts down: what is held is answered then, not at its turn.
        self._released = asyncio.Event()

    @property
    def addresses(self) -> int:
        """Addresses paced now (the idle ones may still be counted until a newcomer comes)."""
        return len(self._due)

    def turn(self, peer: str) -> Turn:
        """Take a turn for a request of ``peer`` (an address as :func:`counted_address` names
        it), or refuse it without taking one."""
        now = self._clock()
        key = self._key(peer, now)
        due = max(now, self._due.get(key, now))
        wait = max(0.0, due - self._burst_s - now)
        if wait > self._max_wait_s:
            return Turn(wait - self._max_wait_s, refused=True)
        self._due[key] = due + self._interval
        return Turn(wait)

    def _key(self, peer: str, now: float) -> str:
        due = self._due
        if peer in due or len(due) < self._max_addresses:
            return peer
        if now >= self._sweep_at:
            # Every idle entry goes, wherever it is: forgetting them in the order asked
            # stopped at the first one still ahead of its pace, and one address kept ahead
            # kept a full table of idle ones behind it (review s59d, F2).  A sweep reads the
            # table once; the next waits until its earliest entry's turn has passed.
            for address in [address for address, at in due.items() if at <= now]:
                del due[address]
            self._sweep_at = min(due.values(), default=now)
        return peer if len(due) < self._max_addresses else OVERFLOW

    def refusal(self, peer: str, turn: Turn) -> Problem:
        return Problem(
            429,
            f"{peer} asks faster than {self.per_second:g} requests a second, the pace one "
            f"address is answered at ({OPTION}), and its next turn is more than "
            f"{self._max_wait_s:g} s away: ask again later",
            retry_after_s=turn.wait,
        )

    async def wait_for_turn(self, peer: str) -> Turn:
        """Take ``peer``'s next turn, once it comes (a turn refused is returned at once)."""
        turn = self.turn(peer)
        if turn.wait > 0 and not turn.refused and not self._released.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(turn.wait):
                    await self._released.wait()
        return turn

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        peer = counted_address(request.remote or "")
        turn = await self.wait_for_turn(peer)
        if turn.refused:
            raise self.refusal(peer, turn)
        return await handler(request)

    async def release(self, _app: web.Application) -> None:
        """The app shuts down (``on_shutdown``): the requests held are answered now, so that
        stopping the server does not wait for their turns."""
        self._released.set()
