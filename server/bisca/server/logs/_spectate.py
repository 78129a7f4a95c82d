"""Spectators: a match's events as they happen (or, once it is over, from its log).

A spectator sees the public view: the events every seat sees.  The admin may ask for the
omniscient view (every event with its audience, hidden ones included), optionally delayed by N
steps so it cannot help a seat that is still playing.  Both views are built from the same
``LogEvents`` batches the match log is made of, so a live view and a replayed one agree.  A
live match hands its batches over serialized, as they were logged; they are only parsed when a
spectator needs them (most matches have none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

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
class SharedBatch:
    """One ``LogEvents`` batch of a live match, serialized; parsed once, on first need."""

    after_step: int
    data: bytes
    _parsed: log_pb2.LogEvents | None = field(default=None, repr=False)

    def parsed(self) -> log_pb2.LogEvents:
        if self._parsed is None:
            self._parsed = log_pb2.LogEvents.FromString(self.data)
        return self._parsed


@dataclass(eq=False)
class Watcher:
    """One spectator of a live match."""

    omniscient: bool
    delay_steps: int
    push: Push
    num_seats: int
    delivered: int = 0  # batches of the match's history already considered
    closed: bool = False

    def feed(self, history: list[SharedBatch], steps: int, final: bool) -> None:
        """Send the batches this view may see by now (all of them once the match is over)."""
        while self.delivered < len(history) and not self.closed:
            batch = history[self.delivered]
            if not final and batch.after_step + self.delay_steps > steps:
                return
            update = events_update(batch.parsed(), self.omniscient, self.num_seats)
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


class Audience:
    """A live match's spectators and the event batches they are fed from.

    The history is kept whole so that a spectator who joins late still gets every batch its
    view may see."""

    def __init__(self, num_seats: int) -> None:
        self.num_seats = num_seats
        self.history: list[SharedBatch] = []
        self.watchers: list[Watcher] = []
        #: The match's end and its steps, once :meth:`close` told it.
        self.ended: tuple[pb.WatchUpdate, int] | None = None

    def join(
        self, start: pb.WatchUpdate, omniscient: bool, delay_steps: int, push: Push, steps: int
    ) -> Watcher:
        """A new spectator: fed what it may see by now, and the end at once if the match told
        it already (one joining while its end is recorded would wait for an end told before)."""
        watcher = Watcher(omniscient, delay_steps, push, self.num_seats)
        push(start)
        if self.ended is not None:
            end, final_steps = self.ended
            watcher.feed(self.history, final_steps, final=True)
            watcher.close(end)
            return watcher
        watcher.feed(self.history, steps, final=False)
        self.watchers.append(watcher)
        return watcher

    def leave(self, watcher: Watcher) -> None:
        if watcher in self.watchers:
            self.watchers.remove(watcher)
        watcher.closed = True

    def publish(self, batch: bytes, after_step: int, steps: int) -> None:
        """A new batch of the match's events (a serialized ``LogEvents`` of ``after_step``):
        each spectator gets what it may see by now."""
        self.history.append(SharedBatch(after_step, batch))
        for watcher in self.watchers:
            watcher.feed(self.history, steps, final=False)

    def close(self, end: pb.WatchUpdate, steps: int) -> None:
        """The match is over: everything still held back, then the end, to every spectator."""
        self.ended = (end, steps)
        for watcher in self.watchers:
            watcher.feed(self.history, steps, final=True)
            watcher.close(end)
        self.watchers.clear()
