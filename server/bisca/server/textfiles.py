"""Files read within bounds: the text files a person hands Bisca (a server's settings, a
tournament's plan), where a device or a pipe named as one (``/dev/zero``) read without end until
memory ran out (review 53); and the end of a log a bot wrote, however long it grew."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "MAX_TEXT_FILE_BYTES",
    "cut_to_tail",
    "read_bounded",
    "read_regular_file",
    "read_tail",
    "read_text_file",
]

#: Far more than any settings file or tournament plan needs (a 500-bot plan is a few kB).
MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024


#: The most a PEM file (a certificate chain, a key, a CA bundle) may hold: a certificate is a
#: few KiB and a system's whole CA bundle about 200 KiB; ``/dev/zero`` named as a
#: certificate grew a server to 23 GB before the kernel killed it (review s59b, M1).
MAX_PEM_BYTES = 1024 * 1024


#: Why a path that is not a regular file, nor a folder, is not read.
NOT_REGULAR = "not a regular file (a device, a pipe, a socket?)"


def read_regular_file(path: Path, most_bytes: int) -> bytes:
    """The bytes of the regular file ``path``; ``OSError`` naming why when it is missing, not
    a regular file or larger than ``most_bytes``.  It is opened without blocking, so a FIFO
    with no writer is refused, not waited on (review s57c: ``open`` of one blocked before
    the check)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # (before ``fdopen``, whose refusal of a folder named the fd)
        os.close(fd)
        raise OSError("a folder, not a file" if stat.S_ISDIR(mode) else NOT_REGULAR)
    with os.fdopen(fd, "rb") as file:
        return _read_at_most(file, most_bytes)


def read_bounded(path: Path, most_bytes: int) -> bytes:
    """The bytes of the file ``path``, a pipe's too (read as a pipe is, once its writer
    comes), no more than ``most_bytes`` of them: ``OSError`` past it, said before a byte of
    a regular file is read (review s57c: ``/dev/zero`` named as a log read 6 GB in 15 s)."""
    with path.open("rb") as file:
        return _read_at_most(file, most_bytes)


def _read_at_most(file: BinaryIO, most_bytes: int) -> bytes:
    info = os.fstat(file.fileno())
    if stat.S_ISREG(info.st_mode) and info.st_size > most_bytes:
        raise OSError(f"larger than {most_bytes:,} bytes")
    data = file.read(most_bytes + 1)
    if len(data) > most_bytes:
        raise OSError(f"larger than {most_bytes:,} bytes")
    return data


def read_text_file(path: Path, most_bytes: int = MAX_TEXT_FILE_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (:func:`read_regular_file`'s refusals),
    ``UnicodeDecodeError`` when it is not UTF-8."""
    # A byte-order mark some editors write is no TOML error.
    return read_regular_file(path, most_bytes).decode("utf-8-sig")


def read_tail(path: Path, size: int) -> bytes:
    """The last ``size`` bytes of the file at ``path`` (``OSError`` when it cannot be read)."""
    with path.open("rb") as file:
        file.seek(max(0, os.fstat(file.fileno()).st_size - size))
        return file.read(size)


def cut_to_tail(path: Path, size: int) -> None:
    """Keep only the last ``size`` bytes of the file at ``path``, in place (its mode stays),
    and no more disk than they need: it is written again from nothing, which also gives back
    blocks reserved past its end (``fallocate`` with ``FALLOC_FL_KEEP_SIZE``)."""
    with path.open("r+b") as file:
        info = os.fstat(file.fileno())
        if info.st_size <= size and info.st_blocks * 512 <= info.st_size + _BLOCK_SLACK:
            return
        file.seek(max(0, info.st_size - size))
        last = file.read(size)
        file.seek(0)
        file.truncate()  # to nothing first: that frees the blocks past the end as well
        file.write(last)


#: Disk a file may hold past its bytes (whole blocks, a file system's own preallocation)
#: before :func:`cut_to_tail` writes it again.
_BLOCK_SLACK = 1 << 20
