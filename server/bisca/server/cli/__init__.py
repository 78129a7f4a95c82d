"""The ``bisca`` command line (``bisca.server.cli:main``), one module per command group:
``_serve``, ``_bots``, ``_match``, ``_league`` (tournaments, leaderboards), ``_replay``,
``_watch``, ``_check_bot``, ``_demo``; ``_args`` holds what they share."""

from ._exits import EXIT_DIVERGES, EXIT_INCOMPLETE, EXIT_OK, EXIT_UNREADABLE, EXIT_UNTRUSTED
from ._main import build_parser, main

__all__ = [
    "EXIT_DIVERGES",
    "EXIT_INCOMPLETE",
    "EXIT_OK",
    "EXIT_UNREADABLE",
    "EXIT_UNTRUSTED",
    "build_parser",
    "main",
]
