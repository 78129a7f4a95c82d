"""Temporary folders that a killed process does not leave behind for good.

The arena makes folders that live as long as something runs: a launched bot's socket folder,
a hosted bot's copy, the gate's scratch.  A process that ends normally removes them; one
killed with SIGKILL (the OOM killer, an operator's ``kill -9``) cannot, and a league server
killed now and then would fill the system's temporary folder with bots' copies.

So every such folder holds a lock for as long as it is used: a file, :data:`IN_USE`, that the
owning process keeps open with an exclusive ``flock``.  The kernel drops the lock with the
last open descriptor, however the process ends.  The next process that makes a folder in the
same place (:func:`temporary_folder`) first removes every folder of ours there whose lock it
can take: its owner is gone.  A lock, not a process id: ids are reused, and are not the same in
another PID namespace sharing the folder.

The lock file is locked under another name and renamed into place, so a folder is never seen
with an :data:`IN_USE` that nobody holds yet.  A process killed between making the folder and
that rename leaves one without: empty, or holding only the lock file under its first name.
Such a folder is removed once it has not changed for :data:`NEVER_HELD_GRACE_S` (its owner
spends microseconds there) and nobody holds that file's lock; a folder without the lock that
holds anything else is left alone, as is everything not ours (another user's folder, one whose
name lacks :data:`PREFIX`, ``check-bot``'s kept output).  A lock file that is not a regular
file of ours (a FIFO would block the open forever) is not a lock.

In the system's temporary folder the folders go in a parent of this user's own,
``bisca-UID`` (0711: the sandboxed bots may pass through it to a hosted copy, not list it), so
that what a sweep lists is ours alone: another local user filling ``/tmp`` with a million
``bisca-*`` names cannot make each sweep cost seconds.  A ``bisca-UID`` that is not a private
folder of this user's (someone else made it first) is not used: a fresh private parent per
process is, without sweeping, and a warning says why.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

#: Every such folder's name starts with this.
PREFIX = "bisca-"
#: The lock file in each folder, and its name while it is being locked.
IN_USE = ".bisca-in-use"
IN_USE_PENDING = IN_USE + ".new"
#: A folder of ours without its lock is its owner's that long at most after its last change
#: (made, then the lock file made and renamed: microseconds apart); older, the owner died.
NEVER_HELD_GRACE_S = 60.0
#: A place is swept at most this often by one process (a listing of ``/tmp`` is not free, and
#: the ladder makes a copy per match).
SWEEP_EVERY_S = 600.0

#: The names :func:`private_parent` gives (a folder's kind never starts with a digit).
_PARENT_NAME = re.compile(re.escape(PREFIX) + r"[0-9]+(-.*)?")

_last_swept: dict[str, float] = {}
#: The folders this process holds now: never swept by it, whatever a lock says (``flock`` on
#: NFS is emulated with POSIX locks, which never conflict within one process).
_held: set[str] = set()
#: The private parent used when ``bisca-UID`` is not this user's (made once per process).
_fallback_parent: Path | None = None


@contextlib.contextmanager
def temporary_folder(kind: str, parent: Path | None = None) -> Iterator[Path]:
    """A fresh folder ``PARENT/bisca-KIND-`` and eight random characters (by default in this
    user's private parent in the system's temporary folder, :func:`private_parent`), only this
    user's, held as in use until the block ends and then removed; the abandoned ones in the
    same place are removed first (:func:`sweep_abandoned`), at most once in
    :data:`SWEEP_EVERY_S`."""
    if not kind or kind[0].isdigit():
        raise ValueError(f"a temporary folder's kind starts with a letter, not {kind!r}")
    where = private_parent() if parent is None else parent
    sweep = where != _fallback_parent  # (fresh for this process: nobody else's folders are in it)
    key = str(where)
    now = time.monotonic()
    if sweep and now - _last_swept.get(key, -SWEEP_EVERY_S) >= SWEEP_EVERY_S:
        _last_swept[key] = now
        sweep_abandoned(where)
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=where))
    try:
        held = _hold(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    _held.add(str(folder))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        _held.discard(str(folder))
        os.close(held)


def private_parent() -> Path:
    """This user's parent of temporary folders: ``TMP/bisca-UID``, made 0711 if missing, used
    only if it is a folder of this user's that nobody else may write to."""
    global _fallback_parent
    uid = os.getuid()
    parent = Path(tempfile.gettempdir()) / f"{PREFIX}{uid}"
    with contextlib.suppress(FileExistsError):
        parent.mkdir(mode=0o711)
    try:
        info = parent.lstat()
    except OSError as problem:
        why = str(problem)
    else:
        if not stat.S_ISDIR(info.st_mode):
            why = "it is not a folder"
        elif info.st_uid != uid:
            why = f"it belongs to uid {info.st_uid}"
        elif info.st_mode & 0o022:
            why = f"others may write to it (mode {stat.S_IMODE(info.st_mode):o})"
        else:
            return parent
    if _fallback_parent is None:
        _fallback_parent = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{uid}-"))
        _fallback_parent.chmod(0o711)
        log.warning(
            "%s is not a private folder of this user's (%s): this process keeps its temporary "
            "folders in %s instead, and those of killed processes are not removed",
            parent,
            why,
            _fallback_parent,
        )
    return _fallback_parent


def _hold(folder: Path) -> int:
    """Lock the folder's :data:`IN_USE` file for this process (open until it is closed)."""
    pending = folder / IN_USE_PENDING
    descriptor = os.open(pending, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(pending, folder / IN_USE)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def sweep_abandoned(parent: Path) -> int:
    """Remove the folders of ours in ``parent`` whose owner is gone (their lock is free);
    returns how many.  Never raises for a folder it cannot look into or remove."""
    removed = 0
    uid = os.getuid()
    try:
        entries = os.scandir(parent)
    except OSError:
        return 0
    with entries:  # one entry at a time: a listing is not kept whole
        for entry in entries:
            try:
                if not entry.name.startswith(PREFIX) or not entry.is_dir(follow_symlinks=False):
                    continue
                if entry.stat(follow_symlinks=False).st_uid != uid or entry.path in _held:
                    continue
            except OSError:
                continue
            if _remove_if_abandoned(Path(entry.path)):
                removed += 1
    if removed:
        log.info("removed %d temporary folder(s) of stopped processes from %s", removed, parent)
    return removed


def _remove_if_abandoned(folder: Path) -> bool:
    try:
        return _remove_if_unlocked(folder, folder / IN_USE)
    except FileNotFoundError:  # not one of ours, or its owner died before its lock was in place
        return _remove_if_never_held(folder)


def _remove_if_never_held(folder: Path) -> bool:
    """A folder whose owner died between making it and renaming its lock into place: empty,
    or holding only :data:`IN_USE_PENDING`, unchanged for :data:`NEVER_HELD_GRACE_S`.  Never
    a parent (``bisca-UID``, or a process's fallback ``bisca-UID-*``): they hold no lock, are
    empty between two folders, and live as long as their processes."""
    if _PARENT_NAME.fullmatch(folder.name):
        return False
    try:
        changed = folder.lstat().st_mtime
        names = os.listdir(folder)
    except OSError:
        return False
    if time.time() - changed < NEVER_HELD_GRACE_S:
        return False  # its owner may be about to lock it
    if not names:
        with contextlib.suppress(OSError):
            folder.rmdir()
        return not folder.exists()
    if names != [IN_USE_PENDING]:
        return False  # something else lives there (check-bot's kept output has no lock)
    with contextlib.suppress(OSError):
        return _remove_if_unlocked(folder, folder / IN_USE_PENDING)
    return False


def _remove_if_unlocked(folder: Path, lock: Path) -> bool:
    """Remove ``folder`` if ``lock`` is a regular file of ours that nobody holds; raises
    ``FileNotFoundError`` when there is no ``lock``."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        descriptor = os.open(lock, flags)
    except FileNotFoundError:
        raise
    except OSError:  # a link, or not ours to open
        return False
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return False  # not a lock of ours (a FIFO, a folder, someone else's file)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its owner is running
            return False
        shutil.rmtree(folder, ignore_errors=True)
        return not folder.exists()
    finally:
        os.close(descriptor)
