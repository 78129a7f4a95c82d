"""The spectator RPC's work in trio: a live match's view, or a finished match's log (read
where the store says: :func:`recorded_log`), and the asyncio side's way in,
:func:`opened_watch`."""

from __future__ import annotations

import asyncio

import trio

from bisca.server.errors import LogFormatError, OperatorError
from bisca.server.logs import Push, Watcher, log_updates, why_unreadable
from bisca.server.referee import Deal, Referee
from bisca.v1 import arena_pb2 as pb

from ._bridge import TrioGuest
from ._operator import recorded_log

#: Spectators of one live match at once: each is fed at every step of the match, on the loop
#: that plays it, so their number is bounded as any cost a token holder can add to it.
MAX_WATCHERS_PER_MATCH = 256


async def open_watch(referee: Referee, request: pb.WatchMatchRequest, push: Push) -> Watcher | None:
    """Start streaming a match to ``push``: a live watcher (returned, so the transport can
    cancel it), or the whole log of a finished match (``None``)."""
    runner = referee.matches.get(request.match_id)
    if runner is not None:
        if len(runner.audience.watchers) >= MAX_WATCHERS_PER_MATCH:
            raise OperatorError(
                "RESOURCE_EXHAUSTED",
                f"{MAX_WATCHERS_PER_MATCH} spectators watch match {runner.id} already; try "
                "again when one leaves",
            )
        if runner.state is not None and runner.state.is_over:  # (its end being recorded)
            await _unless_sealed(referee, runner.id, Deal(runner.game, runner.seed))
        return runner.watch(request.omniscient, request.delay_steps, push)
    record = await trio.to_thread.run_sync(referee.store.matches.get, request.match_id)
    if record is None:
        raise OperatorError("NOT_FOUND", f"no match {request.match_id!r}")
    if not record.log_path:
        raise OperatorError(
            "FAILED_PRECONDITION", f"match {request.match_id} has no log ({record.status})"
        )
    await _unless_sealed(referee, record.id, Deal(record.game, record.seed))
    recorded = await trio.to_thread.run_sync(
        recorded_log, referee.store, record.id, record.log_path
    )
    try:
        log = await trio.to_thread.run_sync(recorded.read)
    except (OSError, LogFormatError) as problem:
        why = why_unreadable(recorded.path, problem)
        raise OperatorError(
            "FAILED_PRECONDITION", f"the log of match {record.id} cannot be read: {why}"
        ) from None
    for update in log_updates(log.entries(), request.omniscient):
        push(update)
    push(None)
    return None


async def _unless_sealed(referee: Referee, match_id: str, deal: Deal) -> None:
    """A match that is over shows every card of its deal: not while a twin dealt from it is
    played (the rule every interface keeps, ``referee/_sealing.py``; the web's replay too)."""
    sealing = await referee.sealing_match(deal, besides=match_id)
    if sealing is not None:
        raise OperatorError(
            "PERMISSION_DENIED",
            f"match {sealing} is being played with the same deal; watching {match_id} opens "
            "when it is over",
        )


async def opened_watch(
    guest: TrioGuest, referee: Referee, request: pb.WatchMatchRequest, push: Push
) -> Watcher | None:
    """:func:`open_watch` from the asyncio side (the transport's and the web's watch).  A
    caller cancelled while the watch opens (its client gone) leaves no watcher behind: the
    one opened meanwhile is stopped as soon as it is."""
    opening = asyncio.ensure_future(guest.call(open_watch, referee, request, push))

    def stop_if_opened(opened: asyncio.Future[Watcher | None]) -> None:
        if not opened.cancelled() and opened.exception() is None:
            watcher = opened.result()
            if watcher is not None:
                guest.run_sync_soon(stop_watching, referee, request.match_id, watcher)

    try:
        return await asyncio.shield(opening)
    except asyncio.CancelledError:
        opening.add_done_callback(stop_if_opened)
        raise


def stop_watching(referee: Referee, match_id: str, watcher: Watcher) -> None:
    runner = referee.matches.get(match_id)
    if runner is not None:
        runner.unwatch(watcher)
    watcher.closed = True
