"""A launched seat's output files beside its match (``seatN.stdout.log``, ``seatN.stderr.log``),
as the league keeps them for the seat's owner: their ends read for the store, then the files
removed, whether the store could keep what was read or not (a file left beside a match was
still shown after the store forgot it, and never removed: review s56).

The sandbox bounds each file by its size limit only (64 MiB), and a bot owns what it writes:
under a server that is not root the sandbox's user namespace makes the bot the file's owner,
so it may change its mode through its own descriptor (``fchmod(1, 0)``) to keep the server
from reading it.  The server's mode is put back before each read (review s55).  Removing a
file needs no more than the server's folder."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from bisca.server.datadir import OutputStream
from bisca.server.textfiles import read_tail

#: The mode the sandbox gives a seat's output files: its owner's alone.
_OWNER_ONLY = stat.S_IRUSR | stat.S_IWUSR


def read_kept(path: Path, size: int) -> bytes:
    """The last ``size`` bytes of a seat's output file.  A bot may have changed its file's mode
    through its own descriptor (``fchmod``: under a server that is not root the sandbox's user
    namespace makes it the file's owner), so the server's mode is put back first.  An
    ``OSError`` when it could not be read."""
    os.chmod(path, _OWNER_ONLY)
    return read_tail(path, size)


def remove_output(path: Path) -> None:
    """Remove a seat's output file once it was read (gone already, or a folder in its place:
    nothing to do)."""
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        path.unlink()


def output_tail(path: Path, size: int, stream: OutputStream) -> bytes:
    """The last ``size`` bytes of a seat's output file, read as :func:`read_kept` reads it
    but left whole; a line saying why when it cannot be read."""
    try:
        return read_kept(path, size)
    except OSError as problem:
        return unreadable(stream, problem)


def unreadable(stream: OutputStream, problem: OSError) -> bytes:
    """What is kept, and shown to its owner, of a seat's ``stream`` that could not be read."""
    return f"(Bisca could not read this seat's {stream}: {problem.strerror or problem})\n".encode()
