"""Bot processes and their sandbox: how the arena launches a bot and keeps it for a match.

``_sandbox.py`` shuts a bot in (bubblewrap, a uid of its own, rlimits), with ``_seccomp.py``
(the system calls it may not make), ``_ownfolder.py`` (which folders may be a bot's own) and
``_treelimits.py`` (one CPU and one memory budget for all of a bot's processes);
``_botproc.py`` is the one mechanism every launched bot goes through (``bisca match``,
tournaments, ``bisca check-bot``, the web app's tables): its logs, its leash, stopping it;
``_launcher.py`` makes the processes of one arena's bots, sandboxed unless the operator opts
out, each behind a door of its own into the arena (``_doors.py``); ``_seat.py`` keeps a bot
process in its seat for a match. The room knows the referee's match (to seat a bot in it) but
neither the transport nor anything that runs tournaments or leagues: those rooms, the
conformance checker and the web app build on it.
"""

from ._botproc import (
    SAMPLE_BOTS,
    SCRIPT_SUFFIXES,
    BotProcess,
    BotStartError,
    bot_argv,
    cannot_start,
    quiet_exit_hint,
    with_start_hint,
)
from ._doors import Door, Doors, SharedDoor
from ._fingerprint import fingerprint, fingerprint_folder
from ._launcher import UNSANDBOXED_WARNING, BotLauncher, SandboxPolicy, bot_socket, doors_folder
from ._sandbox import (
    NODE_SDK_PACKAGE,
    PACKAGE_JSON_BYTES,
    Limits,
    SandboxUnavailable,
    absolute_argv,
    argv_from,
    bot_folders,
    find_bwrap,
)
from ._seat import run_seat_bot

__all__ = [
    "NODE_SDK_PACKAGE",
    "PACKAGE_JSON_BYTES",
    "SAMPLE_BOTS",
    "SCRIPT_SUFFIXES",
    "UNSANDBOXED_WARNING",
    "BotLauncher",
    "BotProcess",
    "BotStartError",
    "Door",
    "Doors",
    "Limits",
    "SandboxPolicy",
    "SandboxUnavailable",
    "SharedDoor",
    "absolute_argv",
    "argv_from",
    "bot_argv",
    "bot_folders",
    "bot_socket",
    "cannot_start",
    "doors_folder",
    "find_bwrap",
    "fingerprint",
    "fingerprint_folder",
    "quiet_exit_hint",
    "run_seat_bot",
    "with_start_hint",
]
