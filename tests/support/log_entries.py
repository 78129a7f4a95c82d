"""Log records made by hand, for tests that write logs the referee never would."""

from __future__ import annotations

from typing import Any

from bisca import wire
from bisca.engine import ENGINE_VERSION
from bisca.server.logs import FORMAT_VERSION
from bisca.v1 import arena_pb2, log_pb2


def belote_header(match_id: str, **fields: Any) -> log_pb2.LogEntry:
    """The header record of a Belote match's log (seed 1, four seats of bots ``bot0`` to
    ``bot3``), with ``fields`` of ``LogHeader`` besides or instead."""
    fields.setdefault(
        "seats", [arena_pb2.SeatInfo(seat=seat, bot_name=f"bot{seat}") for seat in range(4)]
    )
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
