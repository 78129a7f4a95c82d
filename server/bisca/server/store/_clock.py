"""The store's timestamps: UTC, to the millisecond, as RFC 3339 text (sorting as text sorts
them in time)."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> str:
    return stamp(datetime.now(UTC))


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
