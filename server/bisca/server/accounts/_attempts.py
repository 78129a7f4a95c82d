"""What one account may make the server unpack: every upload counts, refused ones too.

An upload costs the server its unpack whether or not a version comes of it: an archive with no
manifest, a gzip bomb or another account's bot name is refused only once it is unpacked, up to
``unpacked_bytes`` (64 MiB) written to disk and a third of a second of a core for a few KiB
sent.  Review 38 sent refused uploads in a loop and none counted against anything.  So
``submissions_per_day`` bounds an account's *uploads*: the versions it added in the last 24
hours (the store's count) and the uploads of it refused in that time (:class:`UploadAttempts`,
in memory), and the next one past the limit is refused (429) before the server unpacks it, or
even receives it.  One account unpacks one archive at a time: its uploads sent at once cannot
fill the server's few places for unpacking (``bisca.server.web``) together.

Refusals are kept in memory, not in the store: a restart forgets them (an account may then send
one more day's worth), which bounds a cost rather than a result; the versions a day are counted
in the store as before, and again in the transaction that adds one.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ._refusals import LimitReached

DAY_S = 24 * 3600.0
#: Accounts with refusals remembered before the old ones are swept out.
_SWEEP_FROM = 1024


@dataclass(frozen=True)
class UploadHold:
    """One upload of ``account`` let through to be unpacked (:meth:`UploadAttempts.hold`),
    until it is settled: its version added, refused, or given back unread."""

    account: str
    at: float
    #: Uploads of the account refused in the 24 hours before this one: the server's places
    #: for unpacking keep room for accounts with none (``bisca.server.web``).
    refused_before: int = 0
    #: The address it is sent from (an IPv6 one by its /64), whose budget it counts against
    #: too; ``None`` where it does not come over the web.
    sent_from: str | None = None


class UploadAttempts:
    """Per account: the uploads refused in the last 24 hours, and whether one is being
    received or unpacked now.  Called from the loop and from worker threads: a lock keeps each
    call whole."""

    def __init__(self) -> None:
        self._refused: dict[str, list[float]] = {}
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    def hold(self, account: str, added: int, most: int, sent_from: str | None = None) -> UploadHold:
        """Let one upload of ``account``, sent from ``sent_from``, through, which added ``added``
        versions in the last 24 hours: :class:`LimitReached` (429) while another of its uploads
        is under way, or when its versions and refused uploads of the day are ``most`` already."""
        now = time.monotonic()
        with self._lock:
            if account in self._busy:
                raise LimitReached(
                    f"an upload of {account}'s is being taken now: send the next once it is "
                    "answered (one at a time)"
                )
            refused = self._recent(account, now)
            if added + len(refused) >= most:
                raise LimitReached(
                    f"{account} sent {added + len(refused)} uploads in the last 24 hours "
                    f"({added} made versions, {len(refused)} were refused), the limit "
                    "(submissions_per_day): try again later"
                )
            self._busy.add(account)
        return UploadHold(account, now, len(refused), sent_from)

    def added(self, hold: UploadHold) -> None:
        """The upload made a version: the store counts it from now on."""
        self.give_back(hold)

    def refused(self, hold: UploadHold) -> None:
        """The upload was unpacked (or began to be) and refused: it counts for 24 hours."""
        now = time.monotonic()
        with self._lock:
            self._busy.discard(hold.account)
            self._refused[hold.account] = [*self._recent(hold.account, now), now]
            if len(self._refused) > _SWEEP_FROM:
                for account in list(self._refused):
                    if not self._recent(account, now):
                        del self._refused[account]

    def give_back(self, hold: UploadHold) -> None:
        """The upload was never unpacked (its body did not arrive, no place was free): it
        counts for nothing."""
        with self._lock:
            self._busy.discard(hold.account)

    def _recent(self, account: str, now: float) -> list[float]:
        return [at for at in self._refused.get(account, []) if now - at < DAY_S]
