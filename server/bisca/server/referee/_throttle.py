"""Wrong tokens cost time: a guard against guessing tokens, per peer address.

A peer's first few wrong tokens are answered at once (a bot started with a stale token should
hear so quickly); after that each is answered alone and later than the one before, doubling up
to a cap, so guessing from one address runs at a few tokens a minute instead of thousands a
second.  Right tokens never wait, whatever their peer did: a legitimate bot sharing an address
with a guesser (every sandboxed bot comes through the same unix socket) is not slowed.  A peer
that stays quiet for :data:`FORGET_AFTER_S` starts afresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import trio

#: Wrong tokens a peer may send before they start to cost time.
FREE_FAILURES = 5
FIRST_DELAY_S = 0.05
MAX_DELAY_S = 10.0
FORGET_AFTER_S = 600.0


def peer_address(peer: str) -> str:
    """The address part of a gRPC peer (``ipv4:127.0.0.1:5000`` -> ``ipv4:127.0.0.1``): the
    port changes with every connection, the address does not."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return f"{kind}:{rest.rpartition(':')[0]}"
    return kind or peer


@dataclass
class _Peer:
    failures: int = 0
    last: float = 0.0
    turn: trio.Lock = field(default_factory=trio.Lock)


class WrongTokenThrottle:
    def __init__(self) -> None:
        self._peers: dict[str, _Peer] = {}

    def delay(self, failures: int) -> float:
        """How long the answer to a peer's ``failures``-th wrong token waits."""
        if failures <= FREE_FAILURES:
            return 0.0
        return min(MAX_DELAY_S, FIRST_DELAY_S * 2.0 ** (failures - FREE_FAILURES - 1))

    async def wrong_token(self, peer: str) -> None:
        """Wait before answering a wrong token from ``peer`` (one such answer at a time per
        peer, so opening many streams at once does not help)."""
        now = trio.current_time()
        for address, known in list(self._peers.items()):  # forget the quiet ones
            if now - known.last > FORGET_AFTER_S and not known.turn.locked():
                del self._peers[address]
        record = self._peers.setdefault(peer_address(peer), _Peer())
        async with record.turn:
            record.failures += 1
            await trio.sleep(self.delay(record.failures))
            record.last = trio.current_time()
