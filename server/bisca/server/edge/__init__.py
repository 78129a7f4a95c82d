"""The transport edge: gRPC (grpc.aio) on asyncio, and the process that assembles a server.

``_transport.py`` only moves messages between sockets and the referee; ``_bridge.py`` hosts the
referee's trio run in guest mode on the same asyncio loop and crosses between the two without
blocking; ``_operator.py`` (public as ``operator``) and ``_spectator.py`` are the operator and
spectator RPCs' work in trio; ``_server.py`` puts store, referee and transport together into
one :class:`ArenaServer`; ``_doors.py`` gives each sandboxed bot a socket of its own into it.
Nothing here knows a rule of any game.
"""

from . import _operator as operator
from ._bridge import Mailbox, TrioGuest
from ._descriptors import DESCRIPTOR_RESERVE, incoming_connection_cap, raise_open_files_limit
from ._doors import (
    CALLS_LIMIT_REASON,
    DOOR_CALL_BURST,
    DOOR_CALLS_PER_S,
    DOOR_CONNECTION_BURST,
    DOOR_CONNECTIONS,
    DOOR_CONNECTIONS_PER_S,
    DOOR_CONTROL_BURST,
    DOOR_CONTROL_PER_MESSAGE_SENT,
    DOOR_CONTROL_PER_S,
    DOOR_DATA_FRAME_BURST,
    DOOR_DATA_FRAMES_PER_MESSAGE_SENT,
    DOOR_DATA_FRAMES_PER_S,
    DOOR_DESCRIPTORS,
    DOOR_STREAMS_PER_CONNECTION,
    TRAFFIC_LIMIT_REASON,
    BotDoor,
    BotDoors,
    CallBudget,
)
from ._server import (
    CUT_OFF_REASON,
    ArenaServer,
    CutOff,
    ServerConfig,
    ServerLease,
    admin_token_for,
    fail_cut_off_matches,
    running_server,
    settle_left_open,
    spectator_token_for,
)
from ._spectator import open_watch, opened_watch, stop_watching
from ._transport import (
    DOOR_UNANSWERED_STREAMS,
    MAX_UNANSWERED_PER_PEER,
    MAX_UNANSWERED_STREAMS,
    MAX_UNSENT_BYTES,
    MAX_UNSENT_MESSAGES,
    SERVER_OPTIONS,
    SERVICE,
    TRANSPORT_MAX_MESSAGE_BYTES,
    ArenaTransport,
    cannot_listen_now,
    listen_address_problem,
    parse_bot_message,
    start_grpc_server,
)

__all__ = [
    "CALLS_LIMIT_REASON",
    "CUT_OFF_REASON",
    "DESCRIPTOR_RESERVE",
    "DOOR_CALLS_PER_S",
    "DOOR_CALL_BURST",
    "DOOR_CONNECTIONS",
    "DOOR_CONNECTIONS_PER_S",
    "DOOR_CONNECTION_BURST",
    "DOOR_CONTROL_BURST",
    "DOOR_CONTROL_PER_MESSAGE_SENT",
    "DOOR_CONTROL_PER_S",
    "DOOR_DATA_FRAMES_PER_MESSAGE_SENT",
    "DOOR_DATA_FRAMES_PER_S",
    "DOOR_DATA_FRAME_BURST",
    "DOOR_DESCRIPTORS",
    "DOOR_STREAMS_PER_CONNECTION",
    "DOOR_UNANSWERED_STREAMS",
    "MAX_UNANSWERED_PER_PEER",
    "MAX_UNANSWERED_STREAMS",
    "MAX_UNSENT_BYTES",
    "MAX_UNSENT_MESSAGES",
    "SERVER_OPTIONS",
    "SERVICE",
    "TRAFFIC_LIMIT_REASON",
    "TRANSPORT_MAX_MESSAGE_BYTES",
    "ArenaServer",
    "ArenaTransport",
    "BotDoor",
    "BotDoors",
    "CallBudget",
    "CutOff",
    "Mailbox",
    "ServerConfig",
    "ServerLease",
    "TrioGuest",
    "admin_token_for",
    "cannot_listen_now",
    "fail_cut_off_matches",
    "incoming_connection_cap",
    "listen_address_problem",
    "open_watch",
    "opened_watch",
    "operator",
    "parse_bot_message",
    "raise_open_files_limit",
    "running_server",
    "settle_left_open",
    "spectator_token_for",
    "start_grpc_server",
    "stop_watching",
]
