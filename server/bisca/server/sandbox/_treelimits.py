"""One CPU budget and one memory budget for a bot's whole process tree.

``RLIMIT_CPU`` and ``RLIMIT_AS`` count one process each: a bot that forks four workers gets
four budgets of each (64 processes of 2 GiB each, by default).  Without cgroups, the arena
(which sees every process from outside the sandbox's PID namespace) measures the bot's tree
from ``/proc``, a few times a second, in a thread of its own (so it watches bots of trio and
asyncio callers alike), and kills the tree once either sum passes its budget, as
:func:`kill_tree` kills it (below).

CPU: each live process of the tree has its own time (``utime + stime``) and its reaped
children's (``cutime + cstime``, which the kernel adds to the parent at ``wait``).  The tree's
total is kept across passes (:class:`TreeMeter`) and only grows: each pass adds what every
process used since the last one, and a parent's waited-for time less what its children that
went since were already counted for.  So a child the bot never waits for (``SIGCHLD``
ignored: the kernel reaps it and adds its time to nobody, review 38b) is counted for what the
arena saw of it; what such a child uses after the last pass that saw it (at most
:data:`CHECK_EVERY_S` of each of its threads) is not, so a bot that keeps forking short
children it does not wait for passes its budget by that much per child (a cgroup would count
them all; there is none on this kind of machine).  Orphans are reparented to the
namespace's first process, inside the tree, and counted there.

Memory: each live process counts its proportional set size (``Pss`` of
``/proc/PID/smaps_rollup``: a page shared by forked processes is split between them, not
counted in each), or its resident size where that file cannot be read.  Memory no process maps
(System V shared memory, a ``memfd``) is not seen here: the sandbox's seccomp filter denies the
calls that make it (``_seccomp.py``).  Between two measurements a tree may grow past its budget
by what it allocates in :data:`CHECK_EVERY_S`.

The measuring is the arena's cost, not the bot's, and reading a process's ``Pss`` walks its
page tables: ~0.5 ms of the arena's CPU for a Python bot with gRPC, 12 ms for a process that
mapped 60,000 small regions (review 38: 64 such processes, read five times a second, would
take four cores).  So a pass spends at most :data:`PSS_BUDGET_PER_PASS_S` on ``Pss``, and a
process whose read alone costs more than :data:`COSTLY_PSS_READ_S` is measured from then on by
its resident size (``/proc/PID/statm``, a few µs), as is every process a pass reaches once
its budget is spent.  The resident size is never less than ``Pss``: a bot that makes itself
costly to measure is held to the stricter count, never let past its budget.

Killing a tree (:func:`kill_tree`: a budget passed here, and every kill of a
:class:`~bisca.server.sandbox.BotProcess`): killing the first process alone, bwrap, is not
enough.  Its one child is the PID namespace's first process, whose end makes the kernel kill
every other process of the namespace; but that child arms ``--die-with-parent``
(``PR_SET_PDEATHSIG``) only once the sandbox is set up, its mounts done (``do_init``), and a
death signal asked for after the parent died never comes.  A bwrap killed in its first tens of
milliseconds left its child behind: blocked for ever on the eventfd bwrap releases it by, or
past it, running the bot with no leash at all (16 of 24 bots killed 0-20 ms after their start,
here; bubblewrap issue #633).  So every process of the tree is killed, each through a pidfd of
its own (a pid given again to another process is never signalled):

1. the first process is stopped (``SIGSTOP``) and waited for until it *is* stopped: a stopped
   process forks no more, and reaps none of its children, so the list of its children is
   complete and none of their pids can be given again.  (Sending the signal is not enough: a
   fork already inside the kernel completes, only a fatal signal aborts one in its middle,
   ``copy_process``'s "let kill terminate clone/fork in the middle"; the process stops on its
   way back to user space, its new child listed by then.)
2. its children are read (``/proc/PID/task/TID/children``), each opened as a pidfd whose
   ``/proc`` entry must still name the expected parent (read after the pidfd is opened, and the
   pidfd checked alive after: that entry was its own), and killed once its own children are
   read and opened: parents before children, so no parent sees a child die and starts another,
   and every child is held before its parent's death hands it to another.  The first process's
   list is read again until it names nothing new (an exiting child can hide another from one
   read: proc_tid_children(5)).
3. the first process is killed last: a caller that sees it end knows every kill was sent.

In a sandbox (``namespace``) step 2 stops at bwrap's children: its one child is the namespace's
first process, whose end takes every other process of the namespace with it, so a kill holds
two descriptors, not one per process (review 51: 191 at once for eight bots killed together,
against the arena's reserve of 1,024).  An arena with no descriptor to spare for a pidfd signals
the first process by its pid, as before, and logs it (``BotProcess._pidfd``): bwrap's end still
takes a sandbox set up long ago with it.

What is left: below the first process, processes run while they are read.  In the sandbox that
loses nothing (the namespace's first process takes the others with it), but in a tree outside
a namespace (an unsandboxed bot, trusted) a process that forks between the read of its children
and its kill (microseconds), or forks and exits so that its child is handed outside the tree,
keeps that child.  The parent check misses only a parent that ended and whose pid was given
again within those microseconds, together with its child's.  And a first process that is not
stopped within :data:`STOP_WAIT_S` (a machine starved for that long) is killed all the same,
a child it forks at that moment not seen.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The limits' names in a match's record when a tree's budget ended the bot.
CPU_TREE_REASON = "cpu limit: all its processes together"
MEMORY_TREE_REASON = "memory limit: all its processes together"
#: How often the tree is measured (wall seconds): how long a tree may run past its budget.
CHECK_EVERY_S = 0.2
#: The arena's CPU a pass may spend reading ``Pss`` (five passes a second: 2.5% of a core per
#: bot at most), and what one process's read may cost before it is measured by its resident size.
PSS_BUDGET_PER_PASS_S = 0.005
COSTLY_PSS_READ_S = 0.002
#: How long :func:`kill_tree` waits for the tree's first process to stop before it kills the
#: tree regardless: a process stops once the scheduler runs it (0.5 ms at the median on an idle
#: 2-core machine, 27 ms at worst with four busy processes on it).
STOP_WAIT_S = 5.0
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


@dataclass(frozen=True)
class _Ticks:
    """One process's CPU as a pass saw it, in clock ticks."""

    own: int  # utime + stime
    waited: int  # cutime + cstime: its children it waited for
    parent: int

    @property
    def total(self) -> int:
        return self.own + self.waited


def _process(pid: int) -> tuple[tuple[int, int], _Ticks] | None:
    """The process's identity (its pid and start time: a pid the kernel gives again is
    another process) and its CPU now; ``None`` once it is gone."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    # stat(5), counted after the name: ppid 2, utime..cstime 12-15, starttime 20.
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return (pid, int(fields[19])), _Ticks(utime + stime, cutime + cstime, int(fields[1]))


def _pss_bytes(pid: int) -> int | None:
    """The process's proportional set size (``None``: it cannot be read)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return None


def _resident_bytes(pid: int) -> int:
    """The process's resident size; 0 once it is gone."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    return 0


@dataclass(frozen=True)
class TreeUsage:
    """What a process tree uses now: CPU seconds over its life, and memory."""

    cpu_s: float
    memory_mb: float


class TreeMeter:
    """Measures one process tree, pass after pass, at a bounded cost to the arena (see the
    module's notes); remembers which of its processes are costly to read."""

    def __init__(self) -> None:
        #: The living processes measured by their resident size: their ``Pss`` cost too much.
        self.costly: set[int] = set()
        #: Clock ticks the tree used, counted so far; and each process as the last pass saw it.
        self.ticks = 0
        self._seen: dict[tuple[int, int], _Ticks] = {}

    def usage(self, root: int) -> TreeUsage:
        """The CPU seconds used by ``root`` and every process under it since the meter began,
        living or gone, and the memory its living processes hold together."""
        memory = 0
        spent = 0.0
        living: set[int] = set()
        now: dict[tuple[int, int], _Ticks] = {}
        for pid in _tree(root):
            living.add(pid)
            seen = _process(pid)
            if seen is not None:
                now[seen[0]] = seen[1]
            pss = None
            if pid not in self.costly and spent < PSS_BUDGET_PER_PASS_S:
                started = time.thread_time()
                pss = _pss_bytes(pid)
                cost = time.thread_time() - started
                spent += cost
                if cost > COSTLY_PSS_READ_S:
                    self.costly.add(pid)
            memory += _resident_bytes(pid) if pss is None else pss
        self.costly &= living  # (a pid the kernel gives again is a new process)
        self._count_cpu(now)
        return TreeUsage(self.ticks / _TICKS, memory / _MB)

    def _count_cpu(self, now: dict[tuple[int, int], _Ticks]) -> None:
        """Add what the processes seen ``now`` used since the last pass.  A process gone since
        was counted up to the last pass's view of it; its live ancestor's waited-for time grows
        by its whole time if it was waited for, so that ancestor is credited what was counted
        already (a credit left over is a child nobody waited for: nothing more to add)."""
        last = {key[0]: key for key in self._seen}
        credit: dict[tuple[int, int], int] = {}
        for key, gone in self._seen.items():
            if key in now:
                continue
            # Its nearest ancestor still alive (a parent gone at the same time was reaped
            # with it by that ancestor, or by nobody).
            parent_key = last.get(gone.parent)
            for _ in range(len(last)):  # (a chain of the last pass's processes: no cycle)
                if parent_key is None or parent_key in now:
                    break
                parent_key = last.get(self._seen[parent_key].parent)
            if parent_key is not None and parent_key in now:
                credit[parent_key] = credit.get(parent_key, 0) + gone.total
        for key, ticks in now.items():
            before = self._seen.get(key)
            if before is None:
                self.ticks += ticks.total
                continue
            grown = ticks.waited - before.waited - credit.get(key, 0)
            self.ticks += max(0, ticks.own - before.own) + max(0, grown)
        self._seen = now


def kill_tree(pidfd: int, pid: int, *, namespace: bool) -> None:
    """SIGKILL the process ``pid`` (``pidfd``: a pidfd of it) and every process under it, as
    the module's notes say; blocks until the process is stopped (at most :data:`STOP_WAIT_S`):
    :func:`kill_tree_soon` for a caller that must not wait.  With ``namespace`` (the process is
    a sandbox's bwrap) only its children are killed, the kernel taking every process of their
    PID namespace with its first: a kill holds a descriptor or two, not one per process (64
    per bot, and kills come together: review 51)."""
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGSTOP)
    except ProcessLookupError:
        return  # ended and waited for: its children, if any were left, are out of reach
    except OSError:
        pass  # (not ours to signal: nor to kill, but its children may be)
    _wait_stopped(pidfd, pid)
    if not _alive(pidfd):
        return  # ended and waited for meanwhile (another kill's): its pid may be another's now
    _signal_descendants(pid, pidfd, signal.SIGKILL, again=True, deep=not namespace)
    with contextlib.suppress(OSError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)


def kill_tree_soon(pidfd: int, pid: int, *, namespace: bool) -> None:
    """:func:`kill_tree` in a thread of its own, which closes ``pidfd`` once done: the caller (an
    event loop, a door's thread) does not wait for the process to stop.  Not a daemon thread: an
    arena that exits at once still finishes the kill, never leaving the process stopped."""

    def kill() -> None:
        try:
            kill_tree(pidfd, pid, namespace=namespace)
        finally:
            os.close(pidfd)

    try:
        threading.Thread(target=kill, name=f"tree-kill-{pid}").start()
    except RuntimeError:  # no thread to be had: here, then
        kill()


def signal_descendants(pid: int, pidfd: int, number: int) -> None:
    """Send the signal ``number`` to every process under ``pid`` (``pidfd``: a pidfd of it; not
    ``pid`` itself), parents before their children, each through a pidfd (see the module's
    notes); the tree runs while it is read, so this is for a signal that asks (``SIGTERM``),
    not for the kill."""
    _signal_descendants(pid, pidfd, number, again=False, deep=True)


def _signal_descendants(root: int, root_fd: int, number: int, *, again: bool, deep: bool) -> None:
    """:func:`signal_descendants`; ``again``: ``root`` is stopped, and its children are read
    again until they name none not signalled yet; not ``deep``: its children only."""
    signalled: set[int] = set()
    pending: list[tuple[int, int]] = []
    try:
        while True:
            pending = _open_children(root, root_fd, signalled)
            if not pending:
                return
            while pending:
                pid, fd = pending.pop()
                try:
                    signalled.add(pid)
                    # Its children are held before it is signalled: killed, it would hand them
                    # to another parent, outside the tree.
                    if deep:
                        pending += _open_children(pid, fd, signalled)
                    with contextlib.suppress(OSError):
                        signal.pidfd_send_signal(fd, number)
                finally:
                    os.close(fd)
            if not again:
                return
    finally:
        for _, fd in pending:  # (only on an exception)
            os.close(fd)


def _open_children(parent: int, parent_fd: int, skip: set[int]) -> list[tuple[int, int]]:
    """The children of ``parent`` (``parent_fd``: a pidfd of it) but those in ``skip``, each with
    a pidfd of it; a pid whose process is gone, or is no longer a child of ``parent`` (its pid
    given again since the children were read), is left out, and all of them if ``parent`` was
    waited for meanwhile (the children read may have been those of another process given its
    pid).  A pidfd the arena cannot open (its descriptors spent) leaves that child out: the
    caller's kill of the namespace's first process, or of the parent, still comes."""
    opened: list[tuple[int, int]] = []
    for child in _children(parent):
        if child in skip:
            continue
        try:
            fd = os.pidfd_open(child)
        except OSError:
            continue  # gone already
        fields = _stat_fields(child)  # read after the pidfd was opened, then the pidfd checked
        if fields is not None and fields[1] == str(parent) and _alive(fd):
            opened.append((child, fd))
        else:
            os.close(fd)
    if opened and not _alive(parent_fd):
        for _, fd in opened:
            os.close(fd)
        return []
    return opened


def _alive(pidfd: int) -> bool:
    """Whether the process of ``pidfd`` is not yet waited for (a zombie still holds its pid)."""
    try:
        signal.pidfd_send_signal(pidfd, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # there, if not ours to signal
    return True


def _wait_stopped(pidfd: int, pid: int) -> None:
    """Return once the process is stopped or has ended, or after :data:`STOP_WAIT_S`."""
    deadline = time.monotonic() + STOP_WAIT_S
    pause = 0.0001
    while True:
        fields = _stat_fields(pid)
        if not _alive(pidfd):
            return  # waited for: the state read was another's, or none
        if fields is None or fields[0] in "TtZX" or time.monotonic() >= deadline:
            return
        time.sleep(pause)
        pause = min(pause * 2, 0.005)


class TreeSupervisor:
    """Watches one bot's process tree and kills it (:func:`kill_tree`: every process of it)
    when its CPU seconds pass ``cpu_budget_s`` or the memory of its processes together passes
    ``memory_budget_mb`` (``None``: no budget of that kind); ``namespace``: the process is a
    sandbox's bwrap (:func:`kill_tree`)."""

    def __init__(
        self,
        pid: int,
        cpu_budget_s: int | None,
        memory_budget_mb: int | None,
        *,
        namespace: bool = False,
    ) -> None:
        self.pid = pid
        self.namespace = namespace
        self.cpu_budget_s = cpu_budget_s
        self.memory_budget_mb = memory_budget_mb
        #: Set when this supervisor ended the bot: the reason its record gives.
        self.reason = ""
        # A pidfd, not the pid: the kill can never reach another process given the same pid.
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
            meter = TreeMeter()
            while not waiter.poll(CHECK_EVERY_S * 1000):
                reason = self.over_budget(meter.usage(self.pid))
                if reason:
                    self.reason = reason
                    # (a thread of its own already)
                    kill_tree(self._pidfd, self.pid, namespace=self.namespace)
                    return
        finally:
            os.close(self._pidfd)
