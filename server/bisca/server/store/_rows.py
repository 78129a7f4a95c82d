"""Rows as typed values: each column read as the type its migration gives it.

The two drivers hand back plain values (SQLite's and PostgreSQL's integers, doubles, text and
bytes; JSON is kept as text); each is checked as it is read, so a repository builds its
records from typed values, and a column that holds something else (a damaged store) is a
:class:`StoreError` naming it rather than a wrong record.
"""

from __future__ import annotations

import json

from bisca.server.errors import StoreError
from bisca.server.records import (
    MatchRecord,
    MatchStatus,
    RecordedMatch,
    SeatEnd,
    SeatOutcome,
    SeatRecord,
)

from ._backend import Connection, Row


def _wrong(column: str, value: object, expected: str) -> StoreError:
    return StoreError(f"the store's column {column} holds {type(value).__name__}, not {expected}")


def text(row: Row, column: str) -> str:
    value = row[column]
    if not isinstance(value, str):
        raise _wrong(column, value, "text")
    return value


def optional_text(row: Row, column: str) -> str | None:
    value = row[column]
    if value is not None and not isinstance(value, str):
        raise _wrong(column, value, "text")
    return value


def integer(row: Row, column: str) -> int:
    value = row[column]
    if not isinstance(value, int):
        raise _wrong(column, value, "an integer")
    return value


def optional_integer(row: Row, column: str) -> int | None:
    return None if row[column] is None else integer(row, column)


def real(row: Row, column: str) -> float:
    value = row[column]
    # A REAL column gives back floats; an integer (a value written as one) is a float too.
    if not isinstance(value, int | float):
        raise _wrong(column, value, "a number")
    return float(value)


def optional_real(row: Row, column: str) -> float | None:
    return None if row[column] is None else real(row, column)


def flag(row: Row, column: str) -> bool:
    """A yes/no kept as an integer (0 or 1)."""
    return integer(row, column) != 0


def data(row: Row, column: str) -> bytes:
    value = row[column]
    if not isinstance(value, bytes | bytearray | memoryview):
        raise _wrong(column, value, "bytes")
    return bytes(value)


def optional_data(row: Row, column: str) -> bytes | None:
    return None if row[column] is None else data(row, column)


def json_object(row: Row, column: str) -> dict[str, object]:
    value: object = json.loads(text(row, column))
    if not isinstance(value, dict):
        raise _wrong(column, value, "a JSON object")
    return {str(key): item for key, item in value.items()}


def json_names(row: Row, column: str) -> list[str]:
    """A JSON list of names (a match's or a planned match's bots)."""
    value: object = json.loads(text(row, column))
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise _wrong(column, value, "a JSON list of names")
    return [str(name) for name in value]


def json_clock(row: Row, column: str) -> dict[str, int | str]:
    """A match's clock settings: numbers of milliseconds and words (a JSON object)."""
    clock = json_object(row, column)
    settings: dict[str, int | str] = {}
    for key, value in clock.items():
        if not isinstance(value, int | str):
            raise _wrong(f"{column}.{key}", value, "a number or text")
        settings[key] = value
    return settings


def seat_record(row: Row) -> SeatRecord:
    return SeatRecord(
        seat=integer(row, "seat"),
        bot_name=text(row, "bot_name"),
        bot_version=text(row, "bot_version"),
        score=integer(row, "score"),
        rank=integer(row, "rank"),
        end=SeatEnd.FORFEITED if flag(row, "forfeited") else SeatEnd.COMPLETED,
        forfeit_reason=text(row, "forfeit_reason"),
        timeouts=integer(row, "timeouts"),
        defaults_played=integer(row, "defaults_played"),
        crashes=integer(row, "crashes"),
        illegal_moves=integer(row, "illegal_moves"),
    )


def match_record(row: Row, seats: list[SeatRecord]) -> MatchRecord:
    return MatchRecord(
        id=text(row, "id"),
        game=text(row, "game"),
        settings=json_object(row, "settings"),
        seed=integer(row, "seed"),
        status=MatchStatus(text(row, "status")),
        bots=json_names(row, "bots"),
        clock=json_clock(row, "clock"),
        reason=text(row, "reason"),
        steps=integer(row, "steps"),
        created_at=text(row, "created_at"),
        finished_at=optional_text(row, "finished_at"),
        log_path=optional_text(row, "log_path"),
        log_hash=optional_text(row, "log_hash"),
        rated=flag(row, "rated"),
        seats=seats,
    )


def seats_of(db: Connection, match_id: str) -> list[SeatRecord]:
    """A match's per-seat results, by seat (read by the matches and, to rate a tournament's
    matches in plan order, the ratings)."""
    rows = db.execute(
        "SELECT * FROM match_seats WHERE match_id = ? ORDER BY seat", (match_id,)
    ).fetchall()
    return [seat_record(row) for row in rows]


def recorded_matches(db: Connection, only: str | None = None) -> dict[str, RecordedMatch]:
    """Every match recorded (or the one match ``only``, if it is), with its log's final hash
    and its seats' outcomes: what ``replay verify`` holds a log to
    (``bisca.server.logs.verify``)."""
    matches = "SELECT id, log_hash FROM matches"
    seat_rows = "SELECT match_id, seat, bot_name, score, rank, forfeited FROM match_seats"
    values: list[object] = []
    if only is not None:
        matches += " WHERE id = ?"
        seat_rows += " WHERE match_id = ?"
        values = [only]
    seats: dict[str, list[SeatOutcome]] = {}
    for row in db.execute(seat_rows + " ORDER BY match_id, seat", values).fetchall():
        seats.setdefault(text(row, "match_id"), []).append(
            SeatOutcome(
                integer(row, "seat"),
                text(row, "bot_name"),
                integer(row, "score"),
                integer(row, "rank"),
                flag(row, "forfeited"),
            )
        )
    return {
        text(row, "id"): RecordedMatch(
            optional_text(row, "log_hash"), tuple(seats.get(text(row, "id"), ()))
        )
        for row in db.execute(matches, values).fetchall()
    }
