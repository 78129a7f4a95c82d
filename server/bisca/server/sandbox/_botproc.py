"""Bot commands run as subprocesses of the arena: one mechanism for ``bisca match``,
tournaments and ``bisca check-bot``.

A bot process gets the server's address and a one-time token in its environment, appends its
stdout and stderr to ``PREFIX.stdout.log`` / ``PREFIX.stderr.log`` (a restarted bot keeps its
history), and is stopped when its owner is done with it: asked to exit by the server closing
its stream, then killed after a grace period, with every process under it (in the sandbox,
bwrap's own child too: ``_treelimits.kill_tree`` says why).  A command that cannot be started
raises :class:`BotStartError`, its reason also written to the stderr log.

It is also on a leash: if the arena process dies without stopping it (``kill -9``, a crash),
the kernel kills the bot too, so no orphan keeps playing or keeps a CPU busy reconnecting.  The
leash is ``PR_SET_PDEATHSIG``, set by a tiny Python prologue that then ``exec``s the bot
command.  The kernel fires it when the *thread* that forked the child ends, so the process is
forked from the event loop's thread, which lives as long as the arena, never from a worker
thread (``trio.lowlevel.open_process`` forks in one, which the thread cache ends when idle).
Forking there is cheap: ``subprocess`` uses ``vfork`` and ``exec``s at once, which also keeps
the architecture's rule of never running a forked copy of a process that imported grpc.

Waiting is the one part that depends on the event loop: :meth:`BotProcess.wait` and
:meth:`BotProcess.stop` are trio; asyncio callers (the conformance harness) poll
:attr:`BotProcess.exit_code`.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import trio

from bisca.client.bots import BOTS
from bisca.server import metrics
from bisca.server.datadir import OutputStream, output_file
from bisca.server.errors import BiscaError
from bisca.server.textfiles import read_tail

from ._doors import Door
from ._launch import Launch
from ._sandbox import limit_reason
from ._treelimits import TreeSupervisor, kill_tree_soon, signal_descendants

log = logging.getLogger("bisca.sandbox")

#: Sample bots that a bot command may name instead of a command line: every bot of the SDK's
#: registry (``bisca.client.bots.BOTS``), so a new sample bot is playable everywhere at once.
SAMPLE_BOTS = tuple(dict.fromkeys(name for bots in BOTS.values() for name in bots))

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


class BotStartError(BiscaError):
    """A bot command that cannot be started (no such program, ...)."""

    def __init__(self, program: str, problem: OSError) -> None:
        super().__init__(f"could not start {program}: {with_start_hint(program, problem)}")
        self.program = program
        self.problem = problem


def with_start_hint(program: str, problem: OSError, *, samples: bool = True) -> str:
    """``problem`` (why ``program`` cannot start), followed by :func:`start_hint`'s advice."""
    hint = start_hint(program, problem, samples=samples)
    return f"{problem} ({hint})" if hint else str(problem)


def start_hint(program: str, problem: OSError, *, samples: bool = True) -> str:
    """What to do about the common slips behind ``problem`` (empty: no advice), for every
    message that says a bot command cannot start: a misspelt sample bot (a bare word is looked
    for on ``PATH``; ``samples``: the command takes a sample bot's name, as ``bisca match`` and
    tournaments do and ``bisca check-bot`` does not), and a script named as the program
    without its execute bit."""
    if problem.filename != program:  # a missing script argument says where it looked already
        return ""
    if problem.errno == errno.ENOENT and os.sep not in program:
        if not samples:
            return "not on PATH"
        return f"not on PATH; the sample bots are {', '.join(SAMPLE_BOTS)}"
    if problem.errno == errno.EACCES and os.path.isfile(program):
        script = _as_typed(program)
        interpreter = _INTERPRETERS.get(Path(program).suffix, "its interpreter")
        return f"run it with {interpreter}: {interpreter} {script}; or chmod +x {script}"
    return ""


#: The end of a bot's stderr log searched for its last lines when it failed.
STDERR_TAIL_BYTES = 8192
#: The interpreter to suggest for a script named as a bot's program without its execute bit:
#: the project's Python, which has the SDK (a bare ``python`` may not).
_INTERPRETERS = {".py": ".venv/bin/python", ".js": "node", ".mjs": "node", ".cjs": "node"}


def _as_typed(path: str) -> str:
    """``path`` relative to the current folder when it is under it (the arena made it
    absolute; the author typed it relative), else as it is."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def quiet_exit_hint(process: BotProcess) -> str:
    """What to say of a bot process that ended before its match started: exiting with status
    0 and nothing on stderr, it most likely never connected at all (a script that defines
    its strategy but never calls the SDK's ``run``); empty for any other end, whose stderr
    says more."""
    if process.exit_code == 0 and not process.stderr_tail(1):
        return "it never connected: does it call run()?"
    return ""


def bot_argv(command: str, game: str) -> list[str]:
    """The argv of a bot command: a sample bot's name, or a shell-quoted command line."""
    if command in SAMPLE_BOTS:
        # The SDK's own entry of `bisca bot`: the bot process loads the SDK, not the server.
        return [sys.executable, "-m", "bisca.client.cli", "bot", command, "--game", game]
    try:
        argv = shlex.split(command)
    except ValueError as problem:  # "No closing quotation": the command named (review 53)
        raise ValueError(f"the bot command {command!r} cannot be read: {problem}") from None
    if not argv:
        raise ValueError("an empty bot command")
    return argv


def leashed(argv: Sequence[str]) -> Launch:
    """``argv`` behind the prologue that makes the kernel kill it when this process dies."""
    if not sys.platform.startswith("linux"):
        return Launch(list(argv))
    return Launch([sys.executable, "-c", _LEASH, str(os.getpid()), *argv])


def _private(path: str, flags: int) -> int:
    """Open a bot's output file readable by the arena's owner only."""
    return os.open(path, flags, 0o600)


def _cannot_run(program: str, path: str) -> OSError | None:
    """Why ``program`` cannot be executed (as ``exec`` would say), or ``None``."""
    if os.sep not in program:
        if shutil.which(program, path=path) is not None:
            return None
        code = errno.ENOENT
    elif not os.path.exists(program):
        code = errno.ENOENT
    elif os.path.isdir(program) or not os.access(program, os.X_OK):
        code = errno.EACCES
    else:
        return None
    return OSError(code, os.strerror(code), program)


#: The suffixes of the scripts an interpreter is given (``python my_bot.py``): a word of a
#: bot command with one that names no file is refused before the bot starts, naming the folder
#: it was looked for in (else the interpreter reports it from wherever the sandbox started it).
SCRIPT_SUFFIXES = frozenset({".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh", ".lua"})


def missing_script(argv: Sequence[str]) -> OSError | None:
    """The first script argument of ``argv`` that names no file, relative words read from the
    current folder (as the started bot reads them); ``None``: none."""
    folder = Path.cwd()
    for word in argv[1:]:
        if word.startswith("-") or any(mark in word for mark in "= :"):
            continue
        if Path(word).suffix in SCRIPT_SUFFIXES and not os.path.lexists(folder / word):
            where = "" if os.path.isabs(word) else f", looked for in {folder}"
            return OSError(errno.ENOENT, f"no such script{where}", word)
    return None


def cannot_start(argv: Sequence[str]) -> OSError | None:
    """Why the bot command ``argv`` cannot start, found without starting it: its program is
    not on ``PATH`` or not executable, or a script it names is missing (``None``: nothing
    found; the bot may still fail once it runs, which ``bisca check-bot`` tries).  Relative
    paths are read from the current folder, as the started bot reads them."""
    if not argv:
        return OSError(errno.ENOENT, "an empty bot command", "")
    return _cannot_run(argv[0], os.environ.get("PATH", os.defpath)) or missing_script(argv)


class BotProcess:
    """One bot command's process and its log files."""

    def __init__(
        self,
        argv: Sequence[str],
        env: dict[str, str],
        log_prefix: Path,
        wrap: Callable[[list[str]], Launch] = leashed,
    ) -> None:
        """``argv`` is the bot's own command; ``wrap`` makes the command line that runs it
        (the leash, or the sandbox, which dies with the arena by itself)."""
        self.argv = list(argv)
        self.env = env
        self.wrap = wrap
        self.stdout_path = output_file(log_prefix, OutputStream.STDOUT)
        self.stderr_path = output_file(log_prefix, OutputStream.STDERR)
        self.starts = 0
        self.popen: subprocess.Popen[bytes] | None = None
        self.tree_supervisor: TreeSupervisor | None = None
        #: Whether the process is a sandbox's bwrap, which passes no signal on (:meth:`terminate`).
        self._in_bwrap = False
        self._end_counted = False
        self._door: Door | None = None
        #: Why the arena stopped the process itself (its door's calls), or empty.
        self._stopped_for = ""

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def start(self) -> None:
        """Start it (from the event loop's thread: see the module's notes); a restart marks
        its place in the stderr log.  :class:`BotStartError` when it cannot be started."""
        self.starts += 1
        self.stdout_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        program = self.argv[0]
        # Found here, not only by the leash's exec, so a missing program is named at once.
        missing = _cannot_run(program, self.env.get("PATH", os.defpath)) or missing_script(
            self.argv
        )
        with (
            open(self.stdout_path, "ab", opener=_private) as stdout,
            open(self.stderr_path, "ab", opener=_private) as stderr,
        ):
            if self.starts > 1:
                stderr.write(f"\n--- bisca: start {self.starts} of this bot ---\n".encode())
                stderr.flush()
            launch: Launch | None = None
            self._close_door()  # a restart's: the process it served has ended
            try:
                if missing is not None:
                    raise missing
                launch = self.wrap(self.argv)
                self._door = launch.door
                self.popen = subprocess.Popen(
                    launch.argv,
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    pass_fds=launch.pass_fds,
                    # Out of the arena's process group: a Ctrl-C at the terminal of a worker
                    # (or a stop signalled to its group) killed every bot it had launched, and
                    # their matches were recorded with every seat forfeited, a crash charged
                    # to each stranger's bot (review s59c, F1).  The arena stops its bots
                    # itself; were it killed, PR_SET_PDEATHSIG (bwrap's ``--die-with-parent``)
                    # ends them.
                    start_new_session=True,
                )
            except OSError as problem:
                self._close_door()
                failure = BotStartError(program, problem)
                stderr.write(f"bisca: {failure}\n".encode())
                raise failure from None
            finally:
                for fd in launch.pass_fds if launch is not None else ():
                    os.close(fd)  # the child has its copy
        self._stopped_for = ""
        self._in_bwrap = os.path.basename(launch.argv[0]) == "bwrap"
        if self._door is not None:
            self._door.on_flood(self._stop_for)
        if launch.cpu_budget_s is not None or launch.memory_budget_mb is not None:
            self.tree_supervisor = TreeSupervisor(
                self.popen.pid,
                launch.cpu_budget_s,
                launch.memory_budget_mb,
                namespace=self._in_bwrap,
            )

    def _stop_for(self, reason: str) -> None:
        """Its door's limits were passed: it is killed, and ``reason`` is the limit that ended
        it (:meth:`limit_hit`), unless it has already ended by itself."""
        if self.running:
            self._stopped_for = reason
            self.kill()

    def _close_door(self) -> None:
        if self._door is not None:
            self._door.close()
            self._door = None

    @property
    def exit_code(self) -> int | None:
        """The exit status once the process is over (negative: killed by that signal), else
        ``None`` (also before it was started)."""
        return None if self.popen is None else self.popen.poll()

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def end_reason(self, *, read_stderr: bool = True) -> str:
        """How the process ended, for a match's record: its exit status, and the sandbox limit
        that ended it if one did (``exited with status 153 (file size limit)``).  Without
        ``read_stderr`` only what the arena saw itself tells the limit (its signal, its door,
        its tree's budget), not the words of the bot's stderr: a public record of a bot whose
        stderr is its owner's alone (review 41: a bot that printed "MemoryError" was recorded
        as stopped by the memory limit, in public)."""
        code = self.exit_code
        if code is None:
            return "is still running"
        limit = self.limit_hit(read_stderr=read_stderr)
        return f"exited with status {code}" + (f" ({limit})" if limit else "")

    def limit_hit(self, *, read_stderr: bool = True) -> str:
        """The sandbox limit that ended the process (``cpu limit``, ...), or empty; with
        ``read_stderr``, also guessed from the words its stderr ends with."""
        if self.exit_code is not None and self._stopped_for:
            return self._stopped_for
        if self.exit_code is not None and self.tree_supervisor and self.tree_supervisor.reason:
            return self.tree_supervisor.reason
        return limit_reason(self.exit_code, self.stderr_tail() if read_stderr else [])

    def describe_exit(self) -> str:
        code = self.exit_code
        if self.popen is None:
            return "never started"
        if code is None:
            return "still running"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return f"exited with code {code}"

    async def wait(self) -> int:
        """Wait (trio) for the process to exit; its exit status."""
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
        code = popen.wait()
        self._close_door()  # its sandbox has ended, and every process in it
        if not self._end_counted:  # every end is waited for, some more than once
            self._end_counted = True
            if limit := self.limit_hit():
                metrics.SANDBOX_KILLS.labels(limit).inc()
        return code

    async def stop(self, grace: float) -> int | None:
        """Give the process ``grace`` seconds to exit on its own, then kill it; its exit
        status (``None`` if it never started).  Shielded: it runs to the end even while its
        caller is being cancelled."""
        if self.popen is None:
            return None
        with trio.CancelScope(shield=True):
            with trio.move_on_after(grace):
                await self.wait()
            self.kill()  # if it is still running
            code = await self.wait()
        return code

    def terminate(self) -> None:
        """Ask the bot to end: ``SIGTERM`` to every process under the one started, and to that
        one too unless it is the sandbox's bwrap.  bwrap passes no signal on (bubblewrap issue
        #369): it would end at once, its child then killing the bot with ``SIGKILL``, with no
        grace, or, in its first milliseconds, not at all (:meth:`kill`).  The bot's processes
        get it instead (the namespace's first process, bwrap's, ignores it: the kernel keeps
        from it every signal it has no handler for), and bwrap ends when the bot has, with its
        status.  Cheap: the tree is read once, without stopping it; :meth:`kill` then takes
        whatever did not end."""
        popen, pidfd = self.popen, self._pidfd(signal.SIGTERM)
        if popen is None or pidfd is None:
            return
        try:
            signal_descendants(popen.pid, pidfd, signal.SIGTERM)
            if not self._in_bwrap:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(pidfd, signal.SIGTERM)
        finally:
            os.close(pidfd)

    def kill(self) -> None:
        """Kill the process and every process under it (``_treelimits.kill_tree``: killing
        bwrap alone left its child behind when the bot was killed in its first milliseconds).
        It returns at once, the kill finishing in a thread of its own (it waits for the process
        to stop, the scheduler's time): :meth:`wait` for its end, which comes after every other
        process of the tree was killed."""
        popen, pidfd = self.popen, self._pidfd(signal.SIGKILL)
        if popen is not None and pidfd is not None:
            kill_tree_soon(pidfd, popen.pid, namespace=self._in_bwrap)

    def _pidfd(self, meant: signal.Signals) -> int | None:
        """A pidfd of the process while it runs (``None``: never started, or ended and waited
        for).  It is opened, then the process checked not waited for yet: a pidfd of the
        process itself, never of another given its pid since.  If none can be opened (the
        arena's descriptors are spent) the process is sent the signal ``meant`` by its pid, as
        before trees were killed, and ``None`` returned: a kill never does nothing (review 51)."""
        popen = self.popen
        if popen is None or popen.poll() is not None:
            return None
        try:
            pidfd = os.pidfd_open(popen.pid)
        except OSError as problem:
            log.warning(
                "bot process %d (%s): no pidfd of it (%s): %s sent to it alone",
                popen.pid,
                self.stderr_path.name,
                problem.strerror,
                meant.name,
            )
            with contextlib.suppress(ProcessLookupError):
                popen.send_signal(meant)  # (not waited for yet: the pid is still its own)
            return None
        if popen.poll() is not None:
            os.close(pidfd)
            return None
        return pidfd

    def stderr_tail(self, lines: int = 8) -> list[str]:
        """The last non-blank lines of the process's stderr log, to show why a bot failed."""
        try:
            text = read_tail(self.stderr_path, STDERR_TAIL_BYTES).decode("utf-8", "replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if line.strip()][-lines:]

    def stderr_text(self, lines: int = 8) -> str:
        """:meth:`stderr_tail` as one block of text."""
        return "\n".join(self.stderr_tail(lines))
