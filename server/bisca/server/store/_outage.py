"""A loop's store outage (operator review, findings 1 and 12): one line when the store is lost
and one when it answers again, not a traceback a pass; the wait between two tries doubles, up
to a bound, while it is lost.  No clock and no framework: the league's matchmaker (trio), the
gate's and the ladder's loops (asyncio) each sleep what it says."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

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


#: The logger of psycopg's connection pool, which says each failed try to connect: several a
#: second while the database is down (21 lines in a serve's log for one outage, more in each
#: worker's: operator re-test 3, C).
CONNECTION_RETRY_LOGGER = "psycopg.pool"
#: Of those lines, one is kept in this many seconds: the loops say the outage once when it
#: begins and once when it ends (:class:`StoreOutage`); the pool's own words add the error.
CONNECTION_RETRY_LINES_EVERY_S = 60.0


class OneLinePerInterval(logging.Filter):
    """Lets one record at WARNING or below through in ``every_s`` seconds and drops the rest,
    the next one kept saying how many were dropped; an error always goes through."""

    def __init__(self, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.every_s = every_s
        self._clock = clock
        self._kept_at: float | None = None
        self._dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.WARNING:
            return True
        now = self._clock()
        if self._kept_at is not None and now - self._kept_at < self.every_s:
            self._dropped += 1
            return False
        if self._dropped:
            said = record.getMessage()
            record.msg, record.args = f"{said} (and {self._dropped} such lines before it)", ()
            self._dropped = 0
        self._kept_at = now
        return True


def quiet_connection_retries() -> None:
    """From now on psycopg's pool says a failed try to connect once a minute, not at each try
    (``bisca serve`` and ``bisca worker`` on a PostgreSQL store; once is enough, again is
    harmless)."""
    pool = logging.getLogger(CONNECTION_RETRY_LOGGER)
    if not any(isinstance(one, OneLinePerInterval) for one in pool.filters):
        pool.addFilter(OneLinePerInterval(CONNECTION_RETRY_LINES_EVERY_S))
