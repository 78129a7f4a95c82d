"""What the session keeps per (match, seat), bounded by count and by bytes.

A server decides how many matches a bot is in and how big each of their messages is, so what
the session keeps of them (the open requests, the deal commitments with the first events, the
starts seen) is bounded twice: at most :data:`MAX_MATCHES` entries and about
:data:`MAX_KEPT_BYTES` per table.  A count alone let a hostile server make 1,024 entries of a
few megabytes each (the C++ SDK grew to 3.8 GB in 10 s that way).  Past either bound the
least recently active entry goes, the one most likely to be a match the server forgot; the
newest always stays.  Losing one costs little (a rejection of its request is no longer
answered at once, the re-sent request is; its deal is not checked at the end), far less than
a bot whose memory grows until it is killed.

Sizes are estimates of what an entry holds in this process, from its wire size: a decoded
request holds about six to eight times its bytes in Python objects (measured with
``tracemalloc``: 7.1 with 200 legal actions, 6.3 with 4,000) and about 1.8 KB whatever its size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

#: A per-match entry's key: the match's id and the seat.
Key = tuple[str, int]

MAX_MATCHES = 1024
"""The most (match, seat) entries in each table.  A bot plays far fewer seats at once on one
connection (one per match running at the same time that seats it, two for a bot seated
twice), so 1,024 is generous."""

MAX_KEPT_BYTES = 16 * 1024 * 1024
"""About the most each table holds (:func:`request_size`, :func:`key_size`): ordinary entries
are a few kilobytes, so only a server that sends enormous messages for matches it never ends
reaches it."""

#: What an entry costs beyond what it is told to hold (the key, the dict's slot, the record).
ENTRY_BYTES = 256
#: A decoded request's size in Python objects per byte on the wire, and beside them.
REQUEST_BYTES_PER_WIRE_BYTE = 8
REQUEST_BYTES = 2048

V = TypeVar("V")


def key_size(key: Key) -> int:
    """What keeping ``key`` costs: a server chooses match ids of any length."""
    return ENTRY_BYTES + len(key[0])


def request_size(key: Key, wire_bytes: int) -> int:
    """What a decoded request of ``wire_bytes`` (without its events) costs kept."""
    return key_size(key) + REQUEST_BYTES + REQUEST_BYTES_PER_WIRE_BYTE * wire_bytes


class KeptTable(Generic[V]):
    """Entries by (match, seat) in the order of their last use, within both bounds; each
    forgotten one is reported to ``forgotten`` with what it was (``what``) and its key."""

    def __init__(self, what: str, forgotten: Callable[[str, Key], None]) -> None:
        self.what = what
        self._forgotten = forgotten
        self._entries: dict[Key, tuple[V, int]] = {}
        self.kept_bytes = 0

    def keep(self, key: Key, value: V, size: int) -> None:
        """``value`` for ``key``, as the most recent entry, costing ``size`` bytes; past a
        bound the least recent entries are forgotten (never this one)."""
        self.pop(key)
        self._entries[key] = (value, size)
        self.kept_bytes += size
        while len(self._entries) > 1 and (
            len(self._entries) > MAX_MATCHES or self.kept_bytes > MAX_KEPT_BYTES
        ):
            oldest = next(iter(self._entries))
            self.pop(oldest)
            self._forgotten(self.what, oldest)

    def get(self, key: Key) -> V | None:
        entry = self._entries.get(key)
        return None if entry is None else entry[0]

    def pop(self, key: Key) -> V | None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        self.kept_bytes -= entry[1]
        return entry[0]

    def clear(self) -> None:
        self._entries.clear()
        self.kept_bytes = 0

    def __contains__(self, key: Key) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Key]:
        return iter(list(self._entries))
