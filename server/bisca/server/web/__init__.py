"""The browser app: an HTTP and WebSocket gateway on the arena's asyncio loop, and its pages.

``_app.py`` serves the app (the API, the static files of ``static/``, the pages' routes);
``_api.py`` is the JSON API, protobuf's canonical JSON of the ``bisca.v1`` messages;
``_backend.py`` is what it reads and runs through (the arena's referee, or a data directory's
store alone); ``_replay.py`` turns a match log into verified frames; ``_table.py`` is a seat
for a person, played as a bot client of the arena.
"""

from ._app import STATIC, parse_http_address, serving_web, web_application
from ._backend import Backend, Viewer, data_backend
from ._guards import Scheme, WebOptions, tls_context
from ._json import Problem, from_json, to_json
from ._ladder import version_ladder_page
from ._replay import replay_json, verdict_json
from ._table import (
    JOIN_TIMEOUT_S,
    MAX_PERSON_CLOCK,
    MAX_PERSON_LENGTH,
    MAX_TABLES,
    PACING_ALLOWANCE_MS,
    PERSON_CLOCK,
    TOKEN_AFTER_END_S,
    Table,
    TableLimits,
    TableRequest,
    Tables,
    TableStatus,
    illegal_actions,
    table_request,
)

__all__ = [
    "JOIN_TIMEOUT_S",
    "MAX_PERSON_CLOCK",
    "MAX_PERSON_LENGTH",
    "MAX_TABLES",
    "PACING_ALLOWANCE_MS",
    "PERSON_CLOCK",
    "STATIC",
    "TOKEN_AFTER_END_S",
    "Backend",
    "Problem",
    "Scheme",
    "Table",
    "TableLimits",
    "TableRequest",
    "TableStatus",
    "Tables",
    "Viewer",
    "WebOptions",
    "data_backend",
    "from_json",
    "illegal_actions",
    "parse_http_address",
    "replay_json",
    "serving_web",
    "table_request",
    "tls_context",
    "to_json",
    "verdict_json",
    "version_ladder_page",
    "web_application",
]
