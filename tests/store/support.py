"""Helpers for the store's tests: the seats of a match's result."""

from __future__ import annotations

from bisca.server.records import SeatEnd, SeatRecord


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
