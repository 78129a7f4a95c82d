"""Leagues and tournaments: bot processes, local matches, tournaments, the league matchmaker.

``_botproc.py`` is the one mechanism every launched bot goes through (``bisca match``,
tournaments, ``bisca check-bot``); ``_local.py`` plays one match between bot commands;
``_tournament_file.py`` reads and plans a tournament, ``_tournament.py`` runs it (resumably)
with ``_progress.py`` drawing it; ``_queue.py``, ``_distributed.py`` and ``_worker.py`` spread
it over machines (a PostgreSQL store, its procrastinate queue, ``bisca worker``);
``_matchmaker.py`` keeps a league of remote bots playing.
"""

from bisca.server.errors import TournamentError, TournamentFileError

from ._botproc import SAMPLE_BOTS, BotProcess, BotStartError, bot_argv, leashed
from ._distributed import (
    Standing,
    Submission,
    distributed_summary_lines,
    run_distributed,
    standing,
    status_lines,
    submit_tournament,
)
from ._launcher import UNSANDBOXED_WARNING, BotLauncher, SandboxPolicy, bot_socket, running_arena
from ._local import LocalMatch, display_name, result_table, run_local_match, run_seat_bot
from ._matchmaker import JOIN_TIMEOUT_SECONDS, POLL_SECONDS, Matchmaker, start_league
from ._progress import ProgressView
from ._queue import (
    DEFAULT_LEASE_SECONDS,
    PLAY_TASK,
    QUEUE,
    QueueState,
    ensure_queue_schema,
    queue_app,
    require_shared,
    retry_stalled,
)
from ._sandbox import (
    SOCKET_IN_SANDBOX,
    Limits,
    Sandbox,
    SandboxUnavailable,
    absolute_argv,
    bot_folders,
    find_bwrap,
    limit_reason,
)
from ._settings import SettingValue, parse_league_games, parse_setting, parse_value
from ._tournament import (
    MAX_ATTEMPTS_PER_RUN,
    MAX_RESTARTS,
    Summary,
    TournamentRun,
    default_data_dir,
    run_tournament,
    summary_lines,
)
from ._tournament_file import (
    FORMATS,
    MAX_CONCURRENCY,
    MAX_PLANNED_MATCHES,
    BotEntry,
    TournamentSpec,
    derive_seed,
    key_line,
    load_tournament,
    parse_tournament,
)
from ._worker import CUT_OFF_BY_A_WORKER, Worker, WorkerOptions, play_planned, run_worker

__all__ = [
    "CUT_OFF_BY_A_WORKER",
    "DEFAULT_LEASE_SECONDS",
    "FORMATS",
    "JOIN_TIMEOUT_SECONDS",
    "MAX_ATTEMPTS_PER_RUN",
    "MAX_CONCURRENCY",
    "MAX_PLANNED_MATCHES",
    "MAX_RESTARTS",
    "PLAY_TASK",
    "POLL_SECONDS",
    "QUEUE",
    "SAMPLE_BOTS",
    "SOCKET_IN_SANDBOX",
    "UNSANDBOXED_WARNING",
    "BotEntry",
    "BotLauncher",
    "BotProcess",
    "BotStartError",
    "Limits",
    "LocalMatch",
    "Matchmaker",
    "ProgressView",
    "QueueState",
    "Sandbox",
    "SandboxPolicy",
    "SandboxUnavailable",
    "SettingValue",
    "Standing",
    "Submission",
    "Summary",
    "TournamentError",
    "TournamentFileError",
    "TournamentRun",
    "TournamentSpec",
    "Worker",
    "WorkerOptions",
    "absolute_argv",
    "bot_argv",
    "bot_folders",
    "bot_socket",
    "default_data_dir",
    "derive_seed",
    "display_name",
    "distributed_summary_lines",
    "ensure_queue_schema",
    "find_bwrap",
    "key_line",
    "leashed",
    "limit_reason",
    "load_tournament",
    "parse_league_games",
    "parse_setting",
    "parse_tournament",
    "parse_value",
    "play_planned",
    "queue_app",
    "require_shared",
    "result_table",
    "retry_stalled",
    "run_distributed",
    "run_local_match",
    "run_seat_bot",
    "run_tournament",
    "run_worker",
    "running_arena",
    "standing",
    "start_league",
    "status_lines",
    "submit_tournament",
    "summary_lines",
]
