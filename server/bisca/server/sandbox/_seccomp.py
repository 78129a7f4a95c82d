"""The system calls a sandboxed bot may not make: a seccomp filter bubblewrap installs
(``--seccomp FD``) just before it runs the bot's command.

Namespaces and a uid of its own shut a bot in; these calls are ways back out, or into the
kernel's least-trodden code, that no card-playing program needs:

* the **kernel keyrings** (``keyctl``, ``add_key``, ``request_key``): a bot inherits the
  arena's session keyring, and possessing a keyring is enough to read its keys, whatever the
  uid;
* **new namespaces** (``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*`` flag) and
  ``mount``/``umount2``/``pivot_root``: root of a user namespace of its own, a bot could mount
  and reach kernel code that is otherwise root's only;
* **io_uring** (``io_uring_setup``/``_enter``/``_register``), which performs I/O without the
  calls this filter sees;
* ``bpf``, ``perf_event_open``, ``ptrace``, ``process_vm_readv``/``_writev``: other processes'
  memory and the kernel's;
* **memory no process maps**: System V shared memory and message queues (``shmget``,
  ``msgget``), which outlive every process that made them until the sandbox ends, and
  ``memfd_create`` (a memfd's pages, written and not mapped, are in no process's memory): the
  arena's budget for a bot's memory sums its processes' (``_treelimits.py``), and these would
  hold gigabytes beside it;
* **disk behind a file's size**: ``fallocate`` (with ``FALLOC_FL_KEEP_SIZE`` it reserves
  blocks without growing the file, so ``RLIMIT_FSIZE`` never sees them: a bot's stdout, a file
  on the arena's disk, held gigabytes under a 4 MiB limit).  It fails with ``EOPNOTSUPP``, as
  on a file system without it: the C library's ``posix_fallocate`` then writes the range,
  which the file size limit bounds;
* **socket buffers grown past the system's default** (``setsockopt`` of ``SO_SNDBUF``,
  ``SO_RCVBUF`` and their ``FORCE`` variants): what waits in a socket is kernel memory, in no
  process's, and a buffer raised to ``net.core.wmem_max`` queues megabytes per socket (80
  socket pairs held 1.2 GiB beside a process of 22 MiB).  At the default size the same costs
  about twenty times less; what remains is in ``docs/trust.md``.

* **a session of its own** (``setsid``): where the kernel's autogroups are on (the default of
  most distributions' kernels), the scheduler weighs each session as one, so a bot whose forty
  processes each made one took forty shares of the machine, slowed the server's pages a
  hundredfold and failed another owner's version at its gate (review s56b).  A bot stays in
  the session bwrap gives it (``--new-session``): one share, as each other bot's and the
  arena's own.  Lowering that share below the arena's was tried and not kept: a bot's clock
  is the wall's, and any busy process of the machine then took its time;

A denied call fails with ``EPERM`` (the bot is told, and may carry on) rather than killing the
bot.  ``clone3`` passes its flags in a structure the filter cannot read, so it fails with
``ENOSYS``: the C library then falls back to ``clone``, whose flags are checked.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile

#: Denied whatever their arguments.
DENIED_CALLS = (
    "keyctl",
    "add_key",
    "request_key",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsmount",
    "open_tree",
    "move_mount",
    "bpf",
    "perf_event_open",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "shmget",
    "msgget",
    "memfd_create",
    "setsid",
)
#: ``setsockopt``'s options, at level ``SOL_SOCKET`` (asm-generic/socket.h), that size a socket's
#: buffers: denied.
SOCKET_BUFFER_OPTIONS = {"SO_SNDBUF": 7, "SO_RCVBUF": 8, "SO_SNDBUFFORCE": 32, "SO_RCVBUFFORCE": 33}
SOL_SOCKET = 1
#: The bits of a system call's argument that a C ``int`` parameter is read from.
INT_BITS = 0xFFFF_FFFF
#: ``clone``'s flags that make a new namespace (linux/sched.h): a ``clone`` with any is denied.
NEW_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}


@functools.cache
def filter_program() -> bytes:
    """The compiled filter (classic BPF, as ``--seccomp`` reads it), built once."""
    # Imported here: it loads libseccomp at once, which an arena without the sandbox (or a
    # machine without the library, told so when it launches a sandboxed bot) never needs.
    import pyseccomp as seccomp

    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    denied = seccomp.ERRNO(errno.EPERM)
    for call in DENIED_CALLS:
        rules.add_rule(denied, call)
    # clone's first argument is its flags on x86-64 and arm64 alike; the rules of one call
    # are alternatives, so one per flag denies a clone with any of them.
    for flag in NEW_NAMESPACE_FLAGS.values():
        rules.add_rule(denied, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(seccomp.ERRNO(errno.EOPNOTSUPP), "fallocate")
    # The level and the option are C ints: the kernel reads the low 32 bits of each register,
    # so only those are compared (a bot that set the high ones got past an exact compare).
    for option in SOCKET_BUFFER_OPTIONS.values():
        rules.add_rule(
            denied,
            "setsockopt",
            seccomp.Arg(1, seccomp.MASKED_EQ, INT_BITS, SOL_SOCKET),
            seccomp.Arg(2, seccomp.MASKED_EQ, INT_BITS, option),
        )
    with tempfile.TemporaryFile() as compiled:
        rules.export_bpf(compiled)
        compiled.seek(0)
        return compiled.read()


def filter_fd() -> int:
    """A new file descriptor to read the filter from, for one bwrap (which reads it to the end,
    so each sandbox needs its own); the caller passes it to the child and closes it."""
    fd = os.memfd_create("bisca-seccomp", os.MFD_CLOEXEC)
    os.write(fd, filter_program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
