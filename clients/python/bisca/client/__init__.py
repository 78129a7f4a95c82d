"""The Python bot SDK: write a bot as one function from an action request to an action.

    from bisca.client import Request, run

    def first(request: Request) -> object:
        return request.legal_actions[0]

    run(first, name="first")  # address and token from BISCA_ADDRESS / BISCA_TOKEN

A :class:`Request` carries the seat's complete observation and its legal actions as *engine*
values (``bisca.engine.belote`` ...), so a bot can be stateless; the optional hooks
(``on_match_start``, ``on_event``, ``on_match_end``, ``on_rejected``) let it follow the table.
:func:`run` does the connection (plaintext, or TLS for ``grpcs://`` addresses and CA files),
the hello, answering, retries after a rejection, reconnects, checking each deal against its
commitment (``MatchEnd.deal_verified``) and logging (logger ``"bisca.client"``; on stderr at
INFO when the application configured none).  An exception in the bot's code is printed with
its traceback and ends the bot (:class:`BotCrashed`), and so does an answer that is not an
action of the game (``None``, ...), unless ``run(..., keep_going=True)`` asks for a fallback
action instead.
:class:`Session` is the same protocol logic without a network, for tests and for embedding the
SDK in another transport.
"""

from ._session import Session
from ._tls import Target, target_for
from ._transport import CHANNEL_OPTIONS, WELCOME_TIMEOUT, Backoff, run
from ._types import (
    Bot,
    BotCrashed,
    BotRejected,
    Clock,
    ClockSettings,
    ConnectionLost,
    MatchEnd,
    MatchStart,
    OnEvent,
    OnMatchEnd,
    OnMatchStart,
    OnRejected,
    Rejection,
    Request,
    SeatInfo,
    SeatResult,
)

__all__ = [
    "CHANNEL_OPTIONS",
    "WELCOME_TIMEOUT",
    "Backoff",
    "Bot",
    "BotCrashed",
    "BotRejected",
    "Clock",
    "ClockSettings",
    "ConnectionLost",
    "MatchEnd",
    "MatchStart",
    "OnEvent",
    "OnMatchEnd",
    "OnMatchStart",
    "OnRejected",
    "Rejection",
    "Request",
    "SeatInfo",
    "SeatResult",
    "Session",
    "Target",
    "run",
    "target_for",
]
