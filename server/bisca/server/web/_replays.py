"""Replays built off the arena's loop, each once, a few at a time.

Building a replay re-runs the engine over the whole log (a second of CPU and more for a long
match).  Done on the loop, or in as many threads as there are requests, it takes the time the
referee needs to answer live bots, and they time out.  So a replay is built in a worker
process (the GIL of the server's process stays the referee's), at most :data:`BUILDERS` at a
time, with at most :data:`WAITING` requests waiting for a builder (beyond them: 503, try
again); concurrent requests for the same replay wait for the one build; and a finished
match's replay never changes, so the last :data:`KEPT` are kept, by match id and the log's
final hash (and the file's size and time, for a log the store holds no hash of).  A log a
shared store keeps goes to the worker process as its bytes (``operator.RecordedLog``).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bisca.server.edge import operator
from bisca.server.records import RecordedMatch

from ._json import JsonObject, Problem
from ._replay import recorded_as, replay_json, unreadable

log = logging.getLogger("bisca.web")

#: Replays built at once (each in its own worker process).
BUILDERS = 1
#: Requests that may wait for a builder; one more is refused with 503.
WAITING = 16
#: Replays kept once built.
KEPT = 64


@dataclass(frozen=True)
class ReplayKey:
    match_id: str
    #: What the store records of the match (its log's hash, its result): a change makes the
    #: replay's verdict another.
    recorded: RecordedMatch | None
    #: The file's size and modification time: a log without a recorded hash may still change
    #: (a copy kept in the store: its size, and no time: it never changes).
    size: int
    modified_ns: int


@dataclass(frozen=True)
class _Refused:
    """A :class:`Problem` as it crosses back from the worker process."""

    status: int
    message: str


def _build(
    recorded: operator.RecordedLog, public_key: bytes | None, records: dict[str, RecordedMatch]
) -> JsonObject | _Refused:
    try:
        return replay_json(recorded, public_key, records)
    except Problem as problem:
        return _Refused(problem.status, problem.message)


class Replays:
    """The replays of one app: built in a worker process, kept, shared by concurrent asks."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._builders = asyncio.Semaphore(BUILDERS)
        self._waiting = 0
        self._building: dict[ReplayKey, asyncio.Future[JsonObject | _Refused]] = {}
        self._kept: OrderedDict[ReplayKey, JsonObject] = OrderedDict()
        #: How many replays were built, and the most built at once (the log says so too).
        self.built = 0
        self.most_at_once = 0
        self._at_once = 0

    async def replay(
        self,
        key: ReplayKey,
        source: Path | operator.RecordedLog,
        public_key: bytes | None,
        records: dict[str, RecordedMatch],
    ) -> JsonObject:
        """The replay of ``key``'s log at ``source`` (a file, or where the store says a match's
        log is), as a copy the caller may add to; :class:`Problem` 409 when the log cannot be
        read, 503 when too many replays are waiting to be built."""
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return dict(kept)
        building = self._building.get(key)
        if building is None:
            recorded = recorded_as(source)
            building = asyncio.ensure_future(self._built(key, recorded, public_key, records))
            self._building[key] = building
            building.add_done_callback(lambda _: self._building.pop(key, None))
        # A request that goes away does not cancel the build the others wait for.
        result = await asyncio.shield(building)
        if isinstance(result, _Refused):
            raise Problem(result.status, result.message)
        return dict(result)

    async def _built(
        self,
        key: ReplayKey,
        recorded: operator.RecordedLog,
        public_key: bytes | None,
        records: dict[str, RecordedMatch],
    ) -> JsonObject | _Refused:
        if self._waiting >= WAITING:
            return _Refused(
                503,
                f"{self._waiting} replays are waiting to be built; the replay of "
                f"{key.match_id} is not started: try again in a moment",
            )
        self._waiting += 1
        try:
            await self._builders.acquire()
        finally:
            self._waiting -= 1
        try:
            self._at_once += 1
            self.most_at_once = max(self.most_at_once, self._at_once)
            result = await asyncio.get_running_loop().run_in_executor(
                self._worker(), _build, recorded, public_key, records
            )
        finally:
            self._at_once -= 1
            self._builders.release()
        self.built += 1
        log.info(
            "replay of %s built (%d built, at most %d at once of %d)",
            key.match_id,
            self.built,
            self.most_at_once,
            BUILDERS,
        )
        if not isinstance(result, _Refused):
            self._kept[key] = result
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return result

    def _worker(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn, not fork: the server's process runs gRPC's threads, which a fork breaks.
            self._pool = ProcessPoolExecutor(
                max_workers=BUILDERS, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def replay_key(
    match_id: str, recorded: RecordedMatch | None, source: Path | operator.RecordedLog
) -> ReplayKey:
    """The key of a log's replay; :class:`Problem` 409 when its file is not there."""
    where = recorded_as(source)
    if where.kept is not None:
        return ReplayKey(match_id, recorded, len(where.kept), 0)
    try:
        stat = where.path.stat()
    except OSError as problem:
        raise unreadable(f"the log of match {match_id}", where.path, problem) from None
    return ReplayKey(match_id, recorded, stat.st_size, stat.st_mtime_ns)
