"""Server-supplied text made safe to show the bot's author.

Error messages, match and request ids, bot names, reasons and gRPC status details all come from
the server, and the SDK writes them to the author's terminal (its log lines on stderr, the
exceptions :func:`~bisca.client.run` raises, ``bisca bot``'s last line).  Escape sequences in
them could retitle the terminal, write the clipboard (OSC 52), clear the screen or move the
cursor to overprint a fake "match finished" line.  So every such text passes through
:func:`printable`, one function for every place:

* the SDK's log lines: :class:`PrintableFilter` is on the ``"bisca.client"`` logger (the only
  logger the SDK writes to), and cleans every record's message and string arguments, so no
  log call can forget it;
* the messages of :class:`~bisca.client.BotRejected`, :class:`~bisca.client.BotCrashed` and
  :class:`~bisca.client.ConnectionLost` (the raw values stay in their attributes, e.g.
  ``BotRejected.message``), what the session prints on stderr when the bot's code raises, and
  the last line ``bisca bot`` prints.

The values handed to the bot and its hooks stay as the server sent them.

:func:`printable` is :func:`bisca.wire.printable`, the rule the server applies to what bots send.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bisca.wire import printable

__all__ = ["PrintableFilter", "printable"]


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, BaseException):  # its text may quote the server
        return printable(str(value))
    return value


class PrintableFilter(logging.Filter):
    """Passes every record, with :func:`printable` applied to its message and to its string
    (and exception) arguments: numbers and other values keep their ``%d``/``%r`` formatting."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = _clean(record.msg)
        if isinstance(record.args, Mapping):
            record.args = {key: _clean(value) for key, value in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(_clean(value) for value in record.args)
        return True


logger = logging.getLogger("bisca.client")
if not any(isinstance(existing, PrintableFilter) for existing in logger.filters):
    logger.addFilter(PrintableFilter())
