"""What a version's pace counts: the matches it started in the last :data:`PACE_WINDOW`, read
from the store, for the ladder's draw and for the page that says why a version waits."""

from __future__ import annotations

from datetime import datetime

from bisca.server.store import Store, stamp

from ._ladder import PACE_WINDOW


def started_in_pace_window(store: Store, player: str, now: datetime) -> list[datetime]:
    """When ``player`` (a version, ``mybot.v3``) started each match of the window up to ``now``."""
    since = stamp(now - PACE_WINDOW)
    return [
        datetime.fromisoformat(match.created_at)
        for match in store.matches.find(None, None, player=player, since=since)
    ]
