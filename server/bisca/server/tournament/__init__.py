"""Matches between local bot commands: one (``bisca match``), a tournament, a tournament spread
over machines.

``_arena.py`` runs an in-process server whose bots the sandbox (:mod:`bisca.server.sandbox`)
launches; ``_local.py`` plays one match between bot commands in it; ``_tournament_file.py``
reads and plans a tournament, ``_tournament.py`` runs it (resumably) with ``_progress.py``
drawing it and ``_fingerprints.py`` naming a bot changed between two runs; ``_queue.py``,
``_distributed.py`` and ``_worker.py`` spread it over machines (a PostgreSQL store, its
procrastinate queue, ``bisca worker``), behind a surface of their own,
:mod:`bisca.server.tournament.distributed`: procrastinate and psycopg take a quarter of a second
to load, which ``bisca match``, ``check-bot`` or a served arena on SQLite need not pay.
"""

from ._arena import running_arena
from ._fingerprints import FINGERPRINTS
from ._local import LocalMatch, play_launched, result_table, run_local_match
from ._progress import ProgressView
from ._tournament import (
    DEFAULT_LEASE_SECONDS,
    Summary,
    bot_command_problems,
    default_data_dir,
    replay_command,
    run_tournament,
    summary_lines,
)
from ._tournament_file import (
    TournamentSpec,
    derive_seed,
    key_line,
    load_tournament,
    parse_tournament,
    planned_seed,
)

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "FINGERPRINTS",
    "LocalMatch",
    "ProgressView",
    "Summary",
    "TournamentSpec",
    "bot_command_problems",
    "default_data_dir",
    "derive_seed",
    "key_line",
    "load_tournament",
    "parse_tournament",
    "planned_seed",
    "play_launched",
    "replay_command",
    "result_table",
    "run_local_match",
    "run_tournament",
    "running_arena",
    "summary_lines",
]
