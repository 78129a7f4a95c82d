"""``bisca check-bot``: does a bot command speak the arena's protocol?

``_arena.py`` serves a bare, scripted Play endpoint; ``_script.py`` builds the situations and
the messages from real engine states (public as :mod:`script`, whose situations the tests
check); ``_checker.py`` runs the bot through them and judges
every answer; the report is what ``bisca check-bot`` prints.
"""

from . import _script as script
from ._checker import (
    CHECKED_GAMES,
    DEFAULT_TIMEOUT_S,
    CheckResult,
    Report,
    check_bot,
)

__all__ = ["CHECKED_GAMES", "DEFAULT_TIMEOUT_S", "CheckResult", "Report", "check_bot", "script"]
