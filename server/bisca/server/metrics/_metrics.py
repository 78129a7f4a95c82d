"""The metrics themselves.  Labels are few and bounded (a game, an enum, a reject code, a
sandbox limit): a label a bot could choose (its name, a reason's text) would let a stranger
grow the registry without end."""

from __future__ import annotations

import enum

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from bisca.engine import GAMES

#: The process's registry (not prometheus-client's global one: what the page shows is only
#: the arena's, and a test can read it without the library's process collectors).
REGISTRY = CollectorRegistry(auto_describe=True)


class DecisionSource(enum.StrEnum):
    """Who chose a step's action: the seat's bot, or the referee's default player (a timeout,
    too many rejections, a forfeited seat)."""

    BOT = "bot"
    DEFAULT = "default"

    @classmethod
    def of(cls, substituted: bool) -> DecisionSource:
        return cls.DEFAULT if substituted else cls.BOT


class ForfeitCause(enum.StrEnum):
    TIMEOUTS = "timeouts"
    REJECTIONS = "rejections"
    #: Its bot process ended (a crash, a sandbox limit), or the person's seat was left.
    BOT_GONE = "bot_gone"


class JobOutcome(enum.StrEnum):
    """How a worker's job ended: its matches played; queued again (given back unplayed, or
    cut off by a lost store or a match that could not finish, within its give-backs); failed
    for good (a bot that cannot start, give-backs used up)."""

    PLAYED = "played"
    QUEUED_AGAIN = "queued_again"
    FAILED = "failed"


def forfeit_cause(rejections_ran_out: bool) -> ForfeitCause:
    return ForfeitCause.REJECTIONS if rejections_ran_out else ForfeitCause.TIMEOUTS


MATCHES_RUNNING = Gauge(
    "bisca_matches_running", "Matches being played now", ["game"], registry=REGISTRY
)
MATCHES_FINISHED = Counter(
    "bisca_matches_finished", "Matches played to their end and recorded", ["game"],
    registry=REGISTRY,
)  # fmt: skip
MATCHES_FAILED = Counter(
    "bisca_matches_failed", "Matches that failed (bots absent, a store or disk error)", ["game"],
    registry=REGISTRY,
)  # fmt: skip
DECISIONS = Counter(
    "bisca_decisions",
    "Steps of matches decided (one per step of a match log), by who chose the action",
    ["game", "source"],
    registry=REGISTRY,
)
DECISION_SECONDS = Histogram(
    "bisca_decision_seconds",
    "Time from a request sent to a bot to its legal answer (or its clock running out)",
    ["game"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=REGISTRY,
)
TIMEOUTS = Counter(
    "bisca_timeouts",
    "Requests a bot answered with no legal action in time (each is a timeout of its clock)",
    ["game"],
    registry=REGISTRY,
)
REJECTIONS = Counter(
    "bisca_rejections", "Answers rejected (malformed or illegal), by reject code", ["code"],
    registry=REGISTRY,
)  # fmt: skip
FORFEITS = Counter("bisca_forfeits", "Seats forfeited, by cause", ["cause"], registry=REGISTRY)
BOTS_CONNECTED = Gauge(
    "bisca_bots_connected", "Bot connections past their Hello (authenticated)", registry=REGISTRY
)
SANDBOX_KILLS = Counter(
    "bisca_sandbox_kills",
    "Bot processes ended by a sandbox limit, by limit (cpu limit, memory limit, ...)",
    ["limit"],
    registry=REGISTRY,
)
LOG_BYTES = Counter(
    "bisca_log_bytes_written", "Bytes of match log records written", registry=REGISTRY
)
QUEUE_JOBS = Gauge(
    "bisca_queue_jobs",
    "Jobs of the match queue by status (todo: waiting; doing: being played), as the worker "
    "saw them at its last heartbeat",
    ["status"],
    registry=REGISTRY,
)
QUEUE_OLDEST_JOB_SECONDS = Gauge(
    "bisca_queue_oldest_job_age_seconds",
    "Age of the oldest job waiting in the match queue (0: none waits)",
    registry=REGISTRY,
)
WORKER_JOBS = Counter(
    "bisca_worker_jobs",
    "Jobs of the match queue this worker ended, by outcome (played, queued_again, failed)",
    ["outcome"],
    registry=REGISTRY,
)
WORKER_HEARTBEATS = Counter(
    "bisca_worker_heartbeats", "Heartbeats this worker recorded in the store", registry=REGISTRY
)
WORKER_LAST_HEARTBEAT = Gauge(
    "bisca_worker_last_heartbeat_timestamp_seconds",
    "Unix time of this worker's last heartbeat recorded in the store",
    registry=REGISTRY,
)


def _start_at_zero() -> None:
    """Every series of a known label exists from the start, at zero: a counter born with its
    first event left the documented failure ratio with no data on a healthy league (review
    s59c, F5), and ``rate()`` cannot see the first event of a series that starts with it."""
    for game in GAMES:
        for family in (MATCHES_RUNNING, MATCHES_FINISHED, MATCHES_FAILED, TIMEOUTS):
            family.labels(game)
        for source in DecisionSource:
            DECISIONS.labels(game, source)
    for cause in ForfeitCause:
        FORFEITS.labels(cause)
    for outcome in JobOutcome:
        WORKER_JOBS.labels(outcome)


_start_at_zero()
