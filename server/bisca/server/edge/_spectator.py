"""The spectator RPC's work in trio: a live match's view, or a finished match's log (read
where the store says: :func:`recorded_log`), and the asyncio side's way in,
:func:`opened_watch`.

A live watcher is fed by its match (its updates go to the front's ``push``); how many watch
one match (:data:`MAX_WATCHERS_PER_MATCH`) and how many one address watches across the arena's
live matches (:data:`MAX_LIVE_WATCHERS_PER_PEER`) are bounded.  A finished
match's watcher gets a :class:`LogView` instead: its view of the log, kept serialized and
handed to the front one update at a time, as the front has written the one before; so a
client that reads nothing makes the server hold that view (a small part of the log) and no
more, for at most :data:`WATCH_STALL_S`.  How many such views the server holds at once is
bounded as well (:data:`MAX_FINISHED_WATCHERS`, :data:`MAX_FINISHED_WATCHERS_PER_PEER`), and
so is how many logs it reads for them at once (:data:`LOG_READS_AT_ONCE`)."""

from __future__ import annotations

import asyncio
import collections
import weakref
from collections.abc import Awaitable

import trio

from bisca.server.errors import LogFormatError, OperatorError
from bisca.server.logs import Push, Watcher, log_updates, why_unreadable
from bisca.server.referee import Deal, Referee
from bisca.v1 import arena_pb2 as pb

from ._bridge import TrioGuest
from ._operator import RecordedLog, recorded_log

#: Spectators of one live match at once: each is fed at every step of the match, on the loop
#: that plays it, so their number is bounded as any cost a token holder can add to it.
MAX_WATCHERS_PER_MATCH = 256
#: Spectators of live matches from one address at once, whichever matches they watch, over
#: gRPC and the web together (an IPv6 client by its /64: ``counted_peer``): each is fed at
#: every step of its match, and its front keeps what its client has not read yet, so without
#: this one address could hold every live match's updates :data:`MAX_WATCHERS_PER_MATCH` times
#: over.
MAX_LIVE_WATCHERS_PER_PEER = 64
#: Watchers of finished matches at once, from all addresses together (the gRPC service's and
#: the web's: one arena, one count): each holds its view of a log until its client has read
#: it, a few percent of the log (its events; 24 deals of Belote: a 576 KB log, a 26 KB public
#: view), so these bound what any holder of the spectator token can make the server keep.
#: Past them a watch is refused with RESOURCE_EXHAUSTED, before its log is read.
MAX_FINISHED_WATCHERS = 128
#: ... and from one address (over both fronts, an IPv6 client by its /64: ``counted_peer``):
#: a client reading its watches holds each for the moments it takes to read a log.
MAX_FINISHED_WATCHERS_PER_PEER = 16
#: A finished match's watcher whose client reads nothing for this long (one write waits that
#: long) is cut, as a bot's unread stream is: its view is dropped at once, and its call ends
#: (ABORTED) once its client reads the update under way, or its connection closes.  It keeps
#: its place in the counts above until then: gRPC cannot end a call under a pending write
#: (``_transport.play``), and a cut call that left the counts would let one client park
#: calls without bound.
WATCH_STALL_S = 60.0
#: Logs read for watchers at once, in a thread of their own (not one of the referee's
#: workers, which its matches need): a read holds the whole log parsed for the moment it takes,
#: ~12 times the file (a 40 MB log of 300 deals: 460 MB, 1.5 s), so the others wait their turn
#: (keeping their place in the counts, and nothing else).
LOG_READS_AT_ONCE = 1


class ArenaWatchers:
    """The spectators one arena streams at once (every front of it): of finished matches, by
    the address each came from and in all; of live matches, by address."""

    def __init__(self) -> None:
        self.views: set[LogView] = set()
        #: Per address, its watchers admitted: views, and the ones whose log is being read.
        self.by_peer: collections.Counter[str] = collections.Counter()
        #: Lends the thread their logs are read in, :data:`LOG_READS_AT_ONCE` at a time.
        self.reading = trio.CapacityLimiter(LOG_READS_AT_ONCE)
        #: Each live watcher's address, until its watch is over (:meth:`leave_live`), and how
        #: many each address has.
        self.live: dict[Watcher, str] = {}
        self.live_by_peer: collections.Counter[str] = collections.Counter()

    def admit_live(self, peer: str) -> None:
        """One more live watcher from ``peer`` (counted from now: :meth:`joined_live` once it
        watches, else :meth:`release_live`), or RESOURCE_EXHAUSTED."""
        if self.live_by_peer[peer] >= MAX_LIVE_WATCHERS_PER_PEER:
            raise OperatorError(
                "RESOURCE_EXHAUSTED",
                f"{peer or 'this address'} watches {self.live_by_peer[peer]} live matches "
                f"already (at most {MAX_LIVE_WATCHERS_PER_PEER} at once); close one first",
            )
        self.live_by_peer[peer] += 1

    def joined_live(self, watcher: Watcher, peer: str) -> None:
        self.live[watcher] = peer

    def leave_live(self, watcher: Watcher) -> None:
        """The live watch is over (once: a second call changes nothing)."""
        peer = self.live.pop(watcher, None)
        if peer is not None:
            self.release_live(peer)

    def release_live(self, peer: str) -> None:
        _count_off(self.live_by_peer, peer)

    def admit(self, peer: str) -> None:
        """One more watcher from ``peer``, or RESOURCE_EXHAUSTED saying which bound it meets."""
        if self.by_peer[peer] >= MAX_FINISHED_WATCHERS_PER_PEER:
            raise OperatorError(
                "RESOURCE_EXHAUSTED",
                f"{peer or 'this address'} watches {self.by_peer[peer]} finished matches "
                f"already (at most {MAX_FINISHED_WATCHERS_PER_PEER} at once); read them to "
                "their end or close them first",
            )
        if self.by_peer.total() >= MAX_FINISHED_WATCHERS:
            raise OperatorError(
                "RESOURCE_EXHAUSTED",
                f"the server streams {self.by_peer.total()} finished matches already (at most "
                f"{MAX_FINISHED_WATCHERS} at once, from all addresses); try again shortly",
            )
        self.by_peer[peer] += 1

    def leave(self, peer: str) -> None:
        _count_off(self.by_peer, peer)


def _count_off(counts: collections.Counter[str], peer: str) -> None:
    """One watcher of ``peer`` fewer (an address with none is forgotten)."""
    counts[peer] -= 1
    if not counts[peer]:
        del counts[peer]


#: Each arena's spectators, counted together by its fronts (the referee is what they share);
#: gone with it.
_ARENA_WATCHERS: weakref.WeakKeyDictionary[Referee, ArenaWatchers] = weakref.WeakKeyDictionary()


def arena_watchers(referee: Referee) -> ArenaWatchers:
    """The spectators of the arena ``referee`` judges."""
    watchers = _ARENA_WATCHERS.get(referee)
    if watchers is None:
        watchers = _ARENA_WATCHERS[referee] = ArenaWatchers()
    return watchers


class LogView:
    """A finished match's log as one watcher sees it, handed to its front one update at a
    time (:meth:`next`, once the one before is written: :meth:`written`).  The updates are
    kept serialized and parsed one by one: what the server holds for a watcher is the part
    of its view not sent yet, however slowly its client reads."""

    def __init__(self, updates: list[bytes], peer: str, watchers: ArenaWatchers) -> None:
        self._updates = collections.deque(updates)
        self._peer = peer
        self._watchers: ArenaWatchers | None = watchers
        #: The view's updates, and how many were handed to the front so far.
        self.size = len(updates)
        self.handed = 0
        #: The bytes of the updates not handed yet: what the server holds for this watcher.
        self.held_bytes = sum(len(update) for update in updates)
        #: Its client read nothing for :data:`WATCH_STALL_S`: the rest of the view is dropped.
        self.cut = False
        watchers.views.add(self)

    async def next(self) -> pb.WatchUpdate | None:
        """The next update (``None``: the view is over, or closed)."""
        if not self._updates:
            return None
        update = self._updates.popleft()
        self.held_bytes -= len(update)
        self.handed += 1
        return pb.WatchUpdate.FromString(update)

    async def written(self, write: Awaitable[None]) -> asyncio.Future[None] | None:
        """Await ``write`` (of the update :meth:`next` handed) for up to
        :data:`WATCH_STALL_S`: ``None`` once it is done (its error raised).  Else the client
        reads nothing: the view is cut (what it holds is dropped; its place in the counts is
        kept until :meth:`close`), and the write, still under way, is returned for the front
        to end its call when it ends."""
        writing = asyncio.ensure_future(write)
        try:
            await asyncio.wait((writing,), timeout=WATCH_STALL_S)
        except asyncio.CancelledError:  # the call is gone: so is its write
            writing.cancel()
            raise
        if writing.done():
            writing.result()
            return None
        self.cut = True
        self._drop()
        return writing

    def close(self) -> None:
        """The watch is over: its view dropped, its place in the counts freed (once)."""
        self._drop()
        if self._watchers is not None:
            self._watchers.views.discard(self)
            self._watchers.leave(self._peer)
            self._watchers = None

    def _drop(self) -> None:
        self._updates.clear()
        self.held_bytes = 0


async def open_watch(
    referee: Referee, request: pb.WatchMatchRequest, push: Push, peer: str = ""
) -> Watcher | LogView:
    """Start streaming a match: a live watcher, whose updates go to ``push`` (returned, so the
    transport can cancel it), or the view of a finished match's log, for the front to hand on
    as its client reads (``peer``: the address the call came from, which it counts against)."""
    watchers = arena_watchers(referee)
    runner = referee.matches.get(request.match_id)
    if runner is not None:
        if len(runner.audience.watchers) >= MAX_WATCHERS_PER_MATCH:
            raise OperatorError(
                "RESOURCE_EXHAUSTED",
                f"{MAX_WATCHERS_PER_MATCH} spectators watch match {runner.id} already; try "
                "again when one leaves",
            )
        watchers.admit_live(peer)
        try:
            if runner.state is not None and runner.state.is_over:  # (its end being recorded)
                await _unless_sealed(referee, runner.id, Deal(runner.game, runner.seed))
            watcher = runner.watch(request.omniscient, request.delay_steps, push)
        except BaseException:
            watchers.release_live(peer)
            raise
        watchers.joined_live(watcher, peer)
        return watcher
    watchers.admit(peer)  # first: a watch refused costs no store lookup, no log read
    try:
        updates = await _recorded_view(referee, request, watchers.reading)
    except BaseException:
        watchers.leave(peer)
        raise
    return LogView(updates, peer, watchers)


async def _recorded_view(
    referee: Referee, request: pb.WatchMatchRequest, reading: trio.CapacityLimiter
) -> list[bytes]:
    """The view of a finished match's log that ``request`` asks for, serialized (its log read
    in a thread ``reading`` lends)."""
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
        return await trio.to_thread.run_sync(
            _serialized_view, recorded, request.omniscient, limiter=reading
        )
    except (OSError, LogFormatError) as problem:
        why = why_unreadable(recorded.path, problem)
        raise OperatorError(
            "FAILED_PRECONDITION", f"the log of match {record.id} cannot be read: {why}"
        ) from None


def _serialized_view(recorded: RecordedLog, omniscient: bool) -> list[bytes]:
    """The log read once, and what a watcher sees of it, serialized: the log itself (its
    observations and actions, most of its bytes) is let go before the first update is sent."""
    log = recorded.read()
    return [update.SerializeToString() for update in log_updates(log.entries(), omniscient)]


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
    guest: TrioGuest, referee: Referee, request: pb.WatchMatchRequest, push: Push, peer: str = ""
) -> Watcher | LogView:
    """:func:`open_watch` from the asyncio side (the transport's and the web's watch).  A
    caller cancelled while the watch opens (its client gone) leaves no watcher behind: the
    one opened meanwhile is stopped as soon as it is."""
    opening = asyncio.ensure_future(guest.call(open_watch, referee, request, push, peer))

    def stop_if_opened(opened: asyncio.Future[Watcher | LogView]) -> None:
        if not opened.cancelled() and opened.exception() is None:
            guest.run_sync_soon(stop_watching, referee, request.match_id, opened.result())

    try:
        return await asyncio.shield(opening)
    except asyncio.CancelledError:
        opening.add_done_callback(stop_if_opened)
        raise


def stop_watching(referee: Referee, match_id: str, watcher: Watcher | LogView) -> None:
    """The watch is over: a live watcher leaves its match, a log view lets its log go."""
    if isinstance(watcher, LogView):
        watcher.close()
        return
    arena_watchers(referee).leave_live(watcher)
    runner = referee.matches.get(match_id)
    if runner is not None:
        runner.unwatch(watcher)
    watcher.closed = True
