"""Bot commands run as subprocesses of the arena (``bisca match``, ``bisca tournament``).

A bot process gets the server's address and a one-time token in its environment, writes its
stdout and stderr to log files, and is stopped when its owner is done with it: asked to exit
by the server closing its stream, then killed after a grace period.

It is also on a leash: if the arena process dies without stopping it (``kill -9``, a crash),
the kernel kills the bot too, so no orphan keeps playing or keeps a CPU busy reconnecting.  The
leash is ``PR_SET_PDEATHSIG``, set by a tiny Python prologue that then ``exec``s the bot
command.  The kernel fires it when the *thread* that forked the child ends, so the process is
forked from the event loop's thread, which lives as long as the arena, never from a worker
thread (``trio.lowlevel.open_process`` forks in one, which the thread cache ends when idle).
Forking there is cheap: ``subprocess`` uses ``vfork`` and ``exec``s at once, which also keeps
the architecture's rule of never running a forked copy of a process that imported grpc.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import trio

#: Sample bots that a bot command may name instead of a command line.
SAMPLE_BOTS = ("random", "greedy")

_LEASH = """\
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except (AttributeError, OSError):
    pass
if os.getppid() != int(sys.argv[1]):
    os._exit(1)
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as problem:
    sys.stderr.write(f"bisca: could not start {sys.argv[2]}: {problem}\\n")
    os._exit(127)
"""


def bot_argv(command: str, game: str) -> list[str]:
    """The argv of a bot command: a sample bot's name, or a shell-quoted command line."""
    if command in SAMPLE_BOTS:
        return [sys.executable, "-m", "bisca.server.cli", "bot", command, "--game", game]
    argv = shlex.split(command)
    if not argv:
        raise ValueError("an empty bot command")
    return argv


def leashed(argv: list[str]) -> list[str]:
    """``argv`` behind the prologue that makes the kernel kill it when this process dies."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-c", _LEASH, str(os.getpid()), *argv]


class BotProcess:
    """One bot command's process, its log files ``PREFIX.stdout.log`` and
    ``PREFIX.stderr.log`` (appended to, so a restarted bot keeps its history)."""

    def __init__(self, argv: list[str], env: dict[str, str], log_prefix: Path) -> None:
        self.argv = argv
        self.env = env
        self.stdout_path = log_prefix.with_name(log_prefix.name + ".stdout.log")
        self.stderr_path = log_prefix.with_name(log_prefix.name + ".stderr.log")
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> bool:
        """Start it (from the event loop's thread: see the module's notes); ``False`` when it
        cannot be started, the reason written to its stderr log."""
        self.stdout_path.parent.mkdir(parents=True, exist_ok=True)
        with (
            open(self.stdout_path, "ab") as stdout,
            open(self.stderr_path, "ab") as stderr,
        ):
            try:
                self.popen = subprocess.Popen(
                    leashed(self.argv),
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                )
            except OSError as problem:
                stderr.write(
                    f"bisca: could not start {shlex.join(self.argv)}: {problem}\n".encode()
                )
                return False
        return True

    @property
    def returncode(self) -> int | None:
        return None if self.popen is None else self.popen.poll()

    async def wait(self) -> int:
        """Wait for the process to exit; its exit status."""
        popen = self.popen
        assert popen is not None, "the process was never started"
        if popen.poll() is None:
            try:
                fd = os.pidfd_open(popen.pid)
            except (AttributeError, OSError):
                fd = None
            if fd is None:
                while popen.poll() is None:
                    await trio.sleep(0.05)
            else:
                try:
                    await trio.lowlevel.wait_readable(fd)
                finally:
                    os.close(fd)
        return popen.wait()

    async def stop(self, grace: float) -> int | None:
        """Give the process ``grace`` seconds to exit on its own, then kill it; its exit
        status (``None`` if it never started).  Shielded: it runs to the end even while its
        caller is being cancelled."""
        code = None
        if self.popen is None:
            return code
        with trio.CancelScope(shield=True):
            with trio.move_on_after(grace):
                await self.wait()
            self.kill()  # if it is still running
            code = await self.wait()
        return code

    def kill(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(signal.SIGKILL)

    def stderr_tail(self, lines: int = 8) -> str:
        """The end of the process's stderr log, to show why a bot failed."""
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])
