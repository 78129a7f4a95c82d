"""Wrong tokens cost time: a guard against guessing tokens, per peer address.

A peer's first few wrong tokens are answered at once (a bot started with a stale token should
hear so quickly); after that each is answered alone and later than the one before, doubling up
to a cap, so guessing from one address runs at a few tokens a minute instead of thousands a
second.  Right tokens never wait, whatever their peer did: a legitimate bot sharing an address
with a guesser (every sandboxed bot comes through the same unix socket) is not slowed.  A peer
that stays quiet for :data:`FORGET_AFTER_S` starts afresh.

Waiting must not cost the server what the peer sends: a stream whose peer left stops waiting
at once (:meth:`WrongTokenThrottle.forget`), and a peer with :data:`MAX_WAITING_PER_PEER`
Hellos already waiting has any further one refused before its token is looked at (judging it
would tell a right token from a wrong one at once, the very answer the waiting delays).
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from dataclasses import dataclass, field

import trio

#: Wrong tokens a peer may send before they start to cost time.
FREE_FAILURES = 5
FIRST_DELAY_S = 0.05
MAX_DELAY_S = 10.0
FORGET_AFTER_S = 600.0
#: Hellos one address may have waiting for the answer to a wrong token.
MAX_WAITING_PER_PEER = 8


#: What the edge names the peers of a sandboxed bot's door (``door:PATH``): not one of gRPC's
#: own kinds (``ipv4``, ``ipv6``, ``unix``, ``unix-abstract``), so no client can claim it.
DOOR_PEER = "door"


def peer_address(peer: str) -> str:
    """The address part of a gRPC peer (``ipv4:127.0.0.1:5000`` -> ``ipv4:127.0.0.1``): the
    port changes with every connection, the address does not.  A unix socket's peers are one
    address, ``unix``, whatever path a client bound its end to (review 39); a sandboxed bot's
    door (``edge/_doors.py``) names its peers ``door:PATH``, an address of their own."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return f"{kind}:{rest.rpartition(':')[0]}"
    if kind == DOOR_PEER:
        return peer
    return kind or peer


def counted_address(remote: str) -> str:
    """Whom a limit per client counts the IP address ``remote`` against: the address, an
    IPv6 one by its /64 (a host is given a whole /64: per address, it would have 2^64
    budgets), an IPv4-mapped, 6to4 or Teredo one as the IPv4 address it carries (6to4 gives
    every IPv4 host a /48, 65,536 budgets of a /64: review s59d, F2); anything else as it
    is."""
    try:
        address = ipaddress.ip_address(remote)
    except ValueError:
        return remote
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        if address.sixtofour is not None:
            return str(address.sixtofour)
        if address.teredo is not None:
            return str(address.teredo[1])  # (the client's; the first is its Teredo server's)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return remote


def counted_peer(peer: str) -> str:
    """A gRPC peer (``ipv4:1.2.3.4:5000``, ``ipv6:%5B::1%5D:5000``: grpcio writes an IPv6
    address's brackets, and its zone's ``%``, percent-encoded; ``unix:...``) counted as the web
    counts its clients (:func:`counted_address`), so that one client meets one limit on both
    fronts; a unix socket's or a door's peers as :func:`peer_address` names them."""
    address = peer_address(peer)
    kind, _, host = address.partition(":")
    if kind in ("ipv4", "ipv6"):
        host = urllib.parse.unquote(host).removeprefix("[").removesuffix("]")
        return counted_address(host.partition("%")[0])  # (a link-local address's zone: one host)
    return address


@dataclass
class _Peer:
    failures: int = 0
    last: float = 0.0
    turn: trio.Lock = field(default_factory=trio.Lock)
    #: The streams whose wrong token waits for its answer, each with what ends its wait.
    waiting: dict[str, trio.CancelScope] = field(default_factory=dict)


class WrongTokenThrottle:
    def __init__(self) -> None:
        self._peers: dict[str, _Peer] = {}

    @property
    def waiting(self) -> int:
        """Streams waiting for the answer to a wrong token, over every peer."""
        return sum(len(record.waiting) for record in self._peers.values())

    def full(self, peer: str) -> bool:
        """Whether ``peer``'s address has as many Hellos waiting as it may."""
        record = self._peers.get(peer_address(peer))
        return record is not None and len(record.waiting) >= MAX_WAITING_PER_PEER

    def forget(self, stream: str) -> None:
        """Stream ``stream``'s peer left: its wait ends now (nobody is there to answer)."""
        for record in self._peers.values():
            scope = record.waiting.pop(stream, None)
            if scope is not None:
                scope.cancel()

    def delay(self, failures: int) -> float:
        """How long the answer to a peer's ``failures``-th wrong token waits."""
        if failures <= FREE_FAILURES:
            return 0.0
        return min(MAX_DELAY_S, FIRST_DELAY_S * 2.0 ** (failures - FREE_FAILURES - 1))

    async def wrong_token(self, peer: str, stream: str = "") -> bool:
        """Wait before answering a wrong token from ``peer`` on ``stream`` (one such answer at
        a time per peer, so opening many streams at once does not help).  False when the wait
        ended because the stream's peer left (:meth:`forget`): there is no one to answer.  The
        failure counts either way: leaving does not make the next guess cheaper."""
        now = trio.current_time()
        for address, known in list(self._peers.items()):  # forget the quiet ones
            if now - known.last > FORGET_AFTER_S and not known.turn.locked() and not known.waiting:
                del self._peers[address]
        record = self._peers.setdefault(peer_address(peer), _Peer())
        record.failures += 1
        failures = record.failures
        with trio.CancelScope() as scope:
            record.waiting[stream] = scope
            try:
                async with record.turn:
                    await trio.sleep(self.delay(failures))
            finally:
                record.waiting.pop(stream, None)
                record.last = trio.current_time()
        return not scope.cancelled_caught
