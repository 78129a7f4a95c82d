"""The fingerprint of a bot's files: what a league records of each submitted version, and a
tournament of each bot's folder per match (a bot changed between two runs is named)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from pathlib import Path

_CHUNK = 64 * 1024


def fingerprint(root: Path, files: list[str] | tuple[str, ...]) -> str:
    """SHA-256 over every file's path and content hash, in path order: the same files give
    the same fingerprint wherever they lie, and any change of a byte or a name changes it."""
    digest = hashlib.sha256()
    for name in sorted(files):
        content = hashlib.sha256()
        with (root / name).open("rb") as file:
            while chunk := file.read(_CHUNK):
                content.update(chunk)
        digest.update(f"{name}\0{content.hexdigest()}\n".encode())
    return f"sha256:{digest.hexdigest()}"


def fingerprint_folder(root: Path, left_out: Collection[str] = ()) -> str:
    """The fingerprint of every regular file under ``root`` (links are not followed), the
    files under a folder named in ``left_out`` (``__pycache__``, ``.git``) aside."""
    files = [
        relative.as_posix()
        for path in root.rglob("*")
        if path.is_file()
        and not path.is_symlink()
        and not set((relative := path.relative_to(root)).parts[:-1]) & set(left_out)
    ]
    return fingerprint(root, files)
