"""Helpers for the store's tests: the seats of a match's result, and a data directory an
older Bisca left."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from bisca.server.records import SeatEnd, SeatRecord
from bisca.server.store import MIGRATIONS, stamp
from bisca.server.store import _log_repository as log_repository

CLOCK: dict[str, int | str] = {"move_ms": 1000, "bank_ms": 0, "policy": "default"}


def seat(number: int, bot: str, score: int, rank: int, forfeited: bool = False) -> SeatRecord:
    return SeatRecord(
        seat=number,
        bot_name=bot,
        bot_version="",
        score=score,
        rank=rank,
        end=SeatEnd.FORFEITED if forfeited else SeatEnd.COMPLETED,
        forfeit_reason="timeout" if forfeited else "",
        timeouts=0,
        defaults_played=0,
    )


def output_kept_at(monkeypatch: pytest.MonkeyPatch, moment: datetime) -> None:
    """Seats' output put in the store from now on is dated ``moment`` (the ladder forgets it
    by its age)."""
    monkeypatch.setattr(log_repository, "now", lambda: stamp(moment))


def old_data_dir(path: Path, schema: int = 2) -> Path:
    """A data directory as Bisca left it with only migrations 1 to ``schema``, with rows in
    it."""
    path.mkdir()
    db = sqlite3.connect(path / "bisca.sqlite3", isolation_level=None)
    for number, script in enumerate(MIGRATIONS[:schema], start=1):
        db.execute("BEGIN")
        for statement in script.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {number}")
        db.execute("COMMIT")
    db.execute(
        "INSERT INTO bots (name, token_hash, created_at) VALUES ('old', 'hash', '2026-01-01Z')"
    )
    db.execute(
        "INSERT INTO matches (id, game, settings, seed, status, bots, clock, steps, created_at,"
        " finished_at, log_path, log_hash) VALUES ('m-old', 'belote', '{}', 5, 'finished', ?, ?,"
        " 120, '2026-01-01Z', '2026-01-01Z', 'matches/m-old/match.binlog', 'abc')",
        (json.dumps(["old", "x", "old", "x"]), json.dumps(CLOCK)),
    )
    for number, bot in enumerate(["old", "x", "old", "x"]):
        db.execute(
            "INSERT INTO match_seats (match_id, seat, bot_name, score, rank, forfeited)"
            " VALUES ('m-old', ?, ?, ?, ?, 0)",
            (number, bot, 300 if bot == "old" else 200, 0 if bot == "old" else 2),
        )
    db.close()
    return path
