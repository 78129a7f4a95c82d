"""Distributed tournaments: ``bisca tournament run --distributed``, ``submit`` and ``status``.

The coordinator plays nothing.  It stores the tournament's plan and its file in the
PostgreSQL store, queues a job per planned match not played yet (``_queue.py``) and, for
``run --distributed``, waits, drawing the same progress and standings as a local run from the
store, while ``bisca worker`` processes on any machines play the matches.  Everything it knows
is in the store, so it can be killed and started again (or never waited for: ``submit``, then
``status``): queuing again queues only what is not waiting already.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import procrastinate

from bisca.server.errors import TournamentFileError
from bisca.server.records import MatchStatus, TournamentSlot
from bisca.server.store import LeaderboardRow, Store, render_table, without_password

from ._progress import ProgressView
from ._queue import (
    QueueState,
    ensure_queue_schema,
    job_failures,
    queue_app,
    queue_slots,
    queue_state,
    require_shared,
    retry_stalled,
)
from ._tournament import DEFAULT_LEASE_SECONDS, REDRAW_SECONDS, STANDINGS_ROWS, Summary
from ._tournament_file import TournamentSpec, planned_seed


@dataclass(frozen=True)
class Submission:
    planned: int
    played: int
    queued: int
    already_queued: int
    #: The file's text differs from the one stored when the tournament was first submitted
    #: (stored now: its matches not played yet start their bots as it says).
    text_changed: bool = False


#: Said when a tournament is submitted again with another text under the same plan.
TEXT_CHANGED = (
    "its file changed since it was first submitted: the new text is stored, and its matches "
    "not played yet start their bots as it says now (the plan, its bots, seeds and clock, "
    "is the same)"
)


async def submit_tournament(
    spec: TournamentSpec, store: Store, url: str, app: procrastinate.App | None = None
) -> Submission:
    """Store the plan and the file, and queue every planned match not played yet."""
    require_shared(store, "a distributed tournament")
    source = Path(spec.source)
    try:
        text = source.read_text()
    except OSError as problem:
        raise TournamentFileError(spec.source, None, f"cannot read it: {problem}") from None
    stored = await asyncio.to_thread(store.tournaments.get, spec.name)
    spec = planned_seed(spec, stored)
    slots = spec.plan()
    await asyncio.to_thread(ensure_queue_schema, url)
    await asyncio.to_thread(
        store.tournaments.save_plan,
        spec.name,
        spec.game,
        spec.digest(slots),
        # Absolute: workers read the file's relative bot folders from the same place.
        str(source.resolve()),
        slots,
        text,
        spec.dealt_from,
    )
    current = await asyncio.to_thread(store.tournaments.slots, spec.name)
    pending = [slot.slot for slot in current if not slot.done]
    if app is None:
        async with queue_app(url).open_async() as opened:
            queued = await queue_slots(opened, spec.name, pending)
    else:
        queued = await queue_slots(app, spec.name, pending)
    changed = stored is not None and bool(stored.spec) and stored.spec != text
    return Submission(len(slots), len(slots) - len(pending), queued.queued, queued.already, changed)


@dataclass(frozen=True)
class Standing:
    """Where a distributed tournament stands, from the store and its queue."""

    name: str
    game: str
    slots: list[TournamentSlot]
    queue: QueueState
    leaderboard: list[LeaderboardRow]

    @property
    def planned(self) -> int:
        return len(self.slots)

    @property
    def finished(self) -> int:
        return sum(1 for slot in self.slots if slot.done)

    @property
    def running(self) -> int:
        return sum(1 for slot in self.slots if slot.status is MatchStatus.RUNNING)

    @property
    def unplayed(self) -> list[str]:
        return [slot.planned_id for slot in self.slots if not slot.done]

    @property
    def settled(self) -> bool:
        """Every match played, or none left in the queue to play (failed jobs)."""
        return self.finished == self.planned or self.queue.waiting + self.queue.doing == 0


async def standing(
    store: Store, app: procrastinate.App, name: str, game: str, rows: int | None = None
) -> Standing:
    slots = await asyncio.to_thread(store.tournaments.slots, name)
    queue = await queue_state(app, name)
    board = await asyncio.to_thread(store.ratings.leaderboard, game, rows)
    return Standing(name, game, slots, queue, board)


async def run_distributed(
    spec: TournamentSpec,
    store: Store,
    url: str,
    out: TextIO,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
) -> Summary:
    """Submit the tournament, then wait for the workers, drawing progress and standings."""
    require_shared(store, "a distributed tournament")
    view = ProgressView(spec, out)
    async with queue_app(url).open_async() as app:
        submitted = await submit_tournament(spec, store, url, app)
        view.start(submitted.planned, submitted.played)
        if submitted.text_changed:
            view.note(TEXT_CHANGED)
        if submitted.played < submitted.planned:
            view.note(
                f"queued {submitted.queued} match(es) ({submitted.already_queued} were queued "
                f"already); workers play them: bisca worker --store {store.describe()}"
            )
        last_check = 0.0
        loop = asyncio.get_running_loop()
        while True:
            now = await standing(store, app, spec.name, spec.game, STANDINGS_ROWS)
            view.update(now.finished, now.running, now.leaderboard)
            if now.settled:
                break
            if loop.time() - last_check > lease_seconds / 3:
                # Whoever waits helps: a worker killed mid-match gets its job back in the
                # queue even when no other worker is looking.
                await retry_stalled(app, lease_seconds)
                last_check = loop.time()
            await asyncio.sleep(REDRAW_SECONDS)
        final = await asyncio.to_thread(store.ratings.leaderboard, spec.game)
        failed = await _why_unplayed(app, now)
    view.finish(now.finished, final)
    return Summary(
        name=spec.name,
        game=spec.game,
        data_dir=store.data_dir,
        planned=now.planned,
        finished=now.finished,
        played_now=now.finished - submitted.played,
        failed=failed,
        given_up=now.unplayed,
        leaderboard=final,
    )


async def _why_unplayed(app: procrastinate.App, now: Standing) -> list[tuple[str, str]]:
    """Each unplayed match whose job failed, with why (as its worker recorded it)."""
    failures = await job_failures(app, now.name)
    return [
        (slot.planned_id, f"{failure.reason} (worker {failure.worker})")
        for slot in now.slots
        if not slot.done and (failure := failures.get(slot.slot)) is not None
    ]


def distributed_summary_lines(
    summary: Summary, store_url: str, command: str = "bisca"
) -> list[str]:
    lines = []
    if summary.given_up:
        lines.append(
            f"{len(summary.given_up)} planned match(es) not played (their jobs failed): "
            f"{', '.join(summary.given_up[:10])}; run the same command again to queue them "
            "again"
        )
        lines += [f"  {planned_id}: {reason}" for planned_id, reason in summary.failed[:10]]
        if len(summary.failed) > 10:
            lines.append(f"  ... and {len(summary.failed) - 10} more (see the workers' output)")
    lines.append(
        f"{summary.finished} of {summary.planned} planned matches played"
        + (f" ({summary.played_now} in this run)" if summary.played_now != summary.finished else "")
    )
    pasted = without_password(store_url)
    lines.append(
        f"match logs are in the store: {command} replay show MATCH_ID --store {pasted}; "
        f"leaderboard again: {command} leaderboard --game {summary.game} --store {pasted}"
    )
    return lines


def status_lines(now: Standing) -> list[str]:
    """``bisca tournament status``: progress, the queue and the standings."""
    lines = [
        f"tournament {now.name}: {now.game}, {now.finished} of {now.planned} planned matches "
        f"played, {now.running} running; queue: {now.queue.waiting} waiting, "
        f"{now.queue.doing} being played, {now.queue.failed} failed"
    ]
    if now.settled and now.finished < now.planned:
        lines.append(
            f"not played and not queued: {', '.join(now.unplayed[:10])}"
            f"{' ...' if len(now.unplayed) > 10 else ''} (submit it again to queue them)"
        )
    lines.append("")
    lines += render_table(now.game, now.leaderboard)
    return lines
