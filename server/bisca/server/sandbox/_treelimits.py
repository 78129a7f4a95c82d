"""One CPU budget and one memory budget for a bot's whole process tree.

``RLIMIT_CPU`` and ``RLIMIT_AS`` count one process each: a bot that forks four workers gets
four budgets of each (64 processes of 2 GiB each, by default).  Without cgroups, the arena
(which sees every process from outside the sandbox's PID namespace) measures the bot's tree
from ``/proc``, a few times a second, in a thread of its own (so it watches bots of trio and
asyncio callers alike), and kills the tree once either sum passes its budget.  Killing the first
process, bwrap, is enough: ``--die-with-parent`` and the end of the namespace's first process
take every other one with it.

CPU: each live process of the tree counts its own time (``utime + stime``) and its reaped
children's (``cutime + cstime``, which the kernel adds to the parent at ``wait``): a process is
counted by itself while it lives and by its parent once gone, never twice.  Its orphans are
reparented to the namespace's first process, inside the tree, and counted there.

Memory: each live process counts its proportional set size (``Pss`` of
``/proc/PID/smaps_rollup``: a page shared by forked processes is split between them, not
counted in each), or its resident size where that file cannot be read.  Memory no process maps
(System V shared memory, a ``memfd``) is not seen here: the sandbox's seccomp filter denies the
calls that make it (``_seccomp.py``).  Between two measurements a tree may grow past its budget
by what it allocates in :data:`CHECK_EVERY_S`.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The limits' names in a match's record when a tree's budget ended the bot.
CPU_TREE_REASON = "cpu limit: all its processes together"
MEMORY_TREE_REASON = "memory limit: all its processes together"
#: How often the tree is measured (wall seconds): how long a tree may run past its budget.
CHECK_EVERY_S = 0.2
_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
_MB = 1024 * 1024


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


def _tree(root: int) -> Iterator[int]:
    """``root`` and every process under it, each once, while they live."""
    pending = [root]
    while pending:
        pid = pending.pop()
        yield pid
        pending += _children(pid)


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command's name (state is the first)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _cpu_ticks(pid: int) -> int:
    fields = _stat_fields(pid)
    # utime, stime, cutime, cstime: fields 14-17 of stat(5), 12-15 after the name.
    return 0 if fields is None else sum(int(value) for value in fields[11:15])


def _memory_bytes(pid: int) -> int:
    """The process's proportional set size, else its resident size; 0 once it is gone."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    with contextlib.suppress(OSError, IndexError, ValueError):
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    return 0


@dataclass(frozen=True)
class TreeUsage:
    """What a process tree uses now: CPU seconds over its life, and memory."""

    cpu_s: float
    memory_mb: float


def tree_usage(root: int) -> TreeUsage:
    """The CPU seconds used by ``root`` and every process under it, living or reaped, and the
    memory its living processes hold together."""
    ticks = memory = 0
    for pid in _tree(root):
        ticks += _cpu_ticks(pid)
        memory += _memory_bytes(pid)
    return TreeUsage(ticks / _TICKS, memory / _MB)


class TreeSupervisor:
    """Watches one bot's process tree and kills it when its CPU seconds pass ``cpu_budget_s``
    or the memory of its processes together passes ``memory_budget_mb`` (``None``: no budget
    of that kind)."""

    def __init__(self, pid: int, cpu_budget_s: int | None, memory_budget_mb: int | None) -> None:
        self.pid = pid
        self.cpu_budget_s = cpu_budget_s
        self.memory_budget_mb = memory_budget_mb
        #: Set when this supervisor ended the bot: the reason its record gives.
        self.reason = ""
        # A pidfd, not the pid: the signal can never reach another process given the same pid.
        self._pidfd = os.pidfd_open(pid)
        self._thread = threading.Thread(target=self._watch, name=f"tree-budget-{pid}", daemon=True)
        self._thread.start()

    def over_budget(self, usage: TreeUsage) -> str:
        """The reason ``usage`` ends the bot, or empty."""
        if self.cpu_budget_s is not None and usage.cpu_s > self.cpu_budget_s:
            return CPU_TREE_REASON
        if self.memory_budget_mb is not None and usage.memory_mb > self.memory_budget_mb:
            return MEMORY_TREE_REASON
        return ""

    def _watch(self) -> None:
        try:
            waiter = select.poll()
            waiter.register(self._pidfd, select.POLLIN)  # readable once the process exited
            while not waiter.poll(CHECK_EVERY_S * 1000):
                reason = self.over_budget(tree_usage(self.pid))
                if reason:
                    self.reason = reason
                    with contextlib.suppress(ProcessLookupError):
                        signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                    return
        finally:
            os.close(self._pidfd)
