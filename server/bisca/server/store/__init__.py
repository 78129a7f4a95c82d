"""The store: bots, matches and their results, ratings and tournament plans.

A :class:`Store` (``_store.py``) is one back end and its connection (``_database.py``) shared by
repositories, one by concern: ``store.bots`` (``_bot_repository.py``), ``store.matches``,
``store.ratings``, ``store.tournaments``, ``store.workers``, ``store.logs``, and a league's
accounts with their tokens (``store.accounts``, ``_account_repository.py``, secrets hashed by
``_secrets.py``) and their bots' versions (``store.versions``, ``_version_repository.py``); they
read rows as typed values (``_rows.py``) and return records (``_records.py``, and
:mod:`bisca.server.records`). Two back ends (``_backend.py``): one SQLite file in the data
directory (``_sqlite.py``, the default) or a PostgreSQL database shared by the machines of a league
(``_postgresql.py``); its schema as numbered migrations (``_migrations.py``), the rating model
(``_ratings.py``) and the leaderboard built on it (``_leaderboard.py``), and the standings counted
from match records: wins, draws, losses and head to head (``_standings.py``); its timestamps
(``_clock.py``).
"""

from bisca.server.errors import StoreError

from ._account_repository import (
    MAX_LABEL,
    AccountError,
    AccountRepository,
    NameTaken,
    TooManyTokens,
    check_account_name,
    check_password,
    check_token_label,
)
from ._backend import StoreKind
from ._bot_repository import BotRepository, check_bot_name, hash_token, new_token
from ._clock import now, stamp
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
from ._log_repository import LogRepository
from ._match_repository import MatchRepository
from ._migrations import MIGRATIONS
from ._outage import (
    OUTAGE_RETRY_MAX_S,
    OneLinePerInterval,
    StoreOutage,
    is_store_lost,
    quiet_connection_retries,
)
from ._rating_repository import RatingRepository
from ._ratings import INITIAL, MODEL, Rating, RatingChange, Side, rate_match, side_of, sides_of
from ._records import (
    MAX_SEAT_OUTPUT,
    VERSION_MOVES,
    AccountRecord,
    AccountStatus,
    BotVersionRecord,
    InviteRecord,
    RatingUpdate,
    SeatOutput,
    StepRecord,
    StoredLog,
    StoredTournament,
    TokenKind,
    TokenRecord,
    UnfinishedMatch,
    VersionKind,
    VersionState,
    VersionStep,
    WorkerRecord,
)
from ._secrets import ACCOUNT_TOKEN_PREFIX
from ._sqlite import recorded_results
from ._standings import (
    MARGIN_GAMES,
    RESULT_LABELS,
    Incidents,
    PlayerTotals,
    Result,
    Standings,
    Tally,
    crosstable_cells,
    match_results,
    standings,
    standings_rows,
)
from ._store import (
    POSTGRESQL_SCHEMES,
    Store,
    note_store_used,
    open_store,
    refuse_a_store_used_elsewhere,
    without_password,
)
from ._tournament_repository import TournamentRepository
from ._version_repository import (
    MAX_STEP_OUTPUT,
    SubmittedTooMany,
    TooManyLive,
    VersionError,
    VersionRepository,
    check_hosted_bot_name,
    names_a_version,
)
from ._worker_repository import WorkerRepository

__all__ = [
    "ACCOUNT_TOKEN_PREFIX",
    "INITIAL",
    "MARGIN_GAMES",
    "MAX_LABEL",
    "MAX_SEAT_OUTPUT",
    "MAX_STEP_OUTPUT",
    "MIGRATIONS",
    "MODEL",
    "OUTAGE_RETRY_MAX_S",
    "POSTGRESQL_SCHEMES",
    "RESULT_LABELS",
    "RESULT_UNITS",
    "VERSION_MOVES",
    "AccountError",
    "AccountRecord",
    "AccountRepository",
    "AccountStatus",
    "BotRepository",
    "BotVersionRecord",
    "Incidents",
    "InviteRecord",
    "LeaderboardRow",
    "LogRepository",
    "MatchRepository",
    "NameTaken",
    "OneLinePerInterval",
    "PlayerTotals",
    "Rating",
    "RatingChange",
    "RatingRepository",
    "RatingUpdate",
    "Result",
    "SeatOutput",
    "Side",
    "Standings",
    "StepRecord",
    "Store",
    "StoreError",
    "StoreKind",
    "StoreOutage",
    "StoredLog",
    "StoredTournament",
    "SubmittedTooMany",
    "Tally",
    "TokenKind",
    "TokenRecord",
    "TooManyLive",
    "TooManyTokens",
    "TournamentRepository",
    "UnfinishedMatch",
    "VersionError",
    "VersionKind",
    "VersionRepository",
    "VersionState",
    "VersionStep",
    "WorkerRecord",
    "WorkerRepository",
    "check_account_name",
    "check_bot_name",
    "check_hosted_bot_name",
    "check_password",
    "check_token_label",
    "crosstable",
    "crosstable_cells",
    "hash_token",
    "is_store_lost",
    "leaderboard_row",
    "leaderboard_table",
    "match_results",
    "names_a_version",
    "new_token",
    "note_store_used",
    "now",
    "open_store",
    "quiet_connection_retries",
    "rate_match",
    "recorded_results",
    "refuse_a_store_used_elsewhere",
    "render_csv",
    "render_json",
    "render_table",
    "side_of",
    "sides_of",
    "stamp",
    "standings",
    "standings_rows",
    "t_quantile_975",
    "text_lines",
    "without_password",
]
