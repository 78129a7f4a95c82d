"""The rows the store's repositories return, as typed records.

Bots, matches, their seats and tournaments' planned matches are the server's shared records
(:mod:`bisca.server.records`); these are the ones only the store has: a stored log, a seat's
stderr, a stored tournament, a worker, a rating as kept and each rating update of a game's
history.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import NamedTuple

from ._ratings import Rating


@dataclass(frozen=True)
class StoredLog:
    """A complete match log kept in a shared store, and the key that signed it."""

    match_id: str
    data: bytes
    log_hash: str
    public_key: str


@dataclass(frozen=True)
class KeptLog:
    """A match's log as the store records it: where it is, its final hash (``None``: it is
    not complete) and, in a shared store, a complete log's bytes."""

    path: str
    final_hash: str | None
    contents: bytes | None = None


@dataclass(frozen=True)
class SeatOutput:
    """What one launched seat of a match wrote, as the store keeps it: the last
    :data:`MAX_SEAT_OUTPUT` bytes of its stderr and of its stdout (``None``: not kept, as for
    the matches played before the store kept a seat's stdout)."""

    match_id: str
    seat: int
    stderr: bytes
    stdout: bytes | None


#: The most of each of a seat's output streams the store keeps (its end), and an owner's page
#: shows.
MAX_SEAT_OUTPUT = 64 * 1024


@dataclass(frozen=True)
class StoredTournament:
    """A tournament as the store keeps it: ``spec`` is its file's text (empty for one that
    only ran locally before migration 6); ``seed`` the one its plan was dealt from (``None``
    for a plan stored before migration 12)."""

    name: str
    game: str
    source: str
    spec: str
    seed: int | None = None


@dataclass(frozen=True)
class WorkerRecord:
    """A ``bisca worker`` process as the store knows it (``seen_at``: its last heartbeat)."""

    name: str
    host: str
    pid: int
    concurrency: int
    started_at: str
    seen_at: str
    stopped_at: str | None
    note: str
    running: tuple[str, ...] = ()
    #: The lease it announced (``None``: a worker of an older version, which announced none).
    lease_seconds: float | None = None

    def alive(self, at: datetime, default_lease_seconds: float) -> bool:
        """Whether it beat within its own lease (``default_lease_seconds`` if it gave none)."""
        if self.stopped_at is not None:
            return False
        seen = datetime.fromisoformat(self.seen_at.replace("Z", "+00:00"))
        lease = default_lease_seconds if self.lease_seconds is None else self.lease_seconds
        return at - seen <= timedelta(seconds=lease)


class UnfinishedMatch(NamedTuple):
    """A match still waiting or running, with the server that runs it (``None`` for matches
    created before servers were recorded)."""

    match_id: str
    server: str | None


@dataclass(frozen=True)
class StoredRating:
    """A bot's current rating in a game, with the running statistics of its results
    (Welford's mean and sum of squared deviations)."""

    game: str
    bot: str
    mu: float
    sigma: float
    matches: int
    result_mean: float
    result_m2: float
    updated_at: str

    @property
    def rating(self) -> Rating:
        return Rating(self.mu, self.sigma)


@dataclass(frozen=True)
class RatingUpdate:
    """One bot's rating update by one match: a row of its game's rating history."""

    match_id: str
    bot: str
    game: str
    rank: int
    result: float
    mu_before: float
    sigma_before: float
    mu: float
    sigma: float
    created_at: str


class FinishedMatch(NamedTuple):
    """What rating a match that was just recorded finished needs of its row."""

    game: str
    rated: bool


# ---- a league for strangers: accounts, their tokens, their bots and versions ---------------


class AccountStatus(StrEnum):
    """An account's standing.  A suspended account's bots stop playing and it cannot sign in;
    a deleted one is kept (its name is never given again, its results stay) with every token
    revoked."""

    ACTIVE = "active"
    SUSPENDED = "suspended"
    DELETED = "deleted"


@dataclass(frozen=True)
class AccountRecord:
    name: str
    status: AccountStatus
    created_at: str
    status_changed_at: str
    #: The note of the invite code it was created with (``None``: open registration).
    invite: str | None


@dataclass(frozen=True)
class InviteRecord:
    """An invite code as kept: only its hash, and who used it."""

    code_hash: str
    note: str
    created_at: str
    used_by: str | None
    used_at: str | None


class TokenKind(StrEnum):
    """An API token (the command line, a connected bot) or a browser's session."""

    API = "api"
    SESSION = "session"


@dataclass(frozen=True)
class TokenRecord:
    """A token without its secret: ``id`` is its public part (``bisca_at_ID_SECRET``)."""

    id: str
    account: str
    kind: TokenKind
    label: str
    created_at: str
    expires_at: str | None
    revoked_at: str | None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class VersionKind(StrEnum):
    """A version the arena builds and runs (uploaded), or one its owner runs and dials in."""

    HOSTED = "hosted"
    CONNECTED = "connected"


class VersionState(StrEnum):
    """Where a version stands: each step of the gate in turn, then on the ladder or not."""

    BUILDING = "building"
    CHECKING = "checking"
    VALIDATING = "validating"
    ACTIVE = "active"
    FAILED = "failed"
    RETIRED = "retired"

    @property
    def in_gate(self) -> bool:
        return self in (VersionState.BUILDING, VersionState.CHECKING, VersionState.VALIDATING)


#: The moves a version's state may make (anything else is a bug, refused by the store).
VERSION_MOVES: dict[VersionState, frozenset[VersionState]] = {
    VersionState.BUILDING: frozenset(
        {VersionState.CHECKING, VersionState.FAILED, VersionState.RETIRED}
    ),
    VersionState.CHECKING: frozenset(
        {VersionState.VALIDATING, VersionState.FAILED, VersionState.RETIRED}
    ),
    VersionState.VALIDATING: frozenset(
        {VersionState.ACTIVE, VersionState.FAILED, VersionState.RETIRED}
    ),
    VersionState.ACTIVE: frozenset({VersionState.RETIRED}),
    VersionState.FAILED: frozenset(),
    VersionState.RETIRED: frozenset(),
}


class VersionStep(StrEnum):
    """A step of the gate; its output is kept for the owner."""

    UNPACK = "unpack"
    BUILD = "build"
    CHECK = "check"
    VALIDATION = "validation"


@dataclass(frozen=True)
class StepRecord:
    step: VersionStep
    passed: bool
    output: str
    started_at: str
    finished_at: str


@dataclass(frozen=True)
class BotVersionRecord:
    """One version of a hosted bot (``mybot v3``), rated under :attr:`player`."""

    bot: str
    account: str
    version: int
    kind: VersionKind
    #: SHA-256 over the version's files (``sha256:HEX``), or the connected bot's own.
    fingerprint: str
    #: The manifest (``bisca-bot.toml``) as submitted, text.
    manifest: str
    state: VersionState
    reason: str
    created_at: str
    updated_at: str
    #: The address it was uploaded from (an IPv6 one by its /64), whose disk budget it counts
    #: against; ``None`` where it did not come over the web.  The operator's to read, not
    #: shown to other accounts.
    sent_from: str | None = None

    @property
    def label(self) -> str:
        return f"{self.bot} v{self.version}"

    @property
    def player(self) -> str:
        """The name it plays and is rated under (bot names hold no dot, so no clash)."""
        return f"{self.bot}.v{self.version}"
