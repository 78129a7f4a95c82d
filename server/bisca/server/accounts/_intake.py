"""Taking a submission: the limits of its account and bot, the archive unpacked, the manifest
checked against its files, and a new version recorded (``building``: the gate of
:mod:`bisca.server.hosting` takes it from there).

A version's files live in ``DATA/submissions/BOT/vN/``, readable by the sandboxed uids that
build and run it, never written again.  Whatever a refused submission unpacked is removed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from bisca.server.sandbox import fingerprint_folder
from bisca.server.store import (
    BotVersionRecord,
    Store,
    SubmittedTooMany,
    TooManyLive,
    VersionError,
    VersionKind,
    VersionState,
    VersionStep,
    check_hosted_bot_name,
    now,
    stamp,
)

from ._archive import Unpacked, unpack
from ._limits import SubmissionLimits
from ._manifest import MANIFEST, read_manifest
from ._refusals import (
    AccountFull,
    DiskFull,
    LimitReached,
    ManifestError,
    NameTaken,
    SubmissionRefused,
    TooManyVersions,
)

log = logging.getLogger("bisca.accounts")


def version_folder(uploads: Path, bot: str, version: int) -> Path:
    return uploads / bot / f"v{version}"


def build_folder(uploads: Path, bot: str, version: int) -> Path:
    """Where what a version's build made is kept: ``DATA/builds/BOT/vN``, beside the
    submissions (``DATA/submissions``) and as hidden from the sandbox as they are."""
    return uploads.parent / "builds" / bot / f"v{version}"


def _manifest_root(unpacked: Unpacked) -> Path:
    """Where the manifest is: at the top, or at the top of the archive's one folder."""
    if (unpacked.root / MANIFEST).is_file():
        return unpacked.root
    tops = {name.split("/", 1)[0] for name in unpacked.files}
    if len(tops) == 1:
        inner = unpacked.root / tops.pop()
        if (inner / MANIFEST).is_file():
            return inner
    raise ManifestError(f"the archive has no {MANIFEST} at its top (`bisca new-bot` writes one)")


def _day_ago() -> str:
    return stamp(datetime.now(UTC) - timedelta(days=1))


def versions_of_the_day(store: Store, account: str) -> int:
    """The versions ``account`` made in the last 24 hours (``submissions_per_day``)."""
    return store.versions.submitted_since(account, _day_ago())


def _per_day(limits: SubmissionLimits, account: str, made: str) -> LimitReached:
    return LimitReached(
        f"{account} {made} {limits.submissions_per_day} versions in the last 24 hours, "
        "the limit: try again later"
    )


def _live_limit(limits: SubmissionLimits, bot: str) -> TooManyVersions:
    return TooManyVersions(
        f"{bot} has {limits.active_versions} versions active or being checked, the limit: "
        f"retire one first (`bisca retire {bot} VERSION`)"
    )


def kept_folders(uploads: Path, bot: str, version: int) -> tuple[Path, Path]:
    """The folders the league keeps of a version: its uploaded files, what its build made."""
    return version_folder(uploads, bot, version), build_folder(uploads, bot, version)


def kept_bytes(uploads: Path, version: BotVersionRecord) -> int:
    """The disk the files the league keeps of ``version`` take, uploaded and built (those of
    an ended version count until they are removed), measured on the disk."""
    return sum(
        folder_bytes(folder) for folder in kept_folders(uploads, version.bot, version.version)
    )


#: What each file and folder counts at the least: a block of the file system and its inode.
#: Counted by size alone, 1,998 empty files (a 29 KB upload) counted 8 KiB, took 700 KiB and
#: 2,000 inodes, and one address could run a disk out of inodes in days (review s57).
ENTRY_BYTES = 4096


def folder_bytes(folder: Path) -> int:
    """The disk ``folder`` takes (0 if it is not there): the folder and each file and folder
    in it by its blocks where they are more than its size, and :data:`ENTRY_BYTES` at the
    least (review s56d: 1,970 files of one byte counted 3.5 KB and took 8.2 MB)."""
    if not folder.exists():
        return 0
    total = ENTRY_BYTES
    for parent, folders, names in os.walk(folder):
        for name in (*folders, *names):
            try:
                info = os.lstat(os.path.join(parent, name))
            except FileNotFoundError:
                continue  # (removed meanwhile: an ended version's files)
            total += max(info.st_size, info.st_blocks * 512, ENTRY_BYTES)
    return total


def over_budget(
    store: Store,
    uploads: Path,
    limits: SubmissionLimits,
    account: str,
    sent_from: str | None,
    adding: int | None,
) -> AccountFull | None:
    """The refusal of ``adding`` bytes more to the files kept of ``account``'s versions
    (``account_bytes``) or of the versions uploaded from the address ``sent_from``, whichever
    accounts sent them (``address_bytes``: one address opens five accounts an hour, so a
    budget per account alone let it keep ~30 GiB a day, review s56d); ``None`` if both hold
    it.  ``adding`` is 0 once the kept files count it (a build's program, kept), and ``None``
    before an upload is unpacked (it adds :data:`ENTRY_BYTES` at the least).  The kept
    files are counted as the store recorded them (a sum, not a walk of every file: review
    s57); a version made before it recorded them is measured once, here."""
    for version in store.versions.unmeasured(account, sent_from):
        store.versions.set_kept_bytes(version.bot, version.version, kept_bytes(uploads, version))
    mib = 1024 * 1024
    budgets = [
        (
            f"{account}'s versions",
            f"the account's {limits.account_bytes / mib:g} MiB (account_bytes)",
            limits.account_bytes,
            store.versions.kept_bytes_of(account),
        )
    ]
    if sent_from is not None:
        budgets.append(
            (
                "the versions sent from your address, by any account,",
                f"an address's {limits.address_bytes / mib:g} MiB (address_bytes)",
                limits.address_bytes,
                store.versions.kept_bytes_sent_from(sent_from),
            )
        )
    for whose, limit, budget, held in budgets:
        if held + (ENTRY_BYTES if adding is None else adding) <= budget:
            continue
        kept = f"{whose} keep {held / mib:.1f} MiB of files"
        if adding is None:
            said = f"{kept}, all of {limit}"
        elif adding:
            said = f"{kept}, and this one's {adding / mib:.1f} MiB would pass {limit}"
        else:
            said = f"{kept} with what this build made, more than {limit}"
        return AccountFull(
            f"{said}: retire a version first (its files are removed once its matches are "
            "over, within 10 minutes)"
        )
    return None


#: The inodes the reserve keeps free beside its bytes, per MiB of ``disk_reserve_mb`` (65,536
#: for the default GiB): files of no bytes take inodes, not space (review s57).
RESERVED_INODES_PER_MB = 64


def check_disk(uploads: Path, limits: SubmissionLimits) -> None:
    """Refuse an upload (:class:`~._refusals.DiskFull`) while the disk of ``uploads`` has less
    free than ``disk_reserve_mb`` beyond the most an upload unpacks, or fewer free inodes than
    the reserve's (:data:`RESERVED_INODES_PER_MB`) beyond an upload's ``files``: whatever many
    addresses send together, the league's own store and logs keep that room.  The refusal's
    ``detail`` is for the operator (:class:`DiskWarnings` says it)."""
    mib = 1024 * 1024
    disk = next(folder for folder in (uploads, *uploads.parents) if folder.exists())
    usage = os.statvfs(disk)
    free = usage.f_bavail * usage.f_frsize
    inodes = limits.disk_reserve_mb * RESERVED_INODES_PER_MB + limits.files
    # A file system that sets no bound on its inodes says it has none (f_files is 0).
    enough_inodes = usage.f_files == 0 or usage.f_favail >= inodes
    if free >= limits.disk_reserve_mb * mib + limits.unpacked_bytes and enough_inodes:
        return
    raise DiskFull(
        "the league's disk is nearly full: it takes no upload now (its operator is told)",
        f"{free / mib:.0f} MiB and {usage.f_favail} inodes free on the disk of {uploads}, under "
        f"disk_reserve_mb ({limits.disk_reserve_mb} MiB, "
        f"{limits.disk_reserve_mb * RESERVED_INODES_PER_MB} inodes) with an upload's "
        f"unpacked_bytes ({limits.unpacked_bytes / mib:.0f} MiB) and files: retire versions or "
        "give the league more disk",
    )


#: The least time between two lines saying uploads were refused for the disk.
DISK_WARNING_EVERY_S = 60.0


class DiskWarnings:
    """Tells the operator of the uploads refused for the disk, in one line per
    :data:`DISK_WARNING_EVERY_S` at most, counting the refusals between: a 507 costs a
    stranger nothing, and a line for each wrote 499 KB of log in 5 s (review s57b)."""

    def __init__(
        self,
        every_s: float = DISK_WARNING_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._every_s = every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._said_at: float | None = None
        self._unsaid = 0

    def refused(self, problem: DiskFull) -> None:
        now = self._clock()
        with self._lock:
            self._unsaid += 1
            if self._said_at is not None and now - self._said_at < self._every_s:
                return
            count, self._unsaid, self._said_at = self._unsaid, 0, now
        log.warning(
            "uploads refused: %s (%d refused since the last such line)", problem.detail, count
        )


#: How old a folder an unpack left in ``incoming`` is before it is taken for abandoned (an
#: unpack takes seconds; a server stopped hard in one leaves its folder, up to
#: ``unpacked_bytes``, uncounted: review s57b).
ABANDONED_AFTER_S = 3600.0


def _forget_abandoned(incoming: Path) -> None:
    """Remove what unpacks stopped hard left in ``incoming``."""
    now = time.time()
    for entry in incoming.iterdir():
        with contextlib.suppress(OSError):
            if now - entry.lstat().st_mtime > ABANDONED_AFTER_S:
                shutil.rmtree(entry)


def take_submission(
    store: Store,
    limits: SubmissionLimits,
    uploads: Path,
    account: str,
    archive: IO[bytes],
    sent_from: str | None = None,
) -> BotVersionRecord:
    """Record ``account``'s submission read from ``archive``, uploaded from the address
    ``sent_from`` (``None``: not over the web), or refuse it
    (:class:`~._refusals.SubmissionRefused`, naming why).  ``submissions_per_day`` is
    counted before the archive is unpacked, and again in the transaction that adds the
    version: uploads sent at once cannot pass it together."""
    if versions_of_the_day(store, account) >= limits.submissions_per_day:
        raise _per_day(limits, account, "submitted")
    check_disk(uploads, limits)  # (again: the disk may have filled while the body came)
    started = now()
    incoming = uploads / "incoming"
    incoming.mkdir(mode=0o755, parents=True, exist_ok=True)
    _forget_abandoned(incoming)
    scratch = incoming / secrets.token_hex(8)
    try:
        unpacked = unpack(archive, scratch, limits)
        root = _manifest_root(unpacked)
        manifest = read_manifest(root)
        # Of the bot's folder, so an archive of the folder itself and one of its files agree.
        files_fingerprint = fingerprint_folder(root)
        if store.versions.live(manifest.name) >= limits.active_versions:
            raise _live_limit(limits, manifest.name)
        adding = folder_bytes(root)
        full = over_budget(store, uploads, limits, account, sent_from, adding)
        if full is not None:
            raise full
        try:
            version = store.versions.add(
                account,
                manifest.name,
                VersionKind.HOSTED,
                files_fingerprint,
                manifest.text,
                most_since=(limits.submissions_per_day, _day_ago()),
                most_live=limits.active_versions,
                sent_from=sent_from,
                kept_bytes=adding,
            )
        except SubmittedTooMany:
            # The account's other uploads, sent with this one, were added while it unpacked.
            raise _per_day(limits, account, "submitted") from None
        except TooManyLive:
            raise _live_limit(limits, manifest.name) from None
        except VersionError as problem:
            raise NameTaken(str(problem)) from None
        folder = version_folder(uploads, version.bot, version.version)
        folder.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        root.rename(folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    store.versions.record_step(
        version.bot,
        version.version,
        VersionStep.UNPACK,
        True,
        f"{len(unpacked.files)} files, {unpacked.size} bytes, {files_fingerprint}\n"
        f"{manifest.language} bot for {', '.join(manifest.games)}: "
        f"{' '.join(manifest.command)}\n",
        started,
    )
    return version


def connect_version(
    store: Store, limits: SubmissionLimits, account: str, bot: str
) -> tuple[BotVersionRecord, str]:
    """A new *connected* version of ``account``'s bot (made with its first version): active at
    once (it runs on its owner's machine, so there is nothing to build or check here), and a
    bot token it dials in with, under its player name (``adabot.v3``), shown this once.  The
    same limits as a submission's: versions a day, versions active at once."""
    try:
        check_hosted_bot_name(bot)
    except VersionError as problem:
        raise SubmissionRefused(str(problem)) from None
    if versions_of_the_day(store, account) >= limits.submissions_per_day:
        raise _per_day(limits, account, "made")
    if store.versions.live(bot) >= limits.active_versions:
        raise _live_limit(limits, bot)
    try:
        version = store.versions.add(
            account,
            bot,
            VersionKind.CONNECTED,
            "",
            "",
            state=VersionState.ACTIVE,
            most_since=(limits.submissions_per_day, _day_ago()),
            most_live=limits.active_versions,
        )
    except SubmittedTooMany:
        raise _per_day(limits, account, "made") from None
    except TooManyLive:
        raise _live_limit(limits, bot) from None
    except VersionError as problem:
        raise NameTaken(str(problem)) from None
    return version, store.bots.add(version.player)
