"""Why a submission is refused: each refusal names what was wrong, and the web answers it with
its own status."""

from __future__ import annotations

from bisca.server.errors import BiscaError


class SubmissionRefused(BiscaError):
    """A submission the league does not take; :attr:`status` is the web's answer to it."""

    status = 400


class ArchiveRefused(SubmissionRefused):
    """An archive that is not a plain folder of files, or climbs out of it."""


class ArchiveTooLarge(SubmissionRefused):
    """An archive, or what it unpacks to, over a limit."""

    status = 413


class ManifestError(SubmissionRefused):
    """A ``bisca-bot.toml`` that is missing, malformed, or says what the files do not hold."""


class LimitReached(SubmissionRefused):
    """An account or a bot at one of its limits (submissions a day, active versions)."""

    status = 429


class AccountFull(LimitReached):
    """An account whose versions' files, with the new one's, would pass its disk budget."""

    status = 409


class DiskFull(SubmissionRefused):
    """An upload while the league's disk keeps less free than its reserve."""

    status = 507

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        #: What the operator is told (the disk's free space, its folder): not the sender.
        self.detail = detail


class TooManyVersions(LimitReached):
    """A bot with as many versions active or in the gate as its limit allows."""

    status = 409


class NameTaken(SubmissionRefused):
    """A bot name another account (or the operator) holds."""

    status = 409
