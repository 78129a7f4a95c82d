"""Unpacking a stranger's archive: a gzipped tar, read as a stream, refused at the first
member that is not a plain file or folder inside the destination.

Why tar.gz and not zip: a tar is read front to back, each member's header (its type, name and
size) before its bytes, so every check below runs while the archive streams, before a byte of
the member is written; a zip's table of contents is at its end, so the whole archive would be
held first, and its sizes are claims the stream must be checked against anyway.  ``tar czf``
and every language's standard library write it.

What is refused, each named: an absolute path, a ``..`` anywhere in one, a name given twice,
links (symbolic and hard), devices, fifos and every other kind of member; more files than the
limit; more unpacked bytes than the limit (a member's declared size is checked before it is
read, and the decompressed stream as a whole is counted as it is read, so neither a lying
header nor a gzip bomb gets further than the limit); an archive over its own size limit; a
pax or GNU long-name header over a few KiB, or one tarfile would parse at a cost out of
proportion to its size, refused before tarfile reads it (``_tar_headers.py``).
Files are written with ``O_EXCL | O_NOFOLLOW`` and modes of the league's choosing (0644, 0755
for an executable), never the archive's owners or permissions.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from bisca.server.sandbox import fingerprint

from ._limits import SubmissionLimits
from ._refusals import ArchiveRefused, ArchiveTooLarge
from ._tar_headers import WaryTarInfo

#: The longest path in an archive, characters, and the deepest.
MAX_PATH = 240
MAX_DEPTH = 16
#: What a tar stream holds beyond its files' bytes: a 512-byte header (and padding) per member.
_HEADER_ALLOWANCE = 1024
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Unpacked:
    """A folder unpacked from an archive: its files (relative paths), their bytes in all, and
    its fingerprint (:func:`fingerprint`)."""

    root: Path
    files: tuple[str, ...]
    size: int
    fingerprint: str


class _Counted(io.RawIOBase):
    """A stream that refuses to give more than ``limit`` bytes (what ``what`` is over)."""

    def __init__(self, inner: IO[bytes], limit: int, refusal: Exception) -> None:
        self._inner = inner
        self._left = limit
        self._refusal = refusal

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(min(len(buffer), self._left + 1))
        if len(data) > self._left:
            raise self._refusal
        self._left -= len(data)
        buffer[: len(data)] = data
        return len(data)


def _member_path(member: tarfile.TarInfo) -> PurePosixPath:
    name = member.name
    shown = repr(name[:MAX_PATH])
    if not name or "\0" in name or "\\" in name or len(name) > MAX_PATH:
        raise ArchiveRefused(f"the archive holds a path that is not a plain name: {shown}")
    try:
        # tarfile keeps a byte that is not UTF-8 as a lone surrogate; no fingerprint, manifest
        # or page could show such a name.
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ArchiveRefused(f"the archive holds a path that is not UTF-8: {shown}") from None
    path = PurePosixPath(name)
    if path.is_absolute():
        raise ArchiveRefused(f"the archive holds an absolute path: {shown}")
    if ".." in path.parts:
        raise ArchiveRefused(f"the archive holds a path that climbs out with '..': {shown}")
    parts = [part for part in path.parts if part != "."]
    if not parts:
        return PurePosixPath(".")
    if len(parts) > MAX_DEPTH:
        raise ArchiveRefused(f"the archive nests folders deeper than {MAX_DEPTH}: {shown}")
    return PurePosixPath(*parts)


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return f"a symbolic link (to {member.linkname[:100]!r})"
    if member.islnk():
        return f"a hard link (to {member.linkname[:100]!r})"
    if member.ischr() or member.isblk():
        return "a device file"
    if member.isfifo():
        return "a fifo"
    return "a member that is neither a file nor a folder"


def unpack(archive: IO[bytes], destination: Path, limits: SubmissionLimits) -> Unpacked:
    """Unpack a ``.tar.gz`` read from ``archive`` into ``destination`` (a new folder), or
    refuse it (:class:`ArchiveRefused`, :class:`ArchiveTooLarge`) leaving what was written
    for the caller to remove."""
    destination.mkdir(mode=0o755)
    compressed = _Counted(
        archive,
        limits.archive_bytes,
        ArchiveTooLarge(f"the archive is over the limit of {limits.archive_bytes} bytes"),
    )
    stream_limit = limits.unpacked_bytes + (limits.files + 2) * _HEADER_ALLOWANCE
    too_much = ArchiveTooLarge(
        f"the archive unpacks to more than the limit of {limits.unpacked_bytes} bytes"
    )
    try:
        gunzipped = gzip.GzipFile(fileobj=io.BufferedReader(compressed))
        unzipped = _Counted(gunzipped, stream_limit, too_much)  # type: ignore[arg-type]
        tarred = io.BufferedReader(unzipped)
        with tarfile.open(fileobj=tarred, mode="r|", tarinfo=WaryTarInfo) as tar:
            return _members(tar, destination, limits, too_much)
    except (tarfile.TarError, gzip.BadGzipFile, zlib.error, EOFError) as problem:
        raise ArchiveRefused(f"not a gzipped tar archive (.tar.gz): {problem}") from None


def _members(
    tar: tarfile.TarFile, destination: Path, limits: SubmissionLimits, too_much: Exception
) -> Unpacked:
    seen: set[PurePosixPath] = set()
    # Every folder the archive makes, named or as a member's parent, and every file: a path
    # that is both, or lies under a file, is refused by name before anything is written there
    # (the disk's FileExistsError was a 500 and a traceback, review 38).
    folders = {PurePosixPath(".")}
    regular: set[PurePosixPath] = set()
    files: list[str] = []
    size = 0
    for member in tar:
        path = _member_path(member)
        if len(seen) >= limits.files:
            raise ArchiveTooLarge(f"the archive holds more than the limit of {limits.files} files")
        if path in seen:
            raise ArchiveRefused(f"the archive holds {str(path)!r} twice")
        seen.add(path)
        under = [parent for parent in path.parents if parent in regular]
        if under:
            raise ArchiveRefused(
                f"the archive holds {str(path)!r} under {str(under[0])!r}, which is a file"
            )
        target = destination.joinpath(*path.parts)
        if member.isdir():  # (one named as a file before is a name given twice)
            folders.update((path, *path.parents))
            target.mkdir(mode=0o755, parents=True, exist_ok=True)
            continue
        if not member.isreg():
            raise ArchiveRefused(f"the archive holds {_kind(member)}: {str(path)!r}")
        if path in folders:
            raise ArchiveRefused(f"the archive holds {str(path)!r} as a file and a folder")
        regular.add(path)
        folders.update(path.parents)
        if size + member.size > limits.unpacked_bytes:
            raise too_much
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        source = tar.extractfile(member)
        assert source is not None  # a regular file always has its bytes
        mode = 0o755 if member.mode & 0o111 else 0o644
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        with os.fdopen(descriptor, "wb") as written:
            while chunk := source.read(_CHUNK):
                size += len(chunk)
                if size > limits.unpacked_bytes:
                    raise too_much
                written.write(chunk)
        os.chmod(target, mode)  # the umask may have taken bits off
        files.append(path.as_posix())
    return Unpacked(destination, tuple(files), size, fingerprint(destination, files))


#: Folders a submission leaves out: version control, caches, a build the league does again.
LEFT_OUT = frozenset({".git", "__pycache__", "build", ".venv", "node_modules"})


def pack_folder(folder: Path) -> bytes:
    """A bot folder as the league takes it (``bisca submit``): a .tar.gz of its regular files,
    paths relative to it, :data:`LEFT_OUT` left out, owners and times not kept; a symbolic
    link in it is refused here, as the league would refuse it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if LEFT_OUT & set(relative.parts):
                continue
            if path.is_symlink():
                raise ArchiveRefused(f"{path} is a symbolic link: a league takes none")
            if path.is_file():
                info = tarfile.TarInfo(relative.as_posix())
                info.size = path.stat().st_size
                info.mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
                with path.open("rb") as file:
                    tar.addfile(info, file)
    return buffer.getvalue()
