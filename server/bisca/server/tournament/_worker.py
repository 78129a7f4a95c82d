"""``bisca worker``: play the queued matches of distributed tournaments on this machine.

A worker runs procrastinate's worker on the store's queue (``_queue.py``).  For each
tournament it has a job of, it starts an arena of its own (in-process referee, loopback,
sandboxed bots: exactly what ``bisca tournament run`` does on one machine) with the
tournament's bot processes, once, and keeps it for the jobs that follow; once the tournament
is over (or it has had no job for a while) the arena and its bots are stopped, so a worker
can live for weeks and play any number of tournaments (every arena of the process shares its
one trio run: ``edge/_bridge.py``).  A job plays one planned match and records it in the
store: result, ratings (in plan order, by the store) and its complete log, whose bytes the
store keeps so every machine can read it.  A job that fails says why in one line and records
it for the coordinator (``record_job_failure``).

A worker plays ``--concurrency`` matches at once, a league's ladder pairings included (its
``tasks``): a pairing plays its matches one after another and holds one turn until it ends.
A job fetched ahead of its turn (:data:`PREFETCHED_JOBS`) waits for it, and if the worker
stops first it is given back unplayed.

A job found with an attempt still open was cut off (its worker was killed, or lost): that
attempt is marked failed and the match is played again from its start under a new id, with
the same seed and seats; only a finished attempt counts, and a late result of a given-up
attempt is refused, so each planned match is recorded once.

The worker beats in the store with its lease (``bisca workers`` shows it) and puts stalled
jobs of dead workers back in the queue, marking their open attempts failed at once.  When
the store cannot be reached it stops taking matches and says so; when the store answers again
it says so and goes on.  A store that a newer Bisca migrated is no outage: the first job that
finds it is given back unplayed, the worker says why once, stops and exits 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import procrastinate
import trio
from procrastinate.jobs import Job, Status
from procrastinate.manager import JobManager
from procrastinate.types import JSONValue

from bisca.server import metrics
from bisca.server.datadir import DataDir
from bisca.server.edge import ArenaServer, ServerConfig
from bisca.server.errors import BiscaError, StoreError, StoreTooNew, TournamentError
from bisca.server.logs import data_key
from bisca.server.metrics import serving_metrics
from bisca.server.records import MatchStatus
from bisca.server.referee import MATCH_LINES_LOGGER, ServerOptions
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store, is_store_lost, open_store, quiet_connection_retries

from ._arena import running_arena
from ._queue import (
    PLAY_TASK,
    QUEUE,
    JobKey,
    QueueDepth,
    ensure_queue_schema,
    job_label,
    open_shared_store,
    queue_app,
    queue_copy_of_cut_job,
    queue_depth,
    record_job_failure,
    retry_stalled,
)
from ._tournament import TournamentRun
from ._tournament_file import parse_tournament, planned_seed

log = logging.getLogger("bisca.worker")

CUT_OFF_BY_A_WORKER = (
    "cut off: the worker playing it stopped or lost the store; the match is replayed from its start"
)
#: Jobs a worker holds fetched beyond the matches it plays at once: a match that ends starts
#: the next one at once, its job already fetched while the match played (the job's fetch and
#: the last job's completion are off the path from one match to the next).
PREFETCHED_JOBS = 1
#: How many times a job of another room (a ladder pairing) cut off or failed is queued again,
#: and the argument that counts them.
GIVE_BACK_LIMIT = 3
GIVEN_BACK = "given_back"
#: A tournament's arena and bots with no job for this long are stopped (its last matches
#: went to other workers, or failed): a worker lives for weeks, its tournaments do not.
IDLE_HOST_SECONDS = 60.0
#: The job arguments no log line may carry: a ladder pairing's seed stays sealed until its
#: matches are over (the deal's commitment: docs/trust.md), and logs travel.
SEALED_ARGUMENTS = frozenset({"seed"})
SEALED = "<sealed>"
#: procrastinate's loggers whose records name a job with its arguments: in the message (its
#: "call string", ``task[id](seed=..., ...)``) and in the record's ``job`` or ``jobs``.  A
#: logger's filter holds for its own records only, not its children's: the worker's own
#: logger (``procrastinate.worker.NAME``) is named at its start.
JOB_LOGGERS = ("procrastinate.worker", "procrastinate.jobs")
#: The loggers of the queue's connection that speak of a lost store at each try: the worker
#: says it once when lost and once when back, and they add no traceback to it (procrastinate's
#: listener logs its lost connection with one of about 50 lines; psycopg's pool a warning per
#: try to connect).
CONNECTION_LOGGERS = ("procrastinate.utils", "psycopg.pool")
#: A sealed argument as a call string writes it (``seed=726736020554335744``).
_SEALED_IN_A_CALL = re.compile(rf"\b({'|'.join(sorted(SEALED_ARGUMENTS))})=-?\d+")


@dataclass(frozen=True)
class WorkerOptions:
    store: str
    data_dir: Path
    concurrency: int = 1
    lease_seconds: float = 30.0
    sandbox: bool = True
    name: str = ""
    #: Serve Prometheus metrics here (``--metrics``), else not.
    metrics: tuple[str, int] | None = None

    @property
    def beat_seconds(self) -> float:
        return self.lease_seconds / 3


def worker_name(given: str) -> str:
    return given or f"{socket.gethostname()}-{os.getpid()}"


@dataclass
class _Host:
    """One tournament's arena and bots in this worker."""

    run: TournamentRun
    server: ArenaServer
    stack: contextlib.AsyncExitStack
    bots: asyncio.Task[None]
    #: Jobs of it being played now, and (loop time) when the last one ended.
    jobs: int = 0
    idle_since: float = 0.0

    async def close(self) -> None:
        """Stop the bots while their arena still answers (so they see their streams close
        and exit at once), then the arena."""
        if not self.bots.done():
            self.server.guest.run_sync_soon(self.run.play_scope.cancel)
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.bots
        await self.stack.aclose()


class Worker:
    def __init__(
        self,
        options: WorkerOptions,
        out: TextIO | None = None,
        tasks: Mapping[str, Callable[..., Awaitable[object]]] | None = None,
    ) -> None:
        self.options = options
        #: Jobs of other rooms this worker plays too, by task name (a league's ladder); one
        #: that returns a number returns the matches it finished (counted as played here).
        self.tasks = dict(tasks or {})
        self.name = worker_name(options.name)
        self.out = out or sys.stderr
        self.hosts: dict[str, _Host] = {}
        #: Held while a host starts or stops (rare, and a host's start is brief).
        self._hosting = asyncio.Lock()
        self._store: Store | None = None
        self._app: procrastinate.App | None = None
        self.stopping = asyncio.Event()
        #: The matches played at once, a ladder pairing being one (jobs fetched beyond them,
        #: of a tournament or a ladder, wait here for their turn: ``_turn``).
        self._playing = asyncio.Semaphore(options.concurrency)
        #: Set while the queue's worker stops (asked to, or the store lost): a job still
        #: waiting for its turn gives itself back to the queue.
        self._draining = asyncio.Event()
        #: Jobs of other rooms cut off here (the store lost, the worker stopping, a failure):
        #: queued again at the next beat that reaches the store, and before the worker stops.
        self._given_back: list[_GivenBack] = []
        #: Ids of the jobs of other rooms taken here whose end procrastinate has not recorded
        #: yet (:class:`_JobEndsHere`).
        self._held: set[int] = set()
        #: Set when a job of another room finds the store lost: the worker stops its queue at
        #: once, before a job waiting for its turn begins (and is cut off by the same outage).
        self._job_lost_the_store = asyncio.Event()
        #: (Loop time) when this worker last reached the store: it judges no other worker
        #: stalled for a lease after (they may be reaching it again too, after an outage).
        self._connected_at = 0.0
        #: Matches finished here (tournaments' and other rooms'), and jobs of other rooms
        #: being played now (a ladder pairing plays one match at a time).
        self.played = 0
        self._playing_elsewhere = 0
        #: Set once a job found the store migrated by a newer Bisca: the worker takes no
        #: more jobs, gives that one back unplayed and exits non-zero.
        self.too_new: StoreTooNew | None = None

    def say(self, text: str) -> None:
        print(f"bisca worker {self.name}: {text}", file=self.out, flush=True)

    # ---- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Take matches until SIGTERM or SIGINT (then finish the running ones)."""
        options = self.options
        store = await self._store_to_work_for()
        _filter_job_records(self.name)
        try:
            await asyncio.to_thread(ensure_queue_schema, options.store)
            loop = asyncio.get_running_loop()
            for number in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(number, self._stop)
            app = queue_app(options.store, flushed=False)
            app.job_manager = _JobEndsHere(app.connector, self._held)
            # A job given back before its match began is queued again (any other failure is
            # the job's, final: the coordinator says it).
            retry = procrastinate.RetryStrategy(retry_exceptions={GivenBack})
            app.task(name=PLAY_TASK, queue=QUEUE, retry=retry)(self.play)
            for name, task in self.tasks.items():
                app.task(name=name, queue=QUEUE, pass_context=True)(self._giving_back(name, task))
            self._store, self._app = store, app
            async with contextlib.AsyncExitStack() as stack:
                if options.metrics is not None:
                    page = await stack.enter_async_context(serving_metrics(*options.metrics))
                    self.say(f"metrics on {page}")
                self.say(
                    f"taking matches from {store.describe()} ({options.concurrency} at once, "
                    f"lease {options.lease_seconds:g} s)"
                )
                await self._serve(app, store)
        finally:
            note = f"stopped after {self.played} match(es)"
            if self.too_new is not None:
                note += f": its store is newer than this Bisca ({self.too_new.found} > "
                note += f"{self.too_new.known})"
            with contextlib.suppress(StoreError):
                await asyncio.to_thread(store.workers.stopped, self.name, note)
            for host in list(self.hosts.values()):
                await host.close()
            store.close()
        self.say(f"stopped after {self.played} match(es)")

    async def _store_to_work_for(self) -> Store:
        """The store, once it is one this worker may take jobs from: a shared one, and this
        worker's key made or found (a worker starts none of its work otherwise).

        The key is checked before any job: a worker whose key was lost beside the logs it
        signed took job after job, each cut off by its arena's refusal to sign with a new
        key, and each cut-off used up one of the pairing's give-backs (operator re-test)."""
        options = self.options
        store = await asyncio.to_thread(
            open_shared_store, options.store, options.data_dir, "bisca worker"
        )
        try:
            await asyncio.to_thread(data_key, DataDir(options.data_dir), kept=store.logs)
        except BaseException:
            store.close()
            raise
        return store

    def _stop(self) -> None:
        """SIGTERM or SIGINT: no match begins from now on; the running ones finish."""
        if not self.stopping.is_set():
            self.stopping.set()
            self.say("stopping: the running matches finish, no other begins")

    def _refuse_newer_store(self, too_new: StoreTooNew) -> None:
        """A job found the store migrated by a newer Bisca: said once, and the worker stops
        (its jobs are given back unplayed; ``run_worker`` exits non-zero)."""
        if self.too_new is None:
            self.too_new = too_new
            self.say(
                f"the store {too_new.store} has schema version {too_new.found}, newer than "
                f"this Bisca ({too_new.known}): taking no more jobs (the job is given back "
                "unplayed) and stopping; upgrade Bisca on this machine"
            )
        self.stopping.set()

    async def _serve(self, app: procrastinate.App, store: Store) -> None:
        while not self.stopping.is_set():
            opened = False
            try:
                await app.open_async()
                opened = True
                lost = await self._work(app, store)
            except Exception as problem:  # the queue could not even be opened
                lost = str(problem).strip().splitlines()[0] if str(problem).strip() else ""
                self.say(f"lost the store ({lost}): taking no matches until it answers again")
            finally:
                if opened:
                    with contextlib.suppress(Exception):  # the store lost: the next beat will
                        await self._queue_given_back(app)
                    # Closing the pool of a lost database waits on it: not for long.
                    with contextlib.suppress(TimeoutError, Exception):
                        await asyncio.wait_for(app.close_async(), self.options.lease_seconds)
            if lost is None:
                return
            if not await self._wait_for_store(store):
                return
            self.say("the store answers again: taking matches")

    async def _work(self, app: procrastinate.App, store: Store) -> str | None:
        """Run procrastinate's worker until asked to stop (``None``) or until the store is
        lost (why)."""
        options = self.options
        self._draining.clear()
        self._job_lost_the_store.clear()
        worker = asyncio.create_task(
            app.run_worker_async(
                queues=[QUEUE],
                concurrency=options.concurrency + PREFETCHED_JOBS,
                name=self.name,
                wait=True,
                install_signal_handlers=False,
                update_heartbeat_interval=options.beat_seconds,
                stalled_worker_timeout=options.lease_seconds,
                fetch_job_polling_interval=options.beat_seconds,
                abort_job_polling_interval=options.beat_seconds,
                shutdown_graceful_timeout=options.lease_seconds,
            )
        )
        self._connected_at = asyncio.get_running_loop().time()
        beat = asyncio.create_task(self._beat(app, store))
        stop = asyncio.create_task(self.stopping.wait())
        job_lost = asyncio.create_task(self._job_lost_the_store.wait())
        done, _ = await asyncio.wait(
            {worker, beat, stop, job_lost}, return_when=asyncio.FIRST_COMPLETED
        )
        lost: str | None = None
        if beat in done:
            lost = beat.result()
        elif job_lost in done:
            lost = "a job found it lost"
        elif worker in done:
            problem = worker.exception()
            lost = "its queue stopped" + (f": {problem}" if problem else "")
        if lost is not None:  # said at once: what follows may wait on the lost database
            self.say(f"lost the store ({lost}): taking no matches until it answers again")
        self._draining.set()
        for task in (beat, stop, job_lost, worker):
            task.cancel()
        # procrastinate lets the running jobs finish (a lease at most); their results may not
        # be recorded, and then their matches are played again.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(beat, stop, job_lost, worker, return_exceptions=True),
                2 * options.lease_seconds,
            )
        return lost

    async def _beat(self, app: procrastinate.App, store: Store) -> str:
        """Beat every third of a lease and requeue other workers' stalled jobs; returns why
        once the store fails."""
        while True:
            try:
                await self._seen(store)
                await self._queue_given_back(app)
                _record_queue(await queue_depth(app))
                if self._judges_others():
                    for job in await retry_stalled(app, self.options.lease_seconds):
                        await self._take_back(store, job)
                await self._release_hosts(store)
            except Exception as problem:
                return _one_line(problem)
            await asyncio.sleep(self.options.beat_seconds)

    def _judges_others(self) -> bool:
        """Whether this worker has reached the store for a lease: after an outage every
        worker's last beat is old, and a live one's jobs must not be taken from it (its jobs
        are given back or finished within a lease of losing the store)."""
        waited = asyncio.get_running_loop().time() - self._connected_at
        return waited >= self.options.lease_seconds

    def _giving_back(
        self, name: str, task: Callable[..., Awaitable[object]]
    ) -> Callable[..., Awaitable[None]]:
        """``task`` as a job that, cut off or failed, is queued again (a fresh job, up to
        :data:`GIVE_BACK_LIMIT` times): played again, it plays only what it had not (a
        ladder pairing closes its cut attempts and skips its finished matches).  It takes a
        turn of the worker's matches first, as a tournament's job does: one fetched ahead
        and still waiting when the worker stops is queued again as it came, unplayed."""

        async def job(context: procrastinate.JobContext, **arguments: JSONValue) -> None:
            times = arguments.pop(GIVEN_BACK, 0)
            given_back = times if isinstance(times, int) else 0
            taken = context.job
            lock = taken.lock if taken is not None else None
            original = taken.id if taken is not None else None
            attempts = getattr(taken, "attempts", 0)
            if original is not None:
                self._held.add(original)

            def queue_again(times_given_back: int) -> None:
                again = {**arguments, GIVEN_BACK: times_given_back}
                self._given_back.append(_GivenBack(name, lock, again, original, attempts))

            try:
                turn = await self._turn(job_label(arguments))
            except GivenBack:  # never begun: its count is of pairings cut off or failed
                queue_again(given_back)
                _job_ended(metrics.JobOutcome.QUEUED_AGAIN)
                raise
            self._playing_elsewhere += 1
            try:
                finished = await task(**arguments)
            except BaseException as problem:
                if _lost_the_store(problem):
                    # No job begins until the store answers: it would be cut off at once,
                    # and counted (defect D).  Before this job's turn ends, below.
                    self._draining.set()
                    self._job_lost_the_store.set()
                too_new = _too_new(problem)
                if too_new is not None:  # not the job's failure: queued again as it was
                    self._refuse_newer_store(too_new)
                    queue_again(given_back)
                    _job_ended(metrics.JobOutcome.QUEUED_AGAIN)
                    raise GivenBack(f"{name}: given back unplayed, {too_new}") from problem
                if given_back >= GIVE_BACK_LIMIT:
                    _job_ended(metrics.JobOutcome.FAILED)
                    self.say(f"{name}: job failed for good: {_one_line(problem)}")
                    # For the operator's logs too (a ladder job's line names its pairing's
                    # match ids, never its seed: finding 8).
                    job_id = context.job.id if context.job is not None else None
                    what = job_label(arguments)
                    log.error("job %s (%s) failed for good: %s", job_id, what, _one_line(problem))
                else:
                    self.say(f"{name}: job cut off ({_one_line(problem)}): queued again")
                    queue_again(given_back + 1)
                    _job_ended(metrics.JobOutcome.QUEUED_AGAIN)
                raise
            finally:
                self._playing_elsewhere -= 1
                turn.end()
            if isinstance(finished, int):
                self.played += finished
            _job_ended(metrics.JobOutcome.PLAYED)

        return job

    async def _queue_given_back(self, app: procrastinate.App) -> None:
        while self._given_back:
            job = self._given_back[0]
            if job.original is None:
                await app.configure_task(job.task, queue=QUEUE, lock=job.lock).defer_async(
                    **job.arguments
                )
            else:
                copy = await queue_copy_of_cut_job(
                    app, job.original, job.attempts, job.task, job.lock, job.arguments
                )
                if copy is None:
                    log.info("job %s was queued again by the lease: not given back", job.original)
            self._given_back.pop(0)

    async def _take_back(self, store: Store, job: JobKey) -> None:
        """A job whose worker stopped beating is queued again: its match's open attempt is
        marked failed now, not when a worker takes the job (that may be long)."""
        found = await asyncio.to_thread(store.tournaments.slots, job.tournament, job.slot)
        if found and not found[0].done and found[0].match_id is not None:
            await asyncio.to_thread(
                store.matches.abandon_unfinished, [found[0].match_id], CUT_OFF_BY_A_WORKER
            )
        self.say(f"{job.tournament} slot {job.slot}: its worker stopped beating; queued again")

    async def _seen(self, store: Store) -> None:
        running = sum(len(host.run.running) for host in self.hosts.values())
        running += self._playing_elsewhere
        await asyncio.to_thread(
            store.workers.seen,
            self.name,
            socket.gethostname(),
            os.getpid(),
            self.options.concurrency,
            f"{running} running, {self.played} played",
            self.options.lease_seconds,
        )
        metrics.WORKER_HEARTBEATS.inc()
        metrics.WORKER_LAST_HEARTBEAT.set_to_current_time()

    async def _wait_for_store(self, store: Store) -> bool:
        """Until the store answers (``True``) or the worker is stopped."""
        while not self.stopping.is_set():
            with contextlib.suppress(StoreError):
                await self._seen(store)
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.options.beat_seconds)
        return False

    # ---- jobs -------------------------------------------------------------------------------

    async def play(self, tournament: str, slot: int) -> None:
        """The job: play planned match ``slot`` of ``tournament`` (nothing if it is played).
        A failure is said in one line and recorded before procrastinate marks the job
        failed (its own log of it is silenced: it would repeat at every try).  A job fetched
        ahead waits for its turn first, and gives itself back if the worker stops meanwhile."""
        try:
            turn = await self._turn(f"{tournament} slot {slot}")
        except GivenBack:
            _job_ended(metrics.JobOutcome.QUEUED_AGAIN)
            raise
        try:
            await self._play(tournament, slot, turn)
        except Exception as problem:
            turn.end()
            too_new = _too_new(problem)
            if too_new is not None:  # not the job's failure: retried by an upgraded worker
                self._refuse_newer_store(too_new)
                _job_ended(metrics.JobOutcome.QUEUED_AGAIN)
                raise GivenBack(f"{tournament} slot {slot}: given back unplayed") from problem
            if _lost_the_store(problem):
                # Not the job's failure either: it failed for good, and only running the
                # coordinator again played its match (review s59c, F3).  Queued again, as a
                # ladder job cut off is; no job begins until the store answers.
                self._draining.set()
                self._job_lost_the_store.set()
                self.say(f"{tournament} slot {slot}: cut off, the store lost: queued again")
                _job_ended(metrics.JobOutcome.QUEUED_AGAIN)
                raise GivenBack(f"{tournament} slot {slot}: cut off by the store") from problem
            reason = _one_line(problem)
            self.say(f"{tournament} slot {slot}: job failed: {reason}")
            _job_ended(metrics.JobOutcome.FAILED)
            if self._app is not None:
                with contextlib.suppress(Exception):  # the store lost: the line above says it
                    await record_job_failure(self._app, JobKey(tournament, slot), self.name, reason)
            raise
        else:
            _job_ended(metrics.JobOutcome.PLAYED)
        finally:
            turn.end()

    async def _turn(self, label: str) -> _Turn:
        """One of the worker's match slots, once one is free, for the job ``label`` names (a
        tournament's match or a ladder pairing) to hold until it ends; raises
        :class:`GivenBack` if the worker stops first."""
        acquiring = asyncio.create_task(self._playing.acquire())
        draining = asyncio.create_task(self._draining.wait())
        taken = False
        try:
            done, _ = await asyncio.wait({acquiring, draining}, return_when=asyncio.FIRST_COMPLETED)
            taken = acquiring in done and not self._draining.is_set()
        finally:
            draining.cancel()
            # The worker stops, or the job was cancelled while it waited: a slot acquired
            # meanwhile goes back, or the worker would play fewer matches at once for good.
            if not taken:
                if acquiring.done() and not acquiring.cancelled():
                    self._playing.release()
                acquiring.cancel()
        if not taken:
            raise GivenBack(f"{label}: given back unplayed, the worker stops")
        return _Turn(self._playing)

    async def _play(self, tournament: str, slot: int, turn: _Turn) -> None:
        host = await self._host(tournament)
        try:
            status = await host.server.in_trio(play_planned, host.run, slot)
        finally:
            host.jobs -= 1
            host.idle_since = asyncio.get_running_loop().time()
            # The match is over: the job waiting for a slot starts its match now, and what
            # follows here (the host's release check, a store read) is off its path.
            turn.end()
        if self._store is not None:
            # The match is recorded: a store that fails now is the beat's to notice.
            with contextlib.suppress(StoreError):
                await self._release_hosts(self._store, [tournament])
        if status is MatchStatus.FINISHED:
            self.played += 1
        elif status is MatchStatus.FAILED:
            failures = "; ".join(f"{m}: {reason}" for m, reason in host.run.failed[-3:])
            raise TournamentError(f"{tournament} slot {slot} not played: {failures}")

    async def _host(self, tournament: str) -> _Host:
        """The tournament's host, started if needed, counting one more job of it."""
        async with self._hosting:
            host = self.hosts.get(tournament)
            if host is not None and host.bots.done():  # its bots stopped (a crash loop)
                del self.hosts[tournament]
                await host.close()
                host = None
            if host is None:
                host = await self._start_host(tournament)
                self.hosts[tournament] = host
            host.jobs += 1
            return host

    async def _release_hosts(self, store: Store, only: list[str] | None = None) -> None:
        """Stop the hosts (of the tournaments ``only``, else all) with no job running whose
        tournament is over (every planned match played) or that have had no job for
        :data:`IDLE_HOST_SECONDS`.  After each job only its own tournament is looked at,
        and only when none of its jobs runs here: one count in the database, not its slots."""
        now = asyncio.get_running_loop().time()
        for tournament in list(self.hosts) if only is None else only:
            host = self.hosts.get(tournament)
            if host is None or host.jobs:
                continue
            over = await asyncio.to_thread(store.tournaments.unplayed, tournament) == 0
            if not over and now - host.idle_since < IDLE_HOST_SECONDS:
                continue
            async with self._hosting:
                if self.hosts.get(tournament) is not host or host.jobs:
                    continue  # a job took it meanwhile
                del self.hosts[tournament]
                await host.close()
            self.say(f"{tournament}: {'over' if over else 'no job for a while'}, its bots stopped")

    async def _start_host(self, tournament: str) -> _Host:
        options = self.options
        stack = contextlib.AsyncExitStack()
        try:
            probe = await asyncio.to_thread(open_store, options.store, options.data_dir)
            with probe:
                stored = await asyncio.to_thread(probe.tournaments.get, tournament)
            if stored is None:
                raise TournamentError(f"no tournament {tournament!r} in the store")
            parsed = parse_tournament(stored.spec, stored.source, default_name=tournament)
            spec = planned_seed(parsed, stored)  # the seed its plan was dealt from
            spec = dataclasses.replace(spec, sandbox=spec.sandbox and options.sandbox)
            config = ServerConfig(
                data_dir=options.data_dir,
                listen=["127.0.0.1:0"],
                admin_token="worker-" + os.urandom(8).hex(),
                options=ServerOptions(clock=spec.clock, join_timeout=spec.join_timeout_s),
                store=options.store,
            )
            policy = SandboxPolicy(enabled=spec.sandbox, limits=spec.limits)
            server, launcher = await stack.enter_async_context(running_arena(config, policy))
            server.store.owner = self.name  # `bisca workers` lists its matches by it
            run = TournamentRun(spec, server, launcher, self.out)
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            bots = asyncio.create_task(server.in_trio(_serve_bots, run, ready.set_result))
            await asyncio.wait({bots, ready}, return_when=asyncio.FIRST_COMPLETED)
            if not ready.done():
                bots.result()  # its failure, as the job's
                raise TournamentError(f"the bots of {tournament} stopped before connecting")
        except BaseException:
            await stack.aclose()
            raise
        self.say(f"{tournament}: {len(spec.bots)} bots connected")
        return _Host(run, server, stack, bots, idle_since=asyncio.get_running_loop().time())


class _Turn:
    """A job's hold on one of the worker's match slots, given back once (as its match ends,
    or when the job fails before)."""

    def __init__(self, slots: asyncio.Semaphore) -> None:
        self._slots: asyncio.Semaphore | None = slots

    def end(self) -> None:
        if self._slots is not None:
            self._slots.release()
            self._slots = None


@dataclass(frozen=True)
class _GivenBack:
    """A job of another room cut off here, to be queued again: its task, lock and arguments."""

    task: str
    lock: str | None
    arguments: dict[str, JSONValue]
    #: The job cut off (its id, and its attempts when taken): its copy is queued only if the
    #: lease did not queue it again first (:func:`queue_copy_of_cut_job`).
    original: int | None = None
    attempts: int = 0


class _JobEndsHere(JobManager):
    """procrastinate's job manager, for a worker: the end of a job of another room taken here
    that the lost store cannot record is said in one line and left ``doing``, for the worker's
    give-back (which ends it) or else the lease.  Raised, it reached no one: procrastinate
    records a job's end in a task of its own, whose error asyncio logged as "Task exception was
    never retrieved" with a traceback of 45 lines, once per job held in an outage."""

    def __init__(self, connector: procrastinate.BaseConnector, held: set[int]) -> None:
        super().__init__(connector)
        self._held = held

    async def finish_job(self, job: Job, status: Status, delete_job: bool) -> None:
        held = job.id in self._held
        self._held.discard(job.id or 0)
        try:
            await super().finish_job(job, status, delete_job)
        except Exception as problem:
            if not (held and _lost_the_store(problem)):
                raise
            log.warning(
                "job %s: the lost store did not record its end (%s); it is queued again once",
                job.id,
                _one_line(problem),
            )


class GivenBack(BiscaError):
    """A job fetched ahead whose worker stopped before its match began: queued again."""


class _SealedJobArguments(logging.Filter):
    """Rewrites procrastinate's records of jobs so that none carries a sealed argument (its
    job id, task name and other arguments are kept: what an operator reads them for)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = _sealed_text(record.getMessage()), ()
        job = getattr(record, "job", None)
        if isinstance(job, dict):
            record.job = _sealed_job(job)
        jobs = getattr(record, "jobs", None)
        if isinstance(jobs, list):
            record.jobs = [_sealed_job(one) if isinstance(one, dict) else one for one in jobs]
        return True


def _sealed_text(text: str) -> str:
    """``text`` with each sealed argument of a call string in it written as sealed."""
    return _SEALED_IN_A_CALL.sub(rf"\1={SEALED}", text)


def _sealed_job(context: dict[str, object]) -> dict[str, object]:
    """A job's log context (procrastinate's ``Job.log_context``) without its sealed arguments:
    not in its arguments, its call string, nor its lock (a ladder pairing's lock names its
    deal: ``ladder_deal_lock``)."""
    arguments = context.get("task_kwargs")
    if not isinstance(arguments, dict):
        return context
    sealed = {name: value for name, value in arguments.items() if name in SEALED_ARGUMENTS}
    kept = {name: SEALED if name in sealed else value for name, value in arguments.items()}
    changed: dict[str, object] = {**context, "task_kwargs": kept}
    call = context.get("call_string")
    if isinstance(call, str):
        changed["call_string"] = _sealed_text(call)
    for lock in ("lock", "queueing_lock"):
        named = context.get(lock)
        if isinstance(named, str):
            for value in sealed.values():
                named = named.replace(str(value), SEALED)
            changed[lock] = named
    return changed


class _LostStoreInOneLine(logging.Filter):
    """A job cut off by a lost store is said in one line: procrastinate logs each job that
    ends in error with its traceback, which says nothing more of an outage than the line
    does, once per job it cut (a traceback stays for any other error: a bug).  A job given
    back unplayed (:class:`GivenBack`: the worker stops, or its store is too new) is not an
    error either: one line at WARNING, not an ERROR and a traceback at every normal stop
    (operator re-test 3, defect A)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None:
            return True
        given_back = isinstance(error, GivenBack)
        # Not through its contexts: a bug met while handling a lost store keeps its traceback.
        if given_back or _lost_the_store(error):
            record.msg, record.args = f"{record.getMessage()} ({_one_line(error)})", ()
            record.exc_info, record.exc_text = None, None
        if given_back and record.levelno > logging.WARNING:
            record.levelno, record.levelname = (
                logging.WARNING,
                logging.getLevelName(logging.WARNING),
            )
        return True


_LOST_STORE_IN_ONE_LINE = _LostStoreInOneLine()
_JOB_RECORD_FILTERS = (_SealedJobArguments(), _LOST_STORE_IN_ONE_LINE)


def _filter_job_records(worker: str) -> None:
    """From now on procrastinate's records of jobs carry no sealed argument, and no traceback
    of a lost store; the worker ``worker``'s own logger's included (once is enough, again is
    harmless)."""
    for name in (*JOB_LOGGERS, f"procrastinate.worker.{worker}"):
        for job_filter in _JOB_RECORD_FILTERS:
            logging.getLogger(name).addFilter(job_filter)
    for name in CONNECTION_LOGGERS:
        logging.getLogger(name).addFilter(_LOST_STORE_IN_ONE_LINE)
    quiet_connection_retries()


def _record_queue(depth: QueueDepth) -> None:
    metrics.QUEUE_JOBS.labels(Status.TODO.value).set(depth.waiting)
    metrics.QUEUE_JOBS.labels(Status.DOING.value).set(depth.doing)
    metrics.QUEUE_OLDEST_JOB_SECONDS.set(depth.oldest_waiting_s)


def _job_ended(outcome: metrics.JobOutcome) -> None:
    """Count a job this worker ended (``bisca_worker_jobs_total``: review s59c, F5, no metric
    said that jobs failed or were queued again)."""
    metrics.WORKER_JOBS.labels(outcome).inc()


def _lost_the_store(problem: BaseException) -> bool:
    """Whether ``problem`` is (in its groups and causes) the store lost.  Not through its
    contexts: a bug met while handling a lost store is a bug."""
    return any(is_store_lost(one) for one in _causes(problem, contexts=False))


def _too_new(problem: BaseException) -> StoreTooNew | None:
    """The :class:`StoreTooNew` behind ``problem`` (in its groups, causes and contexts)."""
    causes = _causes(problem, contexts=True)
    return next((one for one in causes if isinstance(one, StoreTooNew)), None)


def _causes(problem: BaseException, *, contexts: bool) -> Iterator[BaseException]:
    """``problem`` and every error behind it: in its groups and causes, and (``contexts``)
    the errors being handled when each was raised."""
    seen: set[int] = set()
    found: list[BaseException] = [problem]
    while found:
        one = found.pop()
        if id(one) in seen:
            continue
        seen.add(id(one))
        yield one
        if isinstance(one, BaseExceptionGroup):
            found.extend(one.exceptions)
        behind = (one.__cause__, one.__context__) if contexts else (one.__cause__,)
        found.extend(e for e in behind if e is not None)


def _one_line(problem: BaseException) -> str:
    """What went wrong, in a line: a nursery's group says only how many failed, so its first
    failure speaks for it."""
    while isinstance(problem, BaseExceptionGroup) and problem.exceptions:
        problem = problem.exceptions[0]
    text = str(problem).strip()
    return text.splitlines()[0] if text else type(problem).__name__


async def _serve_bots(run: TournamentRun, ready: Callable[[None], object]) -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(run.serve_bots)
        ready(None)


async def play_planned(run: TournamentRun, number: int) -> MatchStatus | None:
    """In trio: play planned match ``number`` unless it is played; an attempt left open
    (its worker died or lost the store) is marked failed first.  ``None``: nothing to do."""
    store = run.store
    found = await trio.to_thread.run_sync(store.tournaments.slots, run.spec.name, number)
    if not found:
        raise TournamentError(f"tournament {run.spec.name} has no planned match {number}")
    slot = found[0]
    if slot.done:
        return None
    if slot.match_id is not None:
        await trio.to_thread.run_sync(
            store.matches.abandon_unfinished, [slot.match_id], CUT_OFF_BY_A_WORKER
        )
    return await run.play_slot(slot)


def run_worker(
    options: WorkerOptions, tasks: Mapping[str, Callable[..., Awaitable[object]]] | None = None
) -> int:
    """``bisca worker``: 0 once stopped by a signal, 1 for a store it cannot use (one a
    newer Bisca migrated, found by a job: it stops); ``tasks`` are the jobs of other rooms
    it plays too."""
    worker = Worker(options, tasks=tasks)
    # One line per match started and ended (a ladder's too), as `bisca serve` prints.
    logging.getLogger(MATCH_LINES_LOGGER).setLevel(logging.INFO)
    if not logging.getLogger().isEnabledFor(logging.INFO):
        # The worker says in one line when it loses the store and when it is back; the
        # queue's pool and listener would otherwise repeat it at every try (`-v` shows them).
        logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)
        logging.getLogger("procrastinate").setLevel(logging.CRITICAL)
    try:
        asyncio.run(worker.run())
    except BiscaError as problem:
        print(f"bisca worker: {problem}", file=sys.stderr)
        return 1
    return 0 if worker.too_new is None else 1
