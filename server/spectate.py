"""Spectators: a match's events as they happen (or, once it is over, from its log).

A spectator sees the public view: the events every seat sees.  The admin may ask for the
omniscient view (every event with its audience, hidden ones included), optionally delayed by N
steps so it cannot help a seat that is still playing.  Both views are built from the same
``LogEvents`` batches the match log is made of, so a live view and a replayed one agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

from .errors import OperatorError
from .matchlog import LogFormatError, read_log

Push = Callable[[pb.WatchUpdate | None], None]


def events_update(
    batch: log_pb2.LogEvents, omniscient: bool, num_seats: int
) -> pb.WatchUpdate | None:
    """A batch as one view sees it (``None`` when that view sees none of it)."""
    everyone = (1 << num_seats) - 1
    events = [
        pb.WatchedEvent(
            index=logged.index, audience=logged.audience if omniscient else 0, event=logged.event
        )
        for logged in batch.events
        if omniscient or logged.audience & everyone == everyone
    ]
    if not events:
        return None
    return pb.WatchUpdate(events=pb.WatchEvents(after_step=batch.after_step, events=events))


@dataclass(eq=False)
class Watcher:
    """One spectator of a live match."""

    omniscient: bool
    delay_steps: int
    push: Push
    num_seats: int
    delivered: int = 0  # batches of the match's history already considered
    closed: bool = False

    def feed(self, history: list[log_pb2.LogEvents], steps: int, final: bool) -> None:
        """Send the batches this view may see by now (all of them once the match is over)."""
        while self.delivered < len(history) and not self.closed:
            batch = history[self.delivered]
            if not final and batch.after_step + self.delay_steps > steps:
                return
            update = events_update(batch, self.omniscient, self.num_seats)
            if update is not None:
                self.push(update)
            self.delivered += 1

    def close(self, end: pb.WatchUpdate | None) -> None:
        if self.closed:
            return
        if end is not None:
            self.push(end)
        self.push(None)
        self.closed = True


async def open_watch(referee: Any, request: pb.WatchMatchRequest, push: Push) -> Watcher | None:
    """Start streaming a match to ``push``: a live watcher (returned, so the transport can
    cancel it), or the whole log of a finished match (``None``)."""
    runner = referee.matches.get(request.match_id)
    if runner is not None:
        watcher: Watcher = runner.watch(request.omniscient, request.delay_steps, push)
        return watcher
    record = await trio.to_thread.run_sync(referee.store.match, request.match_id)
    if record is None:
        raise OperatorError("NOT_FOUND", f"no match {request.match_id!r}")
    if not record.log_path:
        raise OperatorError(
            "FAILED_PRECONDITION", f"match {request.match_id} has no log ({record.status})"
        )
    try:
        log = await trio.to_thread.run_sync(read_log, Path(record.log_path))
    except (OSError, LogFormatError) as problem:
        raise OperatorError(
            "FAILED_PRECONDITION", f"the log of match {record.id} cannot be read: {problem}"
        ) from None
    for update in log_updates(log.entries(), request.omniscient):
        push(update)
    push(None)
    return None


def log_updates(entries: Iterable[log_pb2.LogEntry], omniscient: bool) -> Iterable[pb.WatchUpdate]:
    num_seats = 0
    for entry in entries:
        kind = entry.WhichOneof("kind")
        if kind == "header":
            header = entry.header
            num_seats = len(header.seats)
            yield pb.WatchUpdate(
                start=pb.WatchStart(
                    match_id=header.match_id,
                    game=header.game,
                    settings=header.settings,
                    seats=header.seats,
                    omniscient=omniscient,
                    live=False,
                )
            )
        elif kind == "events":
            update = events_update(entry.events, omniscient, num_seats)
            if update is not None:
                yield update
        elif kind == "footer":
            footer = entry.footer
            yield pb.WatchUpdate(
                end=pb.WatchEnd(
                    status=footer.status,
                    seats=footer.seats,
                    reason=footer.reason,
                    steps=footer.steps,
                )
            )
