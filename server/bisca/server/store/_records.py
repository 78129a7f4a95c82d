"""The rows the store's repositories return, as typed records.

Bots, matches, their seats and tournaments' planned matches are the server's shared records
(:mod:`bisca.server.records`); these are the ones only the store has: a stored log, a stored
tournament, a worker, a rating as kept and each rating update of a game's history.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
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
class StoredTournament:
    """A tournament as the store keeps it: ``spec`` is its file's text (empty for one that
    only ran locally before migration 6)."""

    name: str
    game: str
    source: str
    spec: str


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
