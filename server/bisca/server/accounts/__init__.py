"""A league for strangers: who may open an account and how it signs in (``_registration.py``),
what one account may submit (``_limits.py``), and taking a submission (``_intake.py``): its
archive unpacked as a stream with every hostile member refused (``_archive.py``), its manifest
checked against its files (``_manifest.py``), each refusal its own error (``_refusals.py``).
The store keeps the accounts, tokens and versions (:mod:`bisca.server.store`); the web serves
them (``bisca.server.web``); :mod:`bisca.server.hosting` builds and checks each version.
"""

from bisca.server.sandbox import fingerprint, fingerprint_folder

from ._archive import (
    LEFT_OUT,
    MAX_DEPTH,
    MAX_PATH,
    Unpacked,
    pack_folder,
    unpack,
)
from ._attempts import UploadHold
from ._intake import (
    build_folder,
    check_disk,
    connect_version,
    folder_bytes,
    kept_bytes,
    kept_folders,
    over_budget,
    take_submission,
    version_folder,
)
from ._limits import SubmissionLimits
from ._manifest import (
    MANIFEST,
    BotLanguage,
    Manifest,
    check_against_files,
    parse_manifest,
    read_manifest,
)
from ._refusals import (
    AccountFull,
    ArchiveRefused,
    ArchiveTooLarge,
    DiskFull,
    LimitReached,
    ManifestError,
    NameTaken,
    SubmissionRefused,
    TooManyVersions,
)
from ._registration import (
    MAX_API_TOKENS,
    MAX_SESSIONS,
    REMEMBERED_TOKENS,
    SESSION_DAYS,
    LeagueAccounts,
    Registration,
)

__all__ = [
    "LEFT_OUT",
    "MANIFEST",
    "MAX_API_TOKENS",
    "MAX_DEPTH",
    "MAX_PATH",
    "MAX_SESSIONS",
    "REMEMBERED_TOKENS",
    "SESSION_DAYS",
    "AccountFull",
    "ArchiveRefused",
    "ArchiveTooLarge",
    "BotLanguage",
    "DiskFull",
    "LeagueAccounts",
    "LimitReached",
    "Manifest",
    "ManifestError",
    "NameTaken",
    "Registration",
    "SubmissionLimits",
    "SubmissionRefused",
    "TooManyVersions",
    "Unpacked",
    "UploadHold",
    "build_folder",
    "check_against_files",
    "check_disk",
    "connect_version",
    "fingerprint",
    "fingerprint_folder",
    "folder_bytes",
    "kept_bytes",
    "kept_folders",
    "over_budget",
    "pack_folder",
    "parse_manifest",
    "read_manifest",
    "take_submission",
    "unpack",
    "version_folder",
]
