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
with an :data:`IN_USE` that nobody holds yet; a process killed between making the folder and
that rename leaves a folder with none, which is left alone (as is everything not ours: another
user's folder, one whose name lacks :data:`PREFIX`, ``check-bot``'s kept output).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

#: Every such folder's name starts with this.
PREFIX = "bisca-"
#: The lock file in each folder.
IN_USE = ".bisca-in-use"
#: A place is swept at most this often by one process (a listing of ``/tmp`` is not free, and
#: the ladder makes a copy per match).
SWEEP_EVERY_S = 600.0

_last_swept: dict[str, float] = {}


@contextlib.contextmanager
def temporary_folder(kind: str, parent: Path | None = None) -> Iterator[Path]:
    """A fresh folder ``PARENT/bisca-KIND-XXXXXXXX`` (the system's temporary folder by
    default), only this user's, held as in use until the block ends and then removed; the
    abandoned ones in the same place are removed first (:func:`sweep_abandoned`)."""
    where = Path(tempfile.gettempdir()) if parent is None else parent
    key = str(where)
    now = time.monotonic()
    if now - _last_swept.get(key, -SWEEP_EVERY_S) >= SWEEP_EVERY_S:
        _last_swept[key] = now
        sweep_abandoned(where)
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=where))
    try:
        held = _hold(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(held)


def _hold(folder: Path) -> int:
    """Lock the folder's :data:`IN_USE` file for this process (open until it is closed)."""
    pending = folder / (IN_USE + ".new")
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
        entries = list(os.scandir(parent))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
            continue
        if _remove_if_abandoned(Path(entry.path)):
            removed += 1
    if removed:
        log.info("removed %d temporary folder(s) of stopped processes from %s", removed, parent)
    return removed


def _remove_if_abandoned(folder: Path) -> bool:
    try:
        descriptor = os.open(folder / IN_USE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # none (not one of ours, or its owner died before locking), or a link
        return False
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its owner is running
            return False
        shutil.rmtree(folder, ignore_errors=True)
        return not folder.exists()
    finally:
        os.close(descriptor)
