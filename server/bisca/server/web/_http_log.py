"""The log of the app's connections, where a stranger's malformed requests are counted
instead of written out one by one.

aiohttp answers a request its parser refuses (a bad request line, a header line over 8,190
bytes, more than 100 headers, a bad ``Content-Length``) with 400 and logs it as an ERROR with
its traceback, which quotes up to ~100 bytes of what was sent: 18 bytes sent wrote 579 bytes
of log, ~1 MB/s from one client with no account (review s56b, finding 3), burying real errors
under text the attacker chose.  :class:`RequestLog` is the logger aiohttp's connections are
given instead: such a refusal (or a body the parser could not decode) is counted by the
parser's error class, and the counts are said
in one line per :data:`BAD_REQUESTS_EVERY_S` at most, without addresses or bytes the client
chose.  Every other record aiohttp writes (a failure that got past the app's middleware, say)
goes to aiohttp's own logger as it would have, traceback included.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Mapping

from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.log import server_logger
from aiohttp.web_protocol import RequestPayloadError

#: The least time between two lines counting malformed requests.
BAD_REQUESTS_EVERY_S = 60.0


class RequestLog(logging.LoggerAdapter[logging.Logger]):
    """aiohttp's connection logger (``AppRunner(logger=...)``), on the loop the app runs on.

    A malformed request's record (its ``exc_info`` an aiohttp parser error) is counted; the
    first of a quiet spell starts a timer that says the counts :data:`BAD_REQUESTS_EVERY_S`
    later, in one line of ``summary``.  :meth:`close` says what is left."""

    def __init__(self, summary: logging.Logger, every_s: float | None = None) -> None:
        super().__init__(server_logger)
        self._summary = summary
        self._every_s = BAD_REQUESTS_EVERY_S if every_s is None else every_s
        self._refused: Counter[str] = Counter()
        self._timer: asyncio.TimerHandle | None = None

    def log(
        self,
        level: int,
        msg: object,
        *args: object,
        exc_info: logging._ExcInfoType | None = None,
        stack_info: bool = False,
        stacklevel: int = 1,
        extra: Mapping[str, object] | None = None,
        **kwargs: object,
    ) -> None:
        if isinstance(exc_info, HttpProcessingError | RequestPayloadError):
            # The class names aiohttp's parser error (BadStatusLine, LineTooLong...; a body it
            # could not decode, read once more as its connection closes): never the client's
            # bytes, which the exception's message quotes.
            self._refused[type(exc_info).__name__] += 1
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(self._every_s, self._say)
            return
        super().log(
            level,
            msg,
            *args,
            exc_info=exc_info,
            stack_info=stack_info,
            stacklevel=stacklevel,
            extra=extra,
            **kwargs,
        )

    def _say(self) -> None:
        self._timer = None
        if not self._refused:
            return
        kinds = ", ".join(f"{count} {kind}" for kind, count in self._refused.most_common())
        self._summary.warning(
            "%d malformed HTTP requests answered 400 since the last count (%s)",
            self._refused.total(),
            kinds,
        )
        self._refused.clear()

    def close(self) -> None:
        """The counts not said yet, said now (the app is ending)."""
        if self._timer is not None:
            self._timer.cancel()
        self._say()
