"""The store: bots, matches and their results, ratings and tournament plans.

One SQLite file in the data directory (``_sqlite.py``), its schema as numbered migrations
(``_migrations.py``), the rating model (``_ratings.py``) and the leaderboard built on it
(``_leaderboard.py``), and the standings counted from match records: wins, draws, losses
and head to head (``_standings.py``).  The records it keeps are :mod:`bisca.server.records`.
"""

from bisca.server.errors import StoreError

from ._leaderboard import (
    RESULT_UNITS,
    LeaderboardRow,
    crosstable,
    leaderboard_row,
    leaderboard_table,
    render_csv,
    render_json,
    render_table,
    t_quantile_975,
    text_lines,
)
from ._migrations import MIGRATIONS
from ._ratings import INITIAL, MODEL, Rating, RatingChange, Side, rate_match, side_of, sides_of
from ._sqlite import Store, check_bot_name, hash_token, new_token, now, recorded_log_hashes
from ._standings import (
    MARGIN_GAMES,
    RESULT_LABELS,
    Result,
    Standings,
    Tally,
    crosstable_cells,
    match_results,
    standings,
    standings_rows,
)

__all__ = [
    "INITIAL",
    "MARGIN_GAMES",
    "MIGRATIONS",
    "MODEL",
    "RESULT_LABELS",
    "RESULT_UNITS",
    "LeaderboardRow",
    "Rating",
    "RatingChange",
    "Result",
    "Side",
    "Standings",
    "Store",
    "StoreError",
    "Tally",
    "check_bot_name",
    "crosstable",
    "crosstable_cells",
    "hash_token",
    "leaderboard_row",
    "leaderboard_table",
    "match_results",
    "new_token",
    "now",
    "rate_match",
    "recorded_log_hashes",
    "render_csv",
    "render_json",
    "render_table",
    "side_of",
    "sides_of",
    "standings",
    "standings_rows",
    "t_quantile_975",
    "text_lines",
]
