"""What a league lets one account submit, all configurable (``bisca serve --submission-limit
KEY=VALUE``); each refusal names the limit and its value."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from bisca.server.errors import ConfigError


@dataclass(frozen=True)
class SubmissionLimits:
    #: The archive as uploaded, bytes (checked against Content-Length and while it streams).
    archive_bytes: int = 8 * 1024 * 1024
    #: Every file of the archive together, unpacked, bytes (counted while it unpacks).
    unpacked_bytes: int = 64 * 1024 * 1024
    #: Files and folders in the archive.
    files: int = 2000
    #: The files of every version of one account that are still kept, together, bytes (a
    #: failed or retired version's are removed once its matches are over): without it an
    #: account's passing versions, each with a blob under ``unpacked_bytes``, added 1.3 GiB a
    #: day for good (review s56b).
    account_bytes: int = 256 * 1024 * 1024
    #: The files kept of the versions uploaded from one address (an IPv6 one by its /64),
    #: whichever accounts sent them, bytes: an address opens five accounts an hour, so the
    #: budget per account alone let one address keep ~30 GiB a day (review s56d).
    address_bytes: int = 1024 * 1024 * 1024
    #: The room the league's disk keeps free, MiB: an upload is refused while the uploads'
    #: disk has less free than this beyond ``unpacked_bytes`` (many addresses together).
    disk_reserve_mb: int = 1024
    #: Versions one account may submit in 24 hours.
    submissions_per_day: int = 20
    #: Versions of one bot active or on their way through the gate at once.
    active_versions: int = 3
    #: A build's wall-clock seconds and memory (address space) in the sandbox.
    build_s: int = 300
    build_memory_mb: int = 2048
    #: The space a build may write: its private /tmp, where a C++ build's folder is.
    build_disk_mb: int = 512
    #: The check step's wall-clock seconds, every check together (a sample bot takes 3 s; a
    #: bot that let every one of its waits run out held the gate 23 s a check, ~11 minutes a
    #: version, while every other owner's version waited: review 38d).
    check_s: int = 180
    #: How long the validation match waits for its bots to connect (a bot that never does
    #: fails its version: "bots not connected after 30 s").
    validation_join_s: int = 30

    def with_settings(self, settings: list[str]) -> SubmissionLimits:
        """These limits with ``KEY=VALUE`` settings over them (whole numbers from 1)."""
        known = {field.name for field in fields(self)}
        changed: dict[str, int] = {}
        for setting in settings:
            key, equals, value = setting.partition("=")
            key = key.strip().replace("-", "_")
            if not equals or key not in known:
                raise ConfigError(
                    f"bad submission limit {setting!r}: expected KEY=VALUE, KEY one of "
                    f"{', '.join(sorted(known))}"
                )
            if not value.strip().isdigit() or int(value) < 1:
                raise ConfigError(f"submission limit {key} must be a whole number from 1")
            changed[key] = int(value)
        return replace(self, **changed)
