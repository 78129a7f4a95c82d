"""The store: bots, matches and their results, ratings and tournament plans.

One SQLite file in the data directory (``_sqlite.py``), its schema as numbered migrations
(``_migrations.py``), the rating model (``_ratings.py``) and the leaderboard built on it
(``_leaderboard.py``).  The records it keeps are :mod:`bisca.server.records`.
"""

from bisca.server.errors import StoreError

from ._leaderboard import (
    RESULT_UNITS,
    LeaderboardRow,
    leaderboard_row,
    render_csv,
    render_json,
    render_table,
    t_quantile_975,
)
from ._migrations import MIGRATIONS
from ._ratings import INITIAL, MODEL, Rating, RatingChange, Side, rate_match, side_of, sides_of
from ._sqlite import Store, check_bot_name, hash_token, new_token, now, recorded_log_hashes

__all__ = [
    "INITIAL",
    "MIGRATIONS",
    "MODEL",
    "RESULT_UNITS",
    "LeaderboardRow",
    "Rating",
    "RatingChange",
    "Side",
    "Store",
    "StoreError",
    "check_bot_name",
    "hash_token",
    "leaderboard_row",
    "new_token",
    "now",
    "rate_match",
    "recorded_log_hashes",
    "render_csv",
    "render_json",
    "render_table",
    "side_of",
    "sides_of",
    "t_quantile_975",
]
