"""The sandbox every bot the arena launches runs in: bubblewrap, a uid of its own, rlimits.

A bot is a stranger's program.  It gets exactly what it needs to play and nothing else:

* **Namespaces.**  ``bwrap`` with new IPC, PID, network, UTS and cgroup namespaces and
  ``--die-with-parent``: the bot sees its own processes only (no sibling's ``/proc``, no
  arena's memory), has no network at all, and dies with the arena.  The arena is reached
  through a unix socket of the bot's own (its door: ``_doors.py``) bound into the sandbox at
  :data:`SOCKET_IN_SANDBOX`.
* **A uid of its own.**  bwrap runs as root without a user namespace (so the bot's uid is a
  real one, not root in disguise), then ``setpriv`` drops to a uid drawn for this bot alone,
  with no groups and no capabilities: files of the operator (mode 0600) stay unreadable even
  where they are visible, and ``RLIMIT_NPROC`` counts this bot's processes only.
* **A read-only world.**  A fresh root holds the system (``/usr`` and the links into it, a few
  files of ``/etc``), the interpreter and the project's code (read-only), the bot's own folder
  (read-only), a private empty ``/tmp``, and ``/proc``/``/dev`` of its own.  Nothing of the data
  directory: where it lies inside a bound folder, an empty tmpfs covers it.
* **An environment of two variables** (``BISCA_ADDRESS``, ``BISCA_TOKEN``) plus ``PATH``,
  ``HOME=/tmp`` and ``LANG``, and ``BISCA_SEED`` where the run gives the bot a seed.
* **Limits** (``prlimit``): CPU seconds, address space, processes, open files, file size;
  the private ``/tmp`` is a tmpfs of ``tmp_mb`` (its files are RAM the address space limit
  does not count); the CPU seconds and the memory are also one budget each for the bot's
  whole process tree (the arena's supervisor, :mod:`._treelimits`); :func:`limit_reason` names
  the one that killed a bot.
* **System calls** (:mod:`._seccomp`): no keyrings, namespaces, mounts, io_uring, bpf,
  perf events, ptrace, System V shared memory and message queues, memfds, or a session of
  its own (under the kernel's autogroups, one share of the CPU per session).
* **Its folder of its own**: a shared folder (``/``, ``/tmp``, a home folder ...) is refused as
  a bot's folder, and so is a folder holding a unix socket (a host listener would be reachable
  through it); the bot starts in its own folder.

Why not a user namespace: as root, ``bwrap --unshare-user --uid N`` maps the bot's uid N to
root outside, so every file the operator owns would be the bot's own.  Why not unprivileged
bwrap: the interpreter may live under a home folder (``/root/.pyenv``) that other uids cannot
enter, and binding it needs root.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import bisca.client
import bisca.engine
import bisca.v1
import bisca.wire
from bisca.server.errors import BiscaError, ConfigError
from bisca.server.textfiles import read_regular_file

from ._launch import Launch
from ._ownfolder import check_own_folder
from ._seccomp import filter_fd

#: Where the bot's door into the arena (``_doors.py``) appears inside its sandbox.
SOCKET_IN_SANDBOX = "/run/bisca/arena.sock"
#: A bot's uid is drawn from here: far above the uids of people and system services, so no
#: file of the machine belongs to a bot.  Two bots sharing one would need a 1 in 10^8 draw.
BOT_UIDS = range(1_000_000_000, 1_100_000_000)
#: Files of /etc a program may need to start (the loader's cache, time zone, certificates,
#: the names of uids): world-readable ones only.
_ETC = (
    "alternatives",
    "ca-certificates",
    "group",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "passwd",
    "ssl",
)
_SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_MB = 1024 * 1024


class SandboxUnavailable(BiscaError):
    """The sandbox cannot run here (no bubblewrap)."""


@dataclass(frozen=True)
class Limits:
    """What one bot process may use.  Settable per tournament and per bot (``[limits]`` and a
    bot's ``limits``), and for ``bisca match`` with ``--limit KEY=VALUE``."""

    #: CPU seconds over the bot's whole life (a tournament bot plays every match on one
    #: process), all its processes together: past it the arena kills the whole tree (and the
    #: kernel sends SIGXCPU to a single process past it, SIGKILL a second later).
    cpu_s: int = 3600
    #: Memory: each process's address space (``RLIMIT_AS``: allocations beyond it fail), and
    #: all its processes' memory together (past it the arena kills the whole tree).
    memory_mb: int = 2048
    #: Processes and threads of the bot's uid (``RLIMIT_NPROC``).
    processes: int = 64
    open_files: int = 256
    #: The largest file the bot may write (in its private /tmp; SIGXFSZ beyond).
    file_mb: int = 64
    #: The size of the private /tmp (a tmpfs: RAM that ``memory_mb`` does not count, so a bot
    #: may hold up to ``memory_mb + tmp_mb``); writes beyond it fail with ENOSPC.
    tmp_mb: int = 256

    @classmethod
    def keys(cls) -> list[str]:
        return [item.name for item in fields(cls)]

    def merged(self, overrides: Mapping[str, object], source: str = "limits") -> Limits:
        """These limits with ``overrides`` (from a file or the command line) applied;
        :class:`ConfigError` naming a key or a value that cannot be used."""
        known = self.keys()
        values: dict[str, int] = {}
        for key, value in overrides.items():
            if key not in known:
                raise ConfigError(f"{source}: unknown limit {key!r}; known: {', '.join(known)}")
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**7:
                raise ConfigError(f"{source}: {key} must be a whole number from 1 to 10000000")
            values[key] = value
        return replace(self, **values)

    def prlimit_args(self) -> list[str]:
        return [
            f"--cpu={self.cpu_s}:{self.cpu_s + 1}",
            f"--as={self.memory_mb * _MB}",
            f"--nproc={self.processes}",
            f"--nofile={self.open_files}",
            f"--fsize={self.file_mb * _MB}",
        ]


def find_bwrap() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(
            "the bot sandbox needs bubblewrap, which is not installed: `apt-get install "
            "bubblewrap` (Debian's package), or run the bots unsandboxed with --no-sandbox "
            "(`sandbox = false` in a tournament file) if you trust them"
        )
    return path


def limit_reason(exit_code: int | None, stderr_tail: Sequence[str]) -> str:
    """The limit that ended a bot process, as the match records it (empty: none did)."""
    if exit_code is None:
        return ""
    signals = {signal.SIGXCPU: "cpu limit", signal.SIGXFSZ: "file size limit"}
    for number, reason in signals.items():
        if exit_code in (-number, 128 + number):
            return reason
    text = "\n".join(stderr_tail[-5:])
    clues = (
        (
            "memory limit",
            ("MemoryError", "Cannot allocate memory", "out of memory", "std::bad_alloc"),
        ),
        (
            "process limit",
            ("Cannot fork", "can't start new thread", "Resource temporarily unavailable"),
        ),
        ("open files limit", ("Too many open files",)),
        ("file size limit", ("File size limit exceeded", "File too large")),
        ("tmp space limit", ("No space left on device",)),
    )
    for reason, words in clues:
        if any(word in text for word in words):
            return reason
    return ""


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


@dataclass(frozen=True)
class Sandbox:
    """How the bots of one arena are sandboxed: the folders that must stay hidden (the data
    directory), and the default limits."""

    hidden: tuple[Path, ...]
    limits: Limits = Limits()

    def command(
        self,
        argv: Sequence[str],
        *,
        socket: Path,
        folders: Sequence[Path],
        own: Sequence[Path] = (),
        limits: Limits | None = None,
    ) -> Launch:
        """``argv`` as it runs in the sandbox, seeing ``own`` (the bot's own folders: it starts
        in the first, else in its private /tmp) and ``folders`` (its interpreter's) read-only,
        and ``socket`` (its door into the arena: ``_doors.py``) at :data:`SOCKET_IN_SANDBOX`;
        their paths must be absolute.  :class:`PermissionError` naming a folder that cannot be
        a bot's (:func:`check_own_folder`)."""
        for folder in own:
            check_own_folder(folder)
        for folder in (*own, *folders):
            if os.stat(folder).st_mode & 0o005 != 0o005:
                # The bot runs as a uid of its own: a folder only its owner may enter is
                # closed to it (and would fail later with a less clear message).
                why = (
                    "the bot runs as another user and cannot read it: make it readable (chmod o+rx)"
                )
                raise PermissionError(errno.EACCES, why, str(folder))
        limits = limits or self.limits
        uid = secrets.choice(BOT_UIDS)
        command = [find_bwrap(), *self._namespaces(uid)]
        command += self._filesystem([*own, *folders], limits, socket)
        command += ["--chdir", str(own[0]) if own else "/tmp"]
        seccomp = filter_fd()
        command += ["--seccomp", str(seccomp), "--"]
        command += ["/usr/bin/prlimit", *limits.prlimit_args(), "--"]
        if os.geteuid() == 0:
            command += [
                "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
            ]  # fmt: skip
        return Launch(
            [*command, *argv],
            pass_fds=(seccomp,),
            cpu_budget_s=limits.cpu_s,
            memory_budget_mb=limits.memory_mb,
        )

    def environment(self, token: str) -> dict[str, str]:
        """The bot's whole environment (given to bwrap, which passes it on as it is: a
        ``--setenv`` would put the token on a command line any local user can read)."""
        return {
            "BISCA_ADDRESS": f"unix:{SOCKET_IN_SANDBOX}",
            "BISCA_TOKEN": token,
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "LANG": "C.UTF-8",
        }

    @staticmethod
    def _namespaces(uid: int) -> list[str]:
        common = [
            "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session",
        ]  # fmt: skip
        if os.geteuid() == 0:
            return common
        # Not root: a user namespace is the only way in; the bot's uid is then the operator's
        # outside it (setpriv cannot change it), which the operator's note on the sandbox says.
        return [*common, "--unshare-user", "--uid", str(uid % 60000 + 1000), "--gid", "1000"]

    def _filesystem(self, folders: Sequence[Path], limits: Limits, socket: Path) -> list[str]:
        links: list[str] = []
        binds = [Path("/usr")]
        for name in _SYSTEM_LINKS:
            host = Path("/") / name
            if host.is_symlink():
                links += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                binds.append(host)
        binds += [Path("/etc") / name for name in _ETC if _exists(Path("/etc") / name)]
        visible = [*_code_folders(), *folders]
        binds += visible
        # The folders above each bound one, made first: bwrap would make them 0700 (root's),
        # which the bot's uid could not enter.
        above = {parent for path in binds for parent in path.parents if parent != Path("/")}
        # The private /tmp first: a bot's folder may lie under the host's /tmp.
        args = ["--proc", "/proc", "--dev", "/dev"]
        # No pseudo-terminals: bwrap's /dev has a devpts of its own whose ptys come from the
        # host's shared pool (kernel.pty.max), which a bot could empty; no bot needs one.
        args += ["--perms", "0755", "--size", "4096", "--tmpfs", "/dev/pts"]
        args += ["--remount-ro", "/dev/pts"]
        args += ["--perms", "1777", "--size", str(limits.tmp_mb * _MB), "--tmpfs", "/tmp"]
        for parent in sorted(above, key=lambda p: (len(p.parts), str(p))):
            if parent != Path("/tmp"):
                args += ["--perms", "0755", "--dir", str(parent)]
        for path in binds:
            args += ["--ro-bind", str(path), str(path)]
        args += links
        args += ["--perms", "0755", "--dir", "/run/bisca"]
        args += ["--bind", str(socket), SOCKET_IN_SANDBOX]
        for hidden in self.hidden:  # covered, whether it is inside a bound folder or holds one
            if any(inside(hidden, other) and not inside(other, hidden) for other in self.hidden):
                continue  # covered with the folder it is in (its cover would show its name)
            if any(inside(hidden, path) or inside(path, hidden) for path in visible):
                args += ["--tmpfs", str(hidden.resolve())]
        return args


def inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _code_folders() -> list[Path]:
    """The interpreter and the code a bot may run: Python's installation and the virtual
    environment, and the folders the ``bisca`` packages are really in (an editable install
    links to the source tree).  Folders under /usr are bound already."""
    candidates = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent]
    # Where ``import bisca`` looks, and where its files really are.
    candidates += [Path(entry) for entry in sys.path if entry and (Path(entry) / "bisca").is_dir()]
    for module in (bisca.client, bisca.engine, bisca.v1, bisca.wire):
        candidates.append(Path(str(module.__file__)).resolve().parent)
    candidates.append(Path(__file__).resolve().parents[1])  # the server (bisca.server)
    # The Node SDK of the clone the arena is run in (the current folder), which the starters of
    # ``bisca new-bot node`` require (they are written against the same clone, ``--clone``).
    node_sdk = Path.cwd() / "clients" / "node"
    if (node_sdk / "package.json").is_file():
        candidates.append(node_sdk)
    found: list[Path] = []
    for candidate in candidates:
        path = candidate.resolve()
        if inside(path, Path("/usr")) or not path.is_dir():
            continue
        if any(inside(path, other) for other in found):
            continue
        found = [other for other in found if not inside(other, path)] + [path]
    return sorted(found)


def bot_folders(argv: Sequence[str]) -> list[Path]:
    """The folders a bot command runs from, bound read-only: the folder of its program when it
    is a path (a compiled bot) and of every argument (or word of a shell script given as an
    argument) that is a file (``python mybot.py``),
    each widened to the Node package it is in (``node bots/random.js`` needs
    ``../node_modules``); folders of the interpreter and of Bisca are bound anyway.  The
    arguments' folders come first: the bot starts in the first folder (``python bot.py`` in
    the folder of ``bot.py``, not of ``python``)."""
    files: list[Path] = []
    for argument in argv[1:]:
        files.append(Path(argument))
        if " " in argument:  # a shell's script (``sh -c 'node bot.js; ...'``): its words too
            with contextlib.suppress(ValueError):
                words = shlex.shlex(argument, posix=True, punctuation_chars=True)
                files += [Path(word) for word in words]
    if argv and os.sep in argv[0]:
        files.append(Path(argv[0]))
    folders: list[Path] = []
    for file in files:
        if not file.is_file() or not (file.is_absolute() or names_a_path(str(file))):
            continue
        folder = file.resolve().parent
        for ancestor in (folder, *list(folder.parents)[:2]):
            if (ancestor / "package.json").is_file():
                folder = ancestor
                break
        if folder not in folders:
            folders.append(folder)
    return folders


#: The most of a bot's ``package.json`` the arena reads (for its SDK here, and at its build).
PACKAGE_JSON_BYTES = 256 * 1024
#: The one package a bot may name from outside its folder: Bisca's Node SDK.
NODE_SDK_PACKAGE = "bisca-client"
#: Trees never bound for a bot's dependency: the kernel's, and ``/proc``, whose links
#: (``/proc/self/cwd``, ``/proc/PID/root``) the server would follow into other processes'
#: folders.
_NEVER_DEPENDED_ON = (Path("/proc"), Path("/sys"), Path("/dev"))


def node_dependency_folders(folders: Sequence[Path]) -> list[Path]:
    """The Node SDK the bots' folders depend on from outside themselves: the ``"file:PATH"``
    of the ``bisca-client`` dependency of the ``package.json`` in one of ``folders`` (``bisca
    new-bot node`` writes one naming the clone's SDK), so a bot can ``require`` it wherever the
    arena runs.  It is bound like the bot's own folders (and checked as such) only where it is
    that SDK: a folder whose ``package.json`` names the package ``bisca-client``.  Any other
    dependency binds nothing (review s58d: a hosted Python bot's package.json named
    ``file:/proc``, ``/etc`` and the server's folder, and its sandbox showed them), and so does
    a folder another user of the machine could change or swap before bwrap binds it
    (:func:`_held_by_the_arena`)."""
    found: list[Path] = []
    for folder in folders:
        dependencies = _package_field(folder, "dependencies")
        if not isinstance(dependencies, dict):
            continue
        value = dependencies.get(NODE_SDK_PACKAGE)
        if not isinstance(value, str) or not value.startswith("file:"):
            continue
        given = folder / value.removeprefix("file:")
        if _never_depended_on(given):  # refused before a link of /proc is followed
            continue
        target = given.resolve()
        if _never_depended_on(target) or not target.is_dir():
            continue
        if _package_field(target, "name") != NODE_SDK_PACKAGE or not _held_by_the_arena(target):
            continue
        if target not in found and target not in folders:
            found.append(target)
    return found


def _never_depended_on(path: Path) -> bool:
    # One leading slash (POSIX keeps ``//proc``, which named /proc past this check: s58f).
    absolute = Path("/" + os.path.normpath(os.path.abspath(path)).lstrip("/"))
    return any(absolute == tree or tree in absolute.parents for tree in _NEVER_DEPENDED_ON)


def _held_by_the_arena(folder: Path) -> bool:
    """Whether ``folder`` (resolved) and the folders above it are root's or the arena's user's,
    and no other user may change it or swap one of them: bwrap binds the path after it was
    checked, and a folder under ``/tmp`` swapped for a link to ``/proc`` in between was bound
    as ``/proc`` (review s58f: 7 tries in 20).  A folder above it that others may write is
    one whose sticky bit keeps them from renaming what is not theirs (``/tmp``)."""
    arena = os.geteuid()
    for depth, part in enumerate((folder, *folder.parents)):
        try:
            info = os.lstat(part)
        except OSError:
            return False
        if stat.S_ISLNK(info.st_mode) or info.st_uid not in (0, arena):
            return False
        if info.st_mode & 0o022 and (depth == 0 or not info.st_mode & stat.S_ISVTX):
            return False
    return True


def _package_field(folder: Path, field: str) -> object:
    """``field`` of the ``package.json`` in ``folder`` (``None`` where it cannot be read: not
    a regular file, too large, not JSON, or nested past the parser's depth)."""
    try:
        package = json.loads(read_regular_file(folder / "package.json", PACKAGE_JSON_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    return package.get(field) if isinstance(package, dict) else None


def absolute_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with its relative paths made absolute (the bot starts in its own folder) and
    its program found on the operator's ``PATH`` (the sandbox's own ``PATH`` is the system's
    only): ``python my_bot.py`` runs the ``python`` the operator would run.  A Python
    interpreter is named by its real executable, so a pyenv shim (a script that needs pyenv's
    own tree) becomes the interpreter it stands for."""
    # The program absolute, not resolved: a virtualenv's ``bin/python`` is a link to its base
    # interpreter, and run through the link's target it would not be in the virtualenv any
    # more.  Its file arguments named from the folders they really are in (:func:`bot_folders`
    # binds those; a link to them, ``bots/`` linked from elsewhere, is not in the sandbox), but
    # by their own name: an argument may be an interpreter too (``env X=1 .venv/bin/python``).
    command = [os.path.abspath(a) if not os.path.isabs(a) and names_a_path(a) else a for a in argv]
    command[1:] = [
        _real_folder(a) if names_a_path(a) and Path(a).is_file() else a for a in command[1:]
    ]
    if command and os.sep not in command[0]:
        command[0] = shutil.which(command[0]) or command[0]
    if command:
        found = python_installation(command[0])
        if found is not None:
            command[0] = found.executable
    return command


def names_a_path(word: str, base: Path | None = None) -> bool:
    """Whether a word of a bot command names a file or folder that exists, as the arena reads
    it: a word with a ``/`` in it (``bots/mine.py``, ``./bot``), or a file whose name has a
    suffix (``my_bot.py``).  A bare word (``random``, ``bot``) is never a path, even when the
    current folder holds one of that name: ``bisca bot random`` run beside a ``bot/`` folder
    stays ``bisca bot random``.  Relative words are looked up in ``base`` (default: the
    current folder)."""
    if not word or word.startswith("-"):
        return False
    path = Path(word) if base is None else base / word
    if not _exists(path):
        return False
    if os.sep in word:
        return True
    return path.suffix != "" and path.is_file()


def argv_from(argv: Sequence[str], folder: Path) -> list[str]:
    """``argv`` with the relative words that name a path in ``folder`` (:func:`names_a_path`)
    made absolute there: a tournament file's commands are read from the file's folder."""
    return [
        str(folder / word) if not os.path.isabs(word) and names_a_path(word, folder) else word
        for word in argv
    ]


def _real_folder(argument: str) -> str:
    """A file's path through the real folder it is in, keeping its own name (a link)."""
    path = Path(argument)
    return str(path.parent.resolve() / path.name)


@dataclass(frozen=True)
class PythonInstallation:
    """Where a Python interpreter really is: its executable and the folders it imports from
    (a virtual environment's and its base installation's)."""

    executable: str
    folders: tuple[Path, ...]


_PYTHON_NAME = re.compile(r"python[0-9.]*")
_ASK_PYTHON = "import sys; print(sys.executable); print(sys.prefix); print(sys.base_prefix)"


@functools.cache
def python_installation(program: str) -> PythonInstallation | None:
    """The installation of ``program`` when it is a Python interpreter (named ``python``,
    ``python3``, ``python3.11`` ...), asked once per program: the author's own virtual
    environment, with the SDK installed in it (``pip install ./clients/python``), is bound into
    the sandbox read-only.  ``None`` for any other program, or one that does not answer."""
    if not _PYTHON_NAME.fullmatch(Path(program).name) or os.sep not in program:
        return None
    try:
        answer = subprocess.run(
            [program, "-I", "-c", _ASK_PYTHON],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None  # not runnable: the bot's start says why, as for any program
    executable, *prefixes = answer.stdout.splitlines()
    folders = tuple(dict.fromkeys(Path(prefix) for prefix in prefixes if prefix))
    return PythonInstallation(executable, folders)


def interpreter_folders(argv: Sequence[str]) -> list[Path]:
    """The folders of the Python installation a bot command runs on (none for a compiled bot
    or another interpreter): bound beside the bot's own folders."""
    found = python_installation(argv[0]) if argv else None
    if found is None:
        return []
    return [folder for folder in found.folders if folder.is_dir()]
