"""What an operator graphs and alerts on: the arena's Prometheus metrics, and their HTTP page
(``bisca serve --metrics HOST:PORT``, ``bisca worker --metrics HOST:PORT``).

Every metric is defined here, in one registry of the process; the rooms above record into it
where the events happen (a decision, a forfeit, a log write, a heartbeat).  docs/operating.md
lists them with a sample scrape configuration.
"""

from ._metrics import (
    BOTS_CONNECTED,
    DECISION_SECONDS,
    DECISIONS,
    FORFEITS,
    LOG_BYTES,
    MATCHES_FAILED,
    MATCHES_FINISHED,
    MATCHES_RUNNING,
    QUEUE_JOBS,
    QUEUE_OLDEST_JOB_SECONDS,
    REGISTRY,
    REJECTIONS,
    SANDBOX_KILLS,
    TIMEOUTS,
    WORKER_HEARTBEATS,
    WORKER_JOBS,
    WORKER_LAST_HEARTBEAT,
    DecisionSource,
    ForfeitCause,
    JobOutcome,
    forfeit_cause,
)
from ._serving import parse_metrics_address, serving_metrics

__all__ = [
    "BOTS_CONNECTED",
    "DECISIONS",
    "DECISION_SECONDS",
    "FORFEITS",
    "LOG_BYTES",
    "MATCHES_FAILED",
    "MATCHES_FINISHED",
    "MATCHES_RUNNING",
    "QUEUE_JOBS",
    "QUEUE_OLDEST_JOB_SECONDS",
    "REGISTRY",
    "REJECTIONS",
    "SANDBOX_KILLS",
    "TIMEOUTS",
    "WORKER_HEARTBEATS",
    "WORKER_JOBS",
    "WORKER_LAST_HEARTBEAT",
    "DecisionSource",
    "ForfeitCause",
    "JobOutcome",
    "forfeit_cause",
    "parse_metrics_address",
    "serving_metrics",
]
