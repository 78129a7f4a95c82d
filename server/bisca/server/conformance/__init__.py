"""``bisca check-bot``: does a bot command speak the arena's protocol?

Imports point one way, down this list:

``_checker.py``  assembles the rest: :func:`check_bot`, the run, one result per check
``_checks.py``   the checks, and which run for each game
``_judge.py``    judging every answer: its request id, its action, its time (through the
                 referee's own judge; only the checker's strictness is its own)
``_match.py``    the scripted matches, and every request sent in them
``_harness.py``  the bot's process and stream, the handshake, every wait for the bot
``_report.py``   the report's lines: results, failures, messages in brief
``_crashes.py``  the bot's own errors (tracebacks) found in its stderr
``_arena.py``    a bare, scripted Play endpoint
``_script.py``   the situations and the messages, from real engine states through the
                 referee's own builders (public as :mod:`script`, whose situations the
                 tests check)

There is one server side of the protocol: what the checker sends a bot and how it judges what
comes back are the referee's (``bisca.server.referee``: ``outgoing``, ``messages`` and the
``verify_*`` judge), so a change to the protocol is made there once
(``tests/conformance/test_one_protocol.py`` holds the two to the same answers).
"""

from . import _script as script
from ._checker import CHECKED_GAMES, DEFAULT_TIMEOUT_S, check_bot
from ._report import CheckResult, Report

__all__ = ["CHECKED_GAMES", "DEFAULT_TIMEOUT_S", "CheckResult", "Report", "check_bot", "script"]
