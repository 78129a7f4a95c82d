"""Leagues and tournaments: bot processes, local matches, tournaments, the league matchmaker.

``_botproc.py`` is the one mechanism every launched bot goes through (``bisca match``,
tournaments, ``bisca check-bot``); ``_local.py`` plays one match between bot commands;
``_tournament_file.py`` reads and plans a tournament, ``_tournament.py`` runs it (resumably)
with ``_progress.py`` drawing it; ``_matchmaker.py`` keeps a league of remote bots playing.
"""

from bisca.server.errors import TournamentError, TournamentFileError

from ._botproc import SAMPLE_BOTS, BotProcess, BotStartError, bot_argv, leashed
from ._launcher import UNSANDBOXED_WARNING, BotLauncher, SandboxPolicy, bot_socket, running_arena
from ._local import LocalMatch, display_name, result_table, run_local_match, run_seat_bot
from ._matchmaker import JOIN_TIMEOUT_SECONDS, POLL_SECONDS, Matchmaker, start_league
from ._progress import ProgressView
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

__all__ = [
    "FORMATS",
    "JOIN_TIMEOUT_SECONDS",
    "MAX_ATTEMPTS_PER_RUN",
    "MAX_CONCURRENCY",
    "MAX_PLANNED_MATCHES",
    "MAX_RESTARTS",
    "POLL_SECONDS",
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
    "Sandbox",
    "SandboxPolicy",
    "SandboxUnavailable",
    "SettingValue",
    "Summary",
    "TournamentError",
    "TournamentFileError",
    "TournamentRun",
    "TournamentSpec",
    "absolute_argv",
    "bot_argv",
    "bot_folders",
    "bot_socket",
    "default_data_dir",
    "derive_seed",
    "display_name",
    "find_bwrap",
    "key_line",
    "leashed",
    "limit_reason",
    "load_tournament",
    "parse_league_games",
    "parse_setting",
    "parse_tournament",
    "parse_value",
    "result_table",
    "run_local_match",
    "run_seat_bot",
    "run_tournament",
    "running_arena",
    "start_league",
    "summary_lines",
]
