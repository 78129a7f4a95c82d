"""Matches between local bot commands: one (``bisca match``), a tournament, a tournament spread
over machines.

``_arena.py`` runs an in-process server whose bots the sandbox (:mod:`bisca.server.sandbox`)
launches; ``_local.py`` plays one match between bot commands in it; ``_tournament_file.py``
reads and plans a tournament, ``_tournament.py`` runs it (resumably) with ``_progress.py``
drawing it and ``_fingerprints.py`` naming a bot changed between two runs; ``_queue.py``,
``_distributed.py`` and ``_worker.py`` spread it over machines (a PostgreSQL store, its
procrastinate queue, ``bisca worker``).
"""

from ._arena import running_arena
from ._distributed import (
    distributed_summary_lines,
    run_distributed,
    standing,
    status_lines,
    submit_tournament,
)
from ._fingerprints import FINGERPRINTS
from ._local import LocalMatch, play_launched, result_table, run_local_match
from ._progress import ProgressView
from ._queue import (
    DEFAULT_LEASE_SECONDS,
    LADDER_TASK,
    ensure_queue_schema,
    queue_app,
    queue_ladder_pairing,
    require_shared,
)
from ._tournament import (
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
from ._worker import CUT_OFF_BY_A_WORKER, WorkerOptions, run_worker

__all__ = [
    "CUT_OFF_BY_A_WORKER",
    "DEFAULT_LEASE_SECONDS",
    "FINGERPRINTS",
    "LADDER_TASK",
    "LocalMatch",
    "ProgressView",
    "Summary",
    "TournamentSpec",
    "WorkerOptions",
    "bot_command_problems",
    "default_data_dir",
    "derive_seed",
    "distributed_summary_lines",
    "ensure_queue_schema",
    "key_line",
    "load_tournament",
    "parse_tournament",
    "planned_seed",
    "play_launched",
    "queue_app",
    "queue_ladder_pairing",
    "replay_command",
    "require_shared",
    "result_table",
    "run_distributed",
    "run_local_match",
    "run_tournament",
    "run_worker",
    "running_arena",
    "standing",
    "status_lines",
    "submit_tournament",
    "summary_lines",
]
