"""A launched seat's output files beside its match (``seatN.stdout.log``, ``seatN.stderr.log``),
as the league keeps them for the seat's owner: their ends read for the store, then the files
removed (or, when the store could not keep them, cut to those ends).

The sandbox bounds each file by its size limit only (64 MiB), and a bot owns what it writes:
under a server that is not root the sandbox's user namespace makes the bot the file's owner,
so it may change its mode through its own descriptor (``fchmod(1, 0)``) to keep the server
from reading or cutting it.  The server's mode is put back before each read, and a file that
still cannot be cut is removed (review s55)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from bisca.server.datadir import OutputStream
from bisca.server.textfiles import read_tail

#: The mode the sandbox gives a seat's output files: its owner's alone.
_OWNER_ONLY = stat.S_IRUSR | stat.S_IWUSR

#: Disk a kept output may hold beyond its bytes (whole blocks, a file system's own
#: preallocation) before :func:`cut_to_tail` writes it again to give the rest back.
ALLOCATION_SLACK = 1 << 20


def read_kept(path: Path, size: int) -> bytes:
    """The last ``size`` bytes of a seat's output file, for the store.  A bot may have changed
    its file's mode through its own descriptor (``fchmod``: under a server that is not root the
    sandbox's user namespace makes it the file's owner), so the server's mode is put back
    first; a file that still cannot be read is removed (the server owns the match's folder):
    no output stays beside a match unbounded.  An ``OSError`` when it could not be read (it is
    gone then)."""
    try:
        return _read_as_the_server(path, size)
    except OSError:
        _remove(path)
        raise


def give_back(path: Path, size: int, *, stored: bool) -> None:
    """A seat's output file once :func:`read_kept` read it: removed when the store holds what
    was read (``stored``: one copy, the one every machine reads); else cut to its last ``size``
    bytes, which the owner's page reads on this machine, or removed when it cannot be cut."""
    if stored:
        _remove(path)
        return
    try:
        cut_to_tail(path, size)
    except OSError:
        _remove(path)


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        path.unlink()


def output_tail(path: Path, size: int, stream: OutputStream) -> bytes:
    """The last ``size`` bytes of a seat's output file, read as :func:`read_kept` reads it
    but left whole; a line saying why when it cannot be read."""
    try:
        return _read_as_the_server(path, size)
    except OSError as problem:
        return unreadable(stream, problem)


def _read_as_the_server(path: Path, size: int) -> bytes:
    """The file's last ``size`` bytes, its mode put back to the server's first (its bot may
    have changed it through its own descriptor)."""
    os.chmod(path, _OWNER_ONLY)
    return read_tail(path, size)


def unreadable(stream: OutputStream, problem: OSError) -> bytes:
    """What is kept, and shown to its owner, of a seat's ``stream`` that could not be read."""
    return f"(Bisca could not read this seat's {stream}: {problem.strerror or problem})\n".encode()


def cut_to_tail(path: Path, size: int) -> None:
    """Keep only the last ``size`` bytes of the file at ``path``, in place (its mode stays:
    a bot's output is its owner's alone), and no more disk than they need: blocks reserved
    past the file's end (``fallocate`` with ``FALLOC_FL_KEEP_SIZE``, which a sandboxed bot may
    not call, an unsandboxed one may) are given back too."""
    with path.open("r+b") as file:
        info = os.fstat(file.fileno())
        end = info.st_size
        if end <= size and info.st_blocks * 512 <= end + ALLOCATION_SLACK:
            return
        file.seek(max(0, end - size))
        last = file.read(size)
        file.seek(0)
        file.truncate()  # to nothing first: that frees the blocks past the end as well
        file.write(last)
