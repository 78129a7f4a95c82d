"""A hosted version's files copied into a folder of their own, outside the data directory, for
the sandbox to bind: the gate's steps and the ladder's matches run the version from there, so
that the data directory stays hidden from every bot (the sandbox covers it).  A version that
passed its build runs with what the build made and its language's SDK (:func:`runnable_copy`),
in the gate's validation and on the ladder alike."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bisca.server.accounts import (
    BotLanguage,
    build_folder,
    kept_folders,
    parse_manifest,
    version_folder,
)
from bisca.server.store import BotVersionRecord
from bisca.server.tempfolders import temporary_folder

from ._builds import Toolchains, bot_command, give_node_sdk


def _outside_data() -> Path:
    """Where copies go: the system's temporary folder (never the data directory)."""
    return Path(tempfile.gettempdir())


@contextmanager
def version_copy(uploads: Path, version: BotVersionRecord) -> Iterator[Path]:
    """The version's files in a fresh folder (0755, readable by the sandbox's uids), named
    after its bot; gone when the block ends."""
    with temporary_folder(f"copy-{version.player}", _outside_data()) as holder:
        holder.chmod(0o755)
        folder = holder / version.bot
        shutil.copytree(version_folder(uploads, version.bot, version.version), folder)
        folder.chmod(0o755)
        yield folder


def built_folder(uploads: Path, version: BotVersionRecord) -> Path:
    """Where what a version's build made is kept (:func:`build_folder`)."""
    return build_folder(uploads, version.bot, version.version)


def kept_files(uploads: Path, version: BotVersionRecord) -> list[Path]:
    """The folders the league keeps of a version (:func:`kept_folders`) that are there."""
    return [f for f in kept_folders(uploads, version.bot, version.version) if f.exists()]


def forget_files(uploads: Path, version: BotVersionRecord) -> bool:
    """Remove a version's uploaded files and what its build made (a failed or retired version
    never runs again; its manifest, fingerprint and steps' output stay in the store); whether
    there was anything to remove.  ``OSError`` when some of it could not be removed."""
    kept = kept_files(uploads, version)
    for folder in kept:
        shutil.rmtree(folder)
        with contextlib.suppress(OSError):  # (the bot's folder, once its last version's gone)
            folder.parent.rmdir()
    return bool(kept)


@contextmanager
def runnable_copy(
    uploads: Path, version: BotVersionRecord, toolchains: Toolchains
) -> Iterator[list[str]]:
    """The command of a version that passed its build, ready to run for as long as the block
    lasts: its files copied out (:func:`version_copy`) with what its build made (a C++
    program) and the SDK its language is given (Node's)."""
    manifest = parse_manifest(version.manifest)
    with version_copy(uploads, version) as folder:
        if manifest.language is BotLanguage.NODE:
            give_node_sdk(folder, toolchains)
        elif manifest.language is BotLanguage.CPP:
            shutil.copytree(built_folder(uploads, version), folder, dirs_exist_ok=True)
        yield bot_command(manifest, folder)
