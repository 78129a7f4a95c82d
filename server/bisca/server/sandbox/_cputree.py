"""One CPU budget for a bot's whole process tree.

``RLIMIT_CPU`` counts one process: a bot that forks four workers gets four budgets.  Without
cgroups, the arena (which sees every process from outside the sandbox's PID namespace) sums the
CPU time of the bot's tree from ``/proc``, a few times a second, in a thread of its own (so it
watches bots of trio and asyncio callers alike), and kills the tree once the sum passes the
budget.  Killing the first process, bwrap, is enough: ``--die-with-parent`` and the end of the
namespace's first process take every other one with it.

Each live process of the tree counts its own time (``utime + stime``) and its reaped children's
(``cutime + cstime``, which the kernel adds to the parent at ``wait``): a process is counted by
itself while it lives and by its parent once gone, never twice.  Its orphans are reparented to
the namespace's first process, inside the tree, and counted there.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from pathlib import Path

#: The CPU limit's name in a match's record when the tree's budget ended the bot.
CPU_TREE_REASON = "cpu limit: all its processes together"
#: How often the tree is measured (wall seconds): how long a tree may run past its budget.
CHECK_EVERY_S = 0.2
_TICKS = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    """The children of every thread of ``pid`` (``/proc/PID/task/TID/children``: only the
    tree is read, not every process of the machine, several times a second per bot)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                found += [
                    int(child)
                    for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                ]
    return found


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command's name (state is the first)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds used by ``root`` and every process under it, living or reaped."""
    total_ticks = 0
    pending = [root]
    while pending:
        pid = pending.pop()
        fields = _stat_fields(pid)
        if fields is not None:
            # utime, stime, cutime, cstime: fields 14-17 of stat(5), 12-15 after the name.
            total_ticks += sum(int(value) for value in fields[11:15])
        pending += _children(pid)
    return total_ticks / _TICKS


class CpuSupervisor:
    """Watches one bot's process tree and kills it when its CPU seconds pass ``budget_s``."""

    def __init__(self, pid: int, budget_s: int) -> None:
        self.pid = pid
        self.budget_s = budget_s
        #: Set when this supervisor ended the bot: the reason its record gives.
        self.reason = ""
        # A pidfd, not the pid: the signal can never reach another process given the same pid.
        self._pidfd = os.pidfd_open(pid)
        self._thread = threading.Thread(target=self._watch, name=f"cpu-budget-{pid}", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        try:
            waiter = select.poll()
            waiter.register(self._pidfd, select.POLLIN)  # readable once the process exited
            while not waiter.poll(CHECK_EVERY_S * 1000):
                if tree_cpu_seconds(self.pid) > self.budget_s:
                    self.reason = CPU_TREE_REASON
                    with contextlib.suppress(ProcessLookupError):
                        signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                    return
        finally:
            os.close(self._pidfd)
