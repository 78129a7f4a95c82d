"""A sandboxed bot's share of the CPU: below the arena's, whatever it does.

The kernel's scheduler weighs a process by its niceness; where autogroups are on
(``kernel.sched_autogroup_enabled``, the default of most distributions' kernels) it first
weighs each *session* as one, and a process's niceness only counts against the others of its
session.  So a bot whose processes each started a session of their own (``setsid``) took a
share of the machine per process: 40 of them left the arena and every other bot 1/41 of it,
failed another owner's version at its gate and slowed the server's pages a hundredfold
(review s56b).  Now:

* the arena starts each sandbox in a session of its own (not bwrap's ``--new-session``, which
  would make one the arena could not name) and weighs that session at
  :data:`BOT_NICENESS` (:func:`weigh_session`: ``/proc/PID/autogroup``); the kernel lets any
  process of a session set its weight to a niceness of 0 or more (only below 0 takes a
  privilege), so the bot's supervisor puts it back at each of its looks, every 0.2 s
  (:func:`hold_session_weight`);
* every process of the bot runs at that niceness too (``nice``, in the sandbox's command),
  which is what counts where autogroups are off;
* the seccomp filter refuses ``setsid`` (:mod:`._seccomp`), so no process of the bot leaves
  that session, and none may lower its niceness (no capability, ``RLIMIT_NICE`` 0).

A session of its own also keeps the bot from the arena's terminal, as ``--new-session`` did
(no controlling terminal: nothing to inject keystrokes into with ``TIOCSTI``).
"""

from __future__ import annotations

import errno
import logging
from pathlib import Path

log = logging.getLogger(__name__)

#: The niceness of a sandboxed bot's processes and of its session: a spinning bot gets about a
#: tenth of the weight of the arena's own session (the kernel's weight of niceness 10 is 110
#: against 1,024 at 0).
BOT_NICENESS = 10


def weigh_session(leader: int, niceness: int = BOT_NICENESS) -> bool:
    """Weigh the session (autogroup) ``leader`` leads at ``niceness``; whether it could.  A
    kernel without autogroups has no such weight (each process's niceness counts); a server
    that is not root may change one session's weight only every 100 ms, machine-wide: the bot
    then keeps the default weight of a session, one share like the arena's."""
    try:
        Path(f"/proc/{leader}/autogroup").write_text(f"{niceness}\n")
    except FileNotFoundError:
        return False  # no autogroups here (or the process has ended already)
    except OSError as problem:
        if problem.errno != errno.EAGAIN:
            log.warning("sandbox: the session of process %d kept its weight: %s", leader, problem)
        return False
    return True


def hold_session_weight(leader: int, niceness: int = BOT_NICENESS) -> None:
    """Put the weight of ``leader``'s session back at ``niceness`` if one of its processes
    changed it (read first: a change takes a lock of the whole machine's scheduler)."""
    try:
        said = Path(f"/proc/{leader}/autogroup").read_text().split()
    except OSError:
        return  # (no autogroups, or the process has ended)
    if said and said[-1] != str(niceness):
        weigh_session(leader, niceness)
