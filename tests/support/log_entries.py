"""Log records made by hand, for tests that write logs the referee never would."""

from __future__ import annotations

from typing import Any

from bisca import wire
from bisca.engine import ENGINE_VERSION
from bisca.server.logs import FORMAT_VERSION
from bisca.v1 import log_pb2


def belote_header(match_id: str, **fields: Any) -> log_pb2.LogEntry:
    """The header record of a Belote match's log (seed 1), with ``fields`` of ``LogHeader``
    besides (no seats unless they are given)."""
    return log_pb2.LogEntry(
        header=log_pb2.LogHeader(
            format_version=FORMAT_VERSION,
            engine_version=ENGINE_VERSION,
            match_id=match_id,
            game=wire.game_enum("belote"),
            seed=1,
            **fields,
        )
    )
