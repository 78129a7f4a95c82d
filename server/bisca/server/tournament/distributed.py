"""Tournaments spread over machines: the match queue of a PostgreSQL store (procrastinate),
the distributed run that submits and follows a tournament, and ``bisca worker``.

A surface of its own, beside :mod:`bisca.server.tournament`'s: loading it loads procrastinate
and psycopg, which the commands that play on one machine never need.
"""

from ._distributed import (
    TEXT_CHANGED,
    distributed_summary_lines,
    run_distributed,
    standing,
    status_lines,
    submit_tournament,
)
from ._queue import (
    LADDER_TASK,
    ensure_queue_schema,
    ladder_deal_lock,
    ladder_deals_held,
    open_shared_store,
    queue_app,
    queue_ladder_pairing,
    require_shared,
)
from ._worker import CUT_OFF_BY_A_WORKER, WorkerOptions, run_worker

__all__ = [
    "CUT_OFF_BY_A_WORKER",
    "LADDER_TASK",
    "TEXT_CHANGED",
    "WorkerOptions",
    "distributed_summary_lines",
    "ensure_queue_schema",
    "ladder_deal_lock",
    "ladder_deals_held",
    "open_shared_store",
    "queue_app",
    "queue_ladder_pairing",
    "require_shared",
    "run_distributed",
    "run_worker",
    "standing",
    "status_lines",
    "submit_tournament",
]
