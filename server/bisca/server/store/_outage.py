"""A loop's store outage (operator review, findings 1 and 12): one line when the store is lost
and one when it answers again, not a traceback a pass; the wait between two tries doubles, up
to a bound, while it is lost.  No clock and no framework: the league's matchmaker (trio), the
gate's and the ladder's loops (asyncio) each sleep what it says."""

from __future__ import annotations

import logging

from bisca.server.errors import StoreUnavailable

#: The longest wait between two tries while the store does not answer.
OUTAGE_RETRY_MAX_S = 8.0


def is_store_lost(problem: BaseException) -> bool:
    """The store (or its queue) did not answer (:class:`StoreUnavailable`), as opposed to a
    request it refused (any other :class:`StoreError`: a duplicate bot, an unknown match) or
    a bug."""
    if isinstance(problem, StoreUnavailable):
        return True
    # The ladder's queue (procrastinate, psycopg's pool) says it in its own words.
    return type(problem).__name__ in {"ConnectorException", "PoolTimeout", "OperationalError"}


class StoreOutage:
    """What one loop (``what``, in its log lines) says and waits while the store is lost."""

    def __init__(self, log: logging.Logger, what: str, poll_s: float) -> None:
        self.log = log
        self.what = what
        self.poll_s = poll_s
        self.lost = False
        self._wait_s = poll_s

    def failed(self, problem: Exception, doing: str) -> float:
        """A pass failed: say so (once an outage, else with the traceback of ``doing``'s
        failure); returns the seconds to wait before the next pass."""
        if not is_store_lost(problem):
            self.log.error("%s", doing, exc_info=problem)
            return self.poll_s
        if not self.lost:
            self.lost = True
            lines = str(problem).strip().splitlines()
            said = lines[0] if lines else type(problem).__name__
            self.log.warning(
                "%s: lost the store (%s): trying again until it answers", self.what, said
            )
        wait, self._wait_s = (
            self._wait_s,
            min(self._wait_s * 2, max(OUTAGE_RETRY_MAX_S, self.poll_s)),
        )
        return wait

    def answered(self) -> None:
        """A pass reached the store: if it was lost, say it answers again."""
        if self.lost:
            self.lost = False
            self._wait_s = self.poll_s
            self.log.warning("%s: the store answers again", self.what)
