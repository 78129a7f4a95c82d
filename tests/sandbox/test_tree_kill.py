"""Killing a bot kills its whole process tree (``sandbox/_treelimits.py``: ``kill_tree``).

Killing bwrap alone was not enough: its child, the sandbox's PID namespace's first process,
arms ``--die-with-parent`` only once the sandbox is set up, so a bot killed in its first
milliseconds left that child behind, blocked for ever or running the bot with no leash (16 of
24 such kills, here; one per loaded CI run, from a test that stopped its bot right after its
start).  Each bot here carries a marker of its own on its command line (every process of the
sandbox has it: bwrap's child is a copy of bwrap, and the bot's forks copy the bot), and a
kill is good when no process of the machine carries it any more; a process that execs another
program is followed by its identity (pid and start time) instead.  Nothing is timed: a kill
waits for what it needs, and each look has a deadline far beyond it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

import pytest

from bisca.server.sandbox import BotProcess, _treelimits
from bisca.server.sandbox._launch import Launch
from bisca.server.sandbox._treelimits import MEMORY_TREE_REASON
from tests.sandbox.test_doors import sandboxed_bot
from tests.support.waiting import poll, poll_until

pytestmark = pytest.mark.system  # sandboxed bot processes

#: A bot that sleeps (its last argument is its marker).
SLEEPER = "import time\ntime.sleep(600)\n"

#: When the bots of the first test are killed after their start: the sandbox sets itself up in
#: the first tens of milliseconds, when a kill of bwrap alone left its child behind.  Forty
#: launches, each a few tens of milliseconds.
DELAYS_S = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1) * 5

#: A bot whose processes try to outlive it: a child that ignores every signal it may ignore, a
#: daemon (its own session where it may have one, else its own process group; forked again
#: and orphaned, ignoring signals too), and a program of its own (``sleep``) in its own process
#: group with none of the bot's environment or command line.
#: It says "ready" once they all run; with ``go`` in its folder it then takes 200 MB, which
#: passes the tree's memory budget of the third test.
RESILIENT = """
import os, signal, subprocess, sys, time

def ignore_signals(ready):
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                   signal.SIGUSR2, signal.SIGPIPE, signal.SIGALRM):
        signal.signal(number, signal.SIG_IGN)
    os.write(ready, b"x")
    time.sleep(600)
    os._exit(0)

done, ready = os.pipe()
if os.fork() == 0:
    ignore_signals(ready)
if os.fork() == 0:
    try:
        os.setsid()
    except PermissionError:  # the sandbox refuses a session of its own (_seccomp.py)
        os.setpgid(0, 0)
    if os.fork() == 0:
        ignore_signals(ready)
    os._exit(0)
subprocess.Popen(["sleep", "600"], env={}, process_group=0)
assert len(os.read(done, 1) + os.read(done, 1)) == 2
print("ready", flush=True)
while not os.path.exists("go"):
    time.sleep(0.02)
held = b"x" * (200 << 20)
print("holding", flush=True)
time.sleep(600)
"""
#: The processes of a :data:`RESILIENT` bot's tree once it is ready: bwrap, its child (the
#: namespace's first process), the bot, its two children that ignore signals, and ``sleep``.
RESILIENT_TREE = 6


def carrying(markers: Iterable[str]) -> dict[int, str]:
    """The processes of the machine (but this one) whose command line or environment holds
    one of ``markers``, with the marker each holds."""
    wanted = [(marker, marker.encode()) for marker in markers]
    found: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            try:
                text = Path(f"/proc/{name}/{part}").read_bytes()
            except OSError:  # gone, or not ours to read
                continue
            held = [marker for marker, raw in wanted if raw in text]
            if held:
                found[int(name)] = held[0]
                break
    return found


def identities(root: int) -> set[tuple[int, int]]:
    """The pid and start time of every live process under ``root``, and of ``root``."""
    found = set()
    for pid in _treelimits._tree(root):
        fields = _treelimits._stat_fields(pid)
        if fields is not None and fields[0] not in "ZX":
            found.add((pid, int(fields[19])))
    return found


def tree_once_it_holds(root: int, count: int) -> set[tuple[int, int]]:
    """:func:`identities` of ``root``'s tree once it holds ``count`` live processes."""
    found: set[tuple[int, int]] = set()

    def grown() -> bool:
        nonlocal found
        found = identities(root)
        return len(found) >= count

    poll_until(f"{count} processes under {root}", grown)
    return found


def living(processes: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
    """Those of ``processes`` (pid and start time) still there, zombies aside."""
    left = set()
    for pid, started in processes:
        fields = _treelimits._stat_fields(pid)
        if fields is not None and fields[0] not in "ZX" and int(fields[19]) == started:
            left.add((pid, started))
    return left


def kill_left(markers: Iterable[str]) -> None:
    """Kill what a failed test left (through a pidfd, checked to still carry a marker)."""
    for pid in carrying(markers):
        with contextlib.suppress(OSError):
            pidfd = os.pidfd_open(pid)
            try:
                if pid in carrying(markers):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            finally:
                os.close(pidfd)


def with_memory_budget(process: BotProcess, megabytes: int) -> None:
    """Give ``process``'s tree a memory budget of ``megabytes`` from its next start, its
    sandbox's limits left as they are."""
    wrap = process.wrap

    def budgeted(argv: list[str]) -> Launch:
        return dataclasses.replace(wrap(argv), memory_budget_mb=megabytes)

    process.wrap = budgeted


def wait_ended(process: BotProcess) -> int:
    assert process.popen is not None
    return process.popen.wait(timeout=120)


def test_a_bot_killed_in_its_first_milliseconds_leaves_no_process_behind(tmp_path: Path) -> None:
    _, process = sandboxed_bot(tmp_path, SLEEPER, "marker")
    killed_after: dict[str, float] = {}
    try:
        for delay in DELAYS_S:
            marker = f"bisca-tree-kill-{uuid.uuid4().hex}"
            process.argv[-1] = marker
            killed_after[marker] = delay
            process.start()
            time.sleep(delay)
            process.kill()
            wait_ended(process)
        poll(lambda: not carrying(killed_after), timeout=60)
        left = carrying(killed_after)
        delays = sorted(killed_after[marker] * 1000 for marker in set(left.values()))
        assert not left, (
            f"{len(set(left.values()))} of {len(DELAYS_S)} bots left {len(left)} processes "
            f"behind, killed after {', '.join(f'{delay:g}' for delay in delays)} ms"
        )
    finally:
        kill_left(killed_after)


@pytest.mark.parametrize("killer", ["kill", "budget"])
def test_a_kill_takes_the_processes_that_try_to_outlive_the_bot(
    tmp_path: Path, killer: str
) -> None:
    """Its children ignoring signals, leaving its session, running another program: none of
    them outlives a kill, the arena's own (``kill``) or its tree supervisor's (a memory budget
    passed)."""
    marker = f"bisca-tree-kill-{uuid.uuid4().hex}"
    _, process = sandboxed_bot(tmp_path, RESILIENT, marker)
    if killer == "budget":
        with_memory_budget(process, 150)
    processes: set[tuple[int, int]] = set()
    try:
        process.start()
        assert process.popen is not None
        root = process.popen.pid
        poll_until(
            "the bot is ready",
            lambda: b"ready" in process.stdout_path.read_bytes() or process.exit_code is not None,
        )
        assert process.exit_code is None, process.stderr_text()
        processes = tree_once_it_holds(root, RESILIENT_TREE)
        if killer == "kill":
            process.kill()
        else:
            (tmp_path / "bot" / "go").touch()
        wait_ended(process)
        poll(lambda: not living(processes) and not carrying([marker]), timeout=60)
        assert not living(processes), f"of {sorted(processes)}, {sorted(living(processes))} live"
        assert not carrying([marker])
        if killer == "budget":
            assert process.limit_hit(read_stderr=False) == MEMORY_TREE_REASON
    finally:
        kill_left([marker])
        for pid, _ in living(processes):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_budget_passed_in_a_sandboxs_first_milliseconds_kills_the_whole_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree supervisor kills as the arena does: a budget of nothing, measured at once,
    kills each bot while its sandbox sets itself up."""
    monkeypatch.setattr(_treelimits, "CHECK_EVERY_S", 0.001)
    _, process = sandboxed_bot(tmp_path, SLEEPER, "marker")
    with_memory_budget(process, 0)
    markers: list[str] = []
    try:
        for _ in range(10):
            markers.append(f"bisca-tree-kill-{uuid.uuid4().hex}")
            process.argv[-1] = markers[-1]
            process.start()
            wait_ended(process)
            assert process.limit_hit(read_stderr=False) == MEMORY_TREE_REASON
        poll(lambda: not carrying(markers), timeout=60)
        left = carrying(markers)
        assert not left, f"{len(set(left.values()))} of 10 bots left {len(left)} processes behind"
    finally:
        kill_left(markers)


def test_terminate_asks_the_bot_itself_and_bwrap_ends_with_it(tmp_path: Path) -> None:
    """SIGTERM goes to the bot's processes, not to bwrap, which would end at once without
    passing it on (its child then killing the bot with SIGKILL): the bot's own handler runs,
    and bwrap ends with the bot's status."""
    code = (
        "import signal, sys, time\n"
        "def leave(*_):\n    print('asked to leave', flush=True)\n    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, leave)\nprint('ready', flush=True)\ntime.sleep(600)\n"
    )
    marker = f"bisca-tree-kill-{uuid.uuid4().hex}"
    _, process = sandboxed_bot(tmp_path, code, marker)
    try:
        process.start()
        poll_until(
            "the bot is ready",
            lambda: b"ready" in process.stdout_path.read_bytes() or process.exit_code is not None,
        )
        process.terminate()
        assert wait_ended(process) == 0, process.stderr_text()
        assert "asked to leave" in process.stdout_path.read_text()
        poll_until("nothing of the bot left", lambda: not carrying([marker]))
    finally:
        process.kill()
        kill_left([marker])


def test_an_unsandboxed_bots_kill_takes_its_children_too(tmp_path: Path) -> None:
    """Outside the sandbox no namespace ends with the bot: its children are killed one by
    one, a child in a session of its own, ignoring signals, too."""
    marker = f"bisca-tree-kill-{uuid.uuid4().hex}"
    code = (
        "import os, signal, sys, time\n"
        "if os.fork() == 0:\n    os.setsid()\n"
        "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    time.sleep(600)\n    os._exit(0)\n"
        "print('ready', flush=True)\ntime.sleep(600)\n"
    )
    (tmp_path / "bot.py").write_text(code)
    process = BotProcess([sys.executable, str(tmp_path / "bot.py"), marker], {}, tmp_path / "b")
    processes: set[tuple[int, int]] = set()
    try:
        process.start()
        assert process.popen is not None
        root = process.popen.pid
        processes = tree_once_it_holds(root, 2)
        process.kill()
        wait_ended(process)
        poll(lambda: not living(processes), timeout=60)
        assert not living(processes)
    finally:
        kill_left([marker])


def _started_and_ready(process: BotProcess, count: int) -> tuple[int, set[tuple[int, int]]]:
    """Start ``process`` (a :data:`RESILIENT` bot), wait until it is ready: bwrap's pid and the
    identities of the ``count`` processes of its tree."""
    process.start()
    assert process.popen is not None
    poll_until(
        "the bot is ready",
        lambda: b"ready" in process.stdout_path.read_bytes() or process.exit_code is not None,
    )
    assert process.exit_code is None, process.stderr_text()
    return process.popen.pid, tree_once_it_holds(process.popen.pid, count)


def test_a_sandboxed_kill_holds_a_descriptor_for_bwrap_and_its_child_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel ends a PID namespace with its first process: the kill opens pidfds of bwrap
    and of that process, not one per process of the tree (64 a bot at most, and kills come
    together: review 51 saw 191 held at once)."""
    marker = f"bisca-tree-kill-{uuid.uuid4().hex}"
    _, process = sandboxed_bot(tmp_path, RESILIENT, marker)
    opened: list[int] = []
    pidfd_open = os.pidfd_open

    def recorded(pid: int, flags: int = 0) -> int:
        opened.append(pid)
        return pidfd_open(pid, flags)

    processes: set[tuple[int, int]] = set()
    try:
        root, processes = _started_and_ready(process, RESILIENT_TREE)
        (first,) = _treelimits._children(root)
        monkeypatch.setattr(os, "pidfd_open", recorded)
        process.kill()
        wait_ended(process)
        monkeypatch.undo()
        poll(lambda: not living(processes) and not carrying([marker]), timeout=60)
        assert not living(processes), f"of {sorted(processes)}, {sorted(living(processes))} live"
        assert set(opened) == {root, first}, (opened, root, first)
    finally:
        monkeypatch.undo()
        kill_left([marker])


def test_a_kill_without_a_descriptor_to_spare_still_kills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An arena whose descriptors are spent cannot open a pidfd: the kill falls back to
    signalling bwrap by its pid, as before trees were killed, and says so (review 51: it did
    nothing, and whoever waited for the bot's end waited for ever)."""
    marker = f"bisca-tree-kill-{uuid.uuid4().hex}"
    _, process = sandboxed_bot(tmp_path, RESILIENT, marker)

    def spent(pid: int, flags: int = 0) -> int:
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))

    processes: set[tuple[int, int]] = set()
    try:
        _, processes = _started_and_ready(process, RESILIENT_TREE)
        monkeypatch.setattr(os, "pidfd_open", spent)
        with caplog.at_level(logging.WARNING, logger="bisca.sandbox"):
            process.kill()
        monkeypatch.undo()
        assert wait_ended(process) == -signal.SIGKILL
        assert "no pidfd of it" in caplog.text and "SIGKILL" in caplog.text, caplog.text
        # The sandbox was set up long ago: bwrap's death takes the rest with it.
        poll(lambda: not living(processes) and not carrying([marker]), timeout=60)
        assert not living(processes), f"of {sorted(processes)}, {sorted(living(processes))} live"
    finally:
        monkeypatch.undo()
        kill_left([marker])


def test_a_bot_is_out_of_the_arenas_session_and_a_signal_to_its_group_spares_it(
    tmp_path: Path,
) -> None:
    """Review s59c, F1: a Ctrl-C at a worker's terminal (SIGINT to its process group) killed
    every bot it had launched, and their matches were recorded with every seat forfeited, a
    crash charged to each bot.  A bot, sandboxed or not, is started in a session of its own:
    a signal to the arena's group does not reach it; its stop still does."""
    for sandboxed in (True, False):
        marker = uuid.uuid4().hex
        folder = tmp_path / f"bot-{sandboxed}"
        folder.mkdir()
        if sandboxed:
            _, process = sandboxed_bot(folder, SLEEPER, marker)
        else:
            (folder / "bot.py").write_text(SLEEPER)
            process = BotProcess([sys.executable, str(folder / "bot.py"), marker], {}, folder / "b")
        process.start()
        try:
            assert process.popen is not None
            assert os.getsid(process.popen.pid) != os.getsid(0)
            assert os.getpgid(process.popen.pid) != os.getpgid(0)
        finally:
            process.kill()
            wait_ended(process)
            kill_left([marker])
