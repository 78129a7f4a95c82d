"""The referee: bots' connections, the matches they play, and the clocks (all trio).

The transport edge calls the :class:`Referee`'s three entry points (``connection_opened``,
``message_received``, ``connection_closed``); each match is a :class:`MatchRunner` in the
referee's nursery that asks the engine what is legal, logs every step (``_journal.py``) and
records the result in the store.  Nothing here knows gRPC.
"""

from . import _outgoing as outgoing
from ._clock import ClockSettings, Policy, SeatClock, clock_settings, parse_policy
from ._connection import Connection, Inbound, Malformed, Send, TooLarge
from ._match import (
    MATCH_LINES_LOGGER,
    MATCH_LOGGER,
    MAX_REJECTIONS,
    MatchHost,
    MatchPlan,
    MatchRunner,
    Pending,
    Seat,
    clock_message,
    result_message,
    status_message,
    status_of_message,
)
from ._referee import (
    MAX_BOT_MESSAGE_BYTES,
    MAX_SEED,
    PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
    SERVER_VERSION,
    MatchQueue,
    Referee,
    ServerOptions,
)
from ._throttle import FREE_FAILURES, MAX_DELAY_S, WrongTokenThrottle, peer_address

__all__ = [
    "FREE_FAILURES",
    "MATCH_LINES_LOGGER",
    "MATCH_LOGGER",
    "MAX_BOT_MESSAGE_BYTES",
    "MAX_DELAY_S",
    "MAX_REJECTIONS",
    "MAX_SEED",
    "PROTOCOL_VERSION",
    "PROTOCOL_VERSIONS",
    "SERVER_VERSION",
    "ClockSettings",
    "Connection",
    "Inbound",
    "Malformed",
    "MatchHost",
    "MatchPlan",
    "MatchQueue",
    "MatchRunner",
    "Pending",
    "Policy",
    "Referee",
    "Seat",
    "SeatClock",
    "Send",
    "ServerOptions",
    "TooLarge",
    "WrongTokenThrottle",
    "clock_message",
    "clock_settings",
    "outgoing",
    "parse_policy",
    "peer_address",
    "result_message",
    "status_message",
    "status_of_message",
]
