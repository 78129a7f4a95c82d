"""The referee: bots' connections, the matches they play, and the clocks (all trio).

The transport edge calls the :class:`Referee`'s three entry points (``connection_opened``,
``message_received``, ``connection_closed``); each match is a :class:`MatchRunner` in the
referee's nursery that asks the engine what is legal, logs every step (``_journal.py``) and
records the result in the store.  Nothing here knows gRPC.

What a welcomed bot sends is judged by pure functions (``_judge.py``: a verdict, and the message
the referee answers with) and the messages it is sent are built in ``_messages.py`` and
``_outgoing.py``; ``bisca check-bot`` drives bots with those very functions.
"""

from bisca.server.records import MAX_SEED

from . import _core as core
from . import _messages as messages
from . import _outgoing as outgoing
from ._clock import (
    MAX_JOIN_TIMEOUT_S,
    ClockSettings,
    Policy,
    SeatClock,
    clock_settings,
    parse_policy,
)
from ._connection import Connection, Inbound, Malformed, Send, TooLarge
from ._core import MATCH_LOGGER, MatchCore, Seat, result_message
from ._journal import LoggedResult, logged_result
from ._judge import (
    MAX_REJECTIONS,
    PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
    Asked,
    IllegalReply,
    Judgement,
    MalformedReply,
    RefusedMessage,
    RejectedReply,
    Verdict,
    judge_reply,
    verify_action,
    verify_addressed,
    verify_hello,
    verify_inbound,
    verify_reply_message,
)
from ._match import (
    MATCH_LINES_LOGGER,
    MatchHost,
    MatchPlan,
    MatchRunner,
    Pending,
    status_message,
    status_of_message,
)
from ._messages import MAX_BOT_MESSAGE_BYTES, clock_message
from ._referee import (
    MAX_EARLY_BYTES,
    MAX_EARLY_MESSAGES,
    SERVER_VERSION,
    MatchQueue,
    Referee,
    ServerOptions,
)
from ._sealing import Deal, SealedDeals
from ._throttle import (
    DOOR_PEER,
    FREE_FAILURES,
    MAX_DELAY_S,
    MAX_WAITING_PER_PEER,
    WrongTokenThrottle,
    counted_address,
    counted_peer,
    peer_address,
)

__all__ = [
    "DOOR_PEER",
    "FREE_FAILURES",
    "MATCH_LINES_LOGGER",
    "MATCH_LOGGER",
    "MAX_BOT_MESSAGE_BYTES",
    "MAX_DELAY_S",
    "MAX_EARLY_BYTES",
    "MAX_EARLY_MESSAGES",
    "MAX_JOIN_TIMEOUT_S",
    "MAX_REJECTIONS",
    "MAX_SEED",
    "MAX_WAITING_PER_PEER",
    "PROTOCOL_VERSION",
    "PROTOCOL_VERSIONS",
    "SERVER_VERSION",
    "Asked",
    "ClockSettings",
    "Connection",
    "Deal",
    "IllegalReply",
    "Inbound",
    "Judgement",
    "LoggedResult",
    "Malformed",
    "MalformedReply",
    "MatchCore",
    "MatchHost",
    "MatchPlan",
    "MatchQueue",
    "MatchRunner",
    "Pending",
    "Policy",
    "Referee",
    "RefusedMessage",
    "RejectedReply",
    "SealedDeals",
    "Seat",
    "SeatClock",
    "Send",
    "ServerOptions",
    "TooLarge",
    "Verdict",
    "WrongTokenThrottle",
    "clock_message",
    "clock_settings",
    "core",
    "counted_address",
    "counted_peer",
    "judge_reply",
    "logged_result",
    "messages",
    "outgoing",
    "parse_policy",
    "peer_address",
    "result_message",
    "status_message",
    "status_of_message",
    "verify_action",
    "verify_addressed",
    "verify_hello",
    "verify_inbound",
    "verify_reply_message",
]
