"""``bisca worker`` (play queued matches on this machine) and ``bisca workers`` (who plays)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from bisca.server.datadir import DEFAULT_DATA_DIR
from bisca.server.errors import StoreError
from bisca.server.hosting import LadderWorker
from bisca.server.tournament.distributed import (
    LADDER_TASK,
    WorkerOptions,
    open_shared_store,
    run_worker,
)

from ._arena_args import add_lease_option, add_metrics_option, add_sandbox_options
from ._args import Commands, add_data_option, add_store_option, handle, whole
from ._collector import settle_collector

WORKER_DATA_DIR = DEFAULT_DATA_DIR / "worker"


def add_commands(commands: Commands) -> None:
    worker = commands.add_parser(
        "worker",
        help="play the queued matches of distributed tournaments on this machine",
        description="Take matches from the store's queue and play them here, with their "
        "bots sandboxed, until stopped (SIGTERM or Ctrl-C finish the running matches first).",
    )
    add_store_option(worker, required=True)
    worker.add_argument(
        "--concurrency", type=whole(1), default=1, help="matches played at once (default 1)"
    )
    add_data_option(
        worker,
        "this worker's own folder: its signing key, logs being written, bot output",
        WORKER_DATA_DIR,
    )
    add_lease_option(worker)
    worker.add_argument("--name", default="", help="its name in `bisca workers` (HOST-PID)")
    add_metrics_option(worker)
    add_sandbox_options(worker, limits=False)
    handle(worker, _worker)

    workers = commands.add_parser("workers", help="list the workers of a store and their matches")
    add_store_option(workers, required=True)
    add_lease_option(workers)
    workers.add_argument("--all", action="store_true", help="list stopped workers too")
    handle(workers, _workers)


def _worker(args: argparse.Namespace) -> int:
    # A league's ladder queues its pairings on the same queue: a worker plays them too.
    ladder = LadderWorker(args.store, args.data, args.sandbox)
    settle_collector()  # (its modules are loaded: what it holds from now on is its matches')
    return run_worker(
        WorkerOptions(
            store=args.store,
            data_dir=args.data,
            concurrency=args.concurrency,
            lease_seconds=args.lease,
            sandbox=args.sandbox,
            name=args.name,
            metrics=args.metrics,
        ),
        tasks={LADDER_TASK: ladder.play},
    )


def _workers(args: argparse.Namespace) -> int:
    try:
        with open_shared_store(args.store, Path("."), "bisca workers", upgrade=False) as store:
            workers = store.workers.all()
    except StoreError as problem:
        print(f"bisca workers: {problem}", file=sys.stderr)
        return 1
    now = datetime.now(UTC)
    shown = [w for w in workers if args.all or w.alive(now, args.lease)]
    if not shown:
        print("no worker alive" + ("" if args.all else " (--all lists stopped ones)"))
        return 0
    print(f"{'worker':<28} {'state':<8} {'seen':<24} {'at once':>7}  running")
    for worker in shown:
        state = (
            "alive" if worker.alive(now, args.lease) else "stopped" if worker.stopped_at else "lost"
        )
        running = ", ".join(worker.running) or "-"
        print(
            f"{worker.name:<28} {state:<8} {worker.seen_at:<24} {worker.concurrency:>7}  "
            f"{running}  ({worker.note})"
        )
    return 0
