"""A hosted version's files copied into a folder of their own, outside the data directory, for
the sandbox to bind: the gate's steps and the ladder's matches run the version from there, so
that the data directory stays hidden from every bot (the sandbox covers it)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bisca.server.accounts import version_folder
from bisca.server.store import BotVersionRecord


def _outside_data() -> str:
    """Where copies go: the system's temporary folder (never the data directory)."""
    return tempfile.gettempdir()


@contextmanager
def version_copy(uploads: Path, version: BotVersionRecord) -> Iterator[Path]:
    """The version's files in a fresh folder (0755, readable by the sandbox's uids), named
    after its bot; gone when the block ends."""
    holder = Path(tempfile.mkdtemp(prefix=f"{version.player}-", dir=_outside_data()))
    try:
        holder.chmod(0o755)
        folder = holder / version.bot
        shutil.copytree(version_folder(uploads, version.bot, version.version), folder)
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(holder, ignore_errors=True)
