"""Which folders may be a bot's own: bound into its sandbox whole, so nothing of anyone else's
may be in them.

A shared folder (``/``, ``/tmp``, ``/var/tmp``, ``/dev/shm``, a home folder, ``/home``) holds
other users' files and sockets: a bot file lying directly in one would bind all of it.  And a
unix socket anywhere in a bot's folder would let the bot connect to whatever host program
listens on it (the sandbox's network namespace does not cover sockets reached by path): such
a folder is refused too, the socket named, until it is moved out.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
from pathlib import Path

#: Folders that are everyone's, whatever the machine.
SHARED_FOLDERS = tuple(
    Path(name) for name in ("/", "/tmp", "/var/tmp", "/dev/shm", "/home", "/root", "/run")
)
#: Uids from here up are people's (Debian's FIRST_UID), whose home folders are refused.
_FIRST_PERSON_UID = 1000


def shared_folders() -> set[Path]:
    """The shared folders, with every person's home folder and the arena's own."""
    homes = {
        Path(entry.pw_dir)
        for entry in pwd.getpwall()
        if entry.pw_uid == 0 or entry.pw_uid >= _FIRST_PERSON_UID
    }
    return {*SHARED_FOLDERS, *homes, Path.home()}


def check_own_folder(folder: Path) -> None:
    """:class:`PermissionError` naming ``folder`` when it cannot be a bot's own: a shared
    folder, or one holding a unix socket (named)."""
    real = folder.resolve()
    if real in {shared.resolve() for shared in shared_folders()}:
        raise PermissionError(
            errno.EPERM,
            "a shared folder cannot be a bot's folder (the sandbox would show the bot all of "
            "it): put the bot's files in a folder of their own",
            str(folder),
        )
    socket = _socket_in(real)
    if socket is not None:
        raise PermissionError(
            errno.EPERM,
            "a bot's folder may not hold a unix socket (the bot could connect to the program "
            f"listening on it): move {socket} out of the folder",
            str(folder),
        )


def _socket_in(folder: Path) -> Path | None:
    """The first unix socket under ``folder`` (links not followed), or ``None``."""
    for root, folders, files in os.walk(folder):
        for name in (*files, *folders):
            path = Path(root) / name
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if stat.S_ISSOCK(mode):
                return path
    return None
