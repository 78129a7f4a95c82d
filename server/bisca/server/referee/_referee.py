"""The referee: bots' connections, authentication, and the matches they play (trio).

Everything here runs in trio, hosted in guest mode on the transport's asyncio loop
(``edge/_bridge.py``), but for the hot path: a welcomed bot's reply.  The transport edge calls
the entry points through the trio token and hands each connection two non-blocking callables
(``send`` and ``close``) that only enqueue on the asyncio side; a reply of a welcomed bot it
hands :meth:`Referee.reply_received` in its own turn (no crossing per decision), which judges
it, and the match's core applies it, logs it and asks the next seat, all synchronously
(``_core.py``, ``_match.py``).  No function here blocks: the store is reached through worker
threads, and every wait for a bot is a trio cancel scope.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import secrets
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Protocol

import trio

from bisca.engine import GAMES, settings_to_mapping
from bisca.server import metrics
from bisca.server.datadir import DataDir
from bisca.server.logs import ServerKey
from bisca.server.records import MAX_SEED, QueuedBot
from bisca.server.store import Store, hash_token
from bisca.v1 import arena_pb2 as pb

from . import _messages as messages
from ._clock import ClockSettings
from ._connection import REFUSALS_AT_START, Connection, Inbound, Send
from ._judge import (
    RefusedMessage,
    verify_addressed,
    verify_hello,
    verify_inbound,
    verify_reply_message,
)
from ._match import MatchPlan, MatchRunner, Pending
from ._sealing import Deal, SealedDeals, seal_map
from ._throttle import MAX_WAITING_PER_PEER, WrongTokenThrottle, peer_address

log = logging.getLogger("bisca.server")

SERVER_VERSION = "0.1.0"
#: Messages a bot may send after its Hello before the Welcome (they wait for it).
MAX_EARLY_MESSAGES = 64
#: ... and the bytes they may hold together: before its Hello is judged (a wrong token may wait
#: seconds for its answer) a stream costs the server no more than this, whatever it sends.
MAX_EARLY_BYTES = 64 * 1024
#: Worker threads the referee's trio run may use at once.  Every blocking call it makes is a
#: short store call (which the store serializes on its one connection anyway) or a log's final
#: sync, so trio's default of 40 only added threads: 250 matches starting together held 49
#: server threads, against 14 with this limit (bench/README.md).
WORKER_THREADS = 4


@dataclass
class ServerOptions:
    hello_timeout: float = 10.0
    join_timeout: float = 60.0
    clock: ClockSettings = field(default_factory=ClockSettings)
    #: Close the connections of one-time (local mode) bots when their match ends.
    close_ephemeral_after_match: bool = True
    #: Welcomed connections one bot may hold at once: a bot may spread its matches over
    #: several, but each costs the server a stream's memory, and a token is all it takes.
    max_connections_per_bot: int = 128
    #: Messages of a stream's bot refused before a match sent it any (then two more for each
    #: a match sent it: ``_connection.py``); past them its stream ends.
    refusals_at_start: int = REFUSALS_AT_START


class MatchQueue(Protocol):
    """League mode's matchmaker, as operators see it: the bots waiting for a match."""

    def queue(self) -> list[QueuedBot]: ...


class Referee:
    """Connections, bots and matches of one server."""

    def __init__(
        self,
        store: Store,
        options: ServerOptions | None = None,
        signer: ServerKey | None = None,
    ) -> None:
        self.store = store
        self.options = options or ServerOptions()
        #: Signs every match log this referee completes (``None``: logs are left unsigned).
        self.signer = signer
        self.wrong_tokens = WrongTokenThrottle()
        self.connections: dict[str, Connection] = {}
        self.online: dict[str, list[Connection]] = {}
        self.matches: dict[str, MatchRunner] = {}
        self.pending: dict[str, Pending] = {}
        self.ephemeral: dict[str, str] = {}  # token hash -> bot name, for local matches
        self._bots_changed = trio.Event()
        self._ids = itertools.count(1)
        self._request_key = secrets.token_bytes(16)
        self.nursery: trio.Nursery | None = None
        #: League mode's matchmaker, else ``None``.
        self.matchmaker: MatchQueue | None = None
        #: The asyncio loop hosting the referee (:meth:`drive_on`), else ``None``.
        self.loop: asyncio.AbstractEventLoop | None = None

    def drive_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """The referee is hosted (guest-mode trio) on ``loop``, which owns the bots' streams:
        its matches take the loop's time and timers, and :meth:`reply_received` may be called
        in the loop's own turns.  Before any match is created."""
        assert not self.matches, "a referee is driven on a loop before its first match"
        self.loop = loop

    # ---- lifetime ---------------------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Host the referee's tasks until cancelled."""
        trio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            task_status.started()
            await trio.sleep_forever()

    def spawn(self, fn: Callable[[], Awaitable[None]]) -> None:
        """Start a task in the referee's nursery (it lives as long as the referee)."""
        assert self.nursery is not None, "the referee is not running"
        self.nursery.start_soon(fn)

    @property
    def held_before_welcome(self) -> int:
        """Bytes of messages open streams pipelined after a Hello not yet answered."""
        return sum(connection.early_bytes for connection in self.connections.values())

    # ---- entry points from the transport (called through the trio token) -------------------

    def connection_opened(
        self, connection_id: str, send: Send, close: Callable[[], None], peer: str = ""
    ) -> None:
        connection = Connection(
            connection_id, send, close, peer=peer, refusals_left=self.options.refusals_at_start
        )
        self.connections[connection_id] = connection
        # The wait for its Hello ends at its deadline, or as soon as the stream is welcomed or
        # closed (even before the waiting task first runs): nothing of a stream is held for
        # the rest of the timeout.
        waiting = trio.CancelScope(deadline=trio.current_time() + self.options.hello_timeout)
        connection.stop_waiting_for_hello = waiting.cancel
        self.spawn(partial(self._expect_hello, connection, waiting))

    def connection_closed(self, connection_id: str) -> None:
        connection = self.connections.pop(connection_id, None)
        if connection is None:
            return
        connection.alive = False
        connection.stop_waiting_for_hello()
        # Nothing of a stream outlives it: what it pipelined after its Hello, and the wait
        # for the answer to its wrong token (which holds the connection).
        connection.early.clear()
        connection.early_bytes = 0
        self.wrong_tokens.forget(connection_id)
        if connection.bot is not None:
            peers = self.online.get(connection.bot, [])
            if connection in peers:
                peers.remove(connection)
                metrics.BOTS_CONNECTED.dec()
            if not peers:
                self.online.pop(connection.bot, None)
            log.info("bot %s disconnected (%s)", connection.bot, connection_id)
            for match in list(self.matches.values()):
                match.connection_lost(connection)
        self._signal_bots_changed()

    def takes_replies_from(self, connection_id: str) -> bool:
        """Whether a message of that connection is a welcomed bot's (a reply, or refused as
        not one): :meth:`reply_received` judges it without trio."""
        connection = self.connections.get(connection_id)
        return connection is not None and connection.alive and connection.bot is not None

    def reply_received(self, connection_id: str, message: Inbound) -> None:
        """A welcomed bot's message (:meth:`takes_replies_from`), in the caller's turn: the
        edge's loop (on the one thread trio runs on) or trio."""
        connection = self.connections.get(connection_id)
        if connection is not None and connection.alive:
            self._route_reply(connection, message)

    def message_received(self, connection_id: str, message: Inbound) -> None:
        connection = self.connections.get(connection_id)
        if connection is None or not connection.alive:
            return
        if connection.bot is not None:  # welcomed: all it may send is a reply
            self._route_reply(connection, message)
            return
        try:
            parsed = verify_inbound(message)
        except RefusedMessage as refused:
            if connection.said_hello:  # answered, and the stream goes on, as after a Welcome
                connection.refused(refused.answer)
            else:  # a stream's first word must be a Hello: not answer after answer before one
                connection.refuse(messages.fatal(refused.answer))
            return
        kind = parsed.WhichOneof("kind")
        if kind == "hello":
            if connection.said_hello:
                connection.refused(messages.duplicate_hello_error())
                return
            if self.wrong_tokens.full(connection.peer):
                # Refused unjudged: judging it would answer a guess at once.
                connection.error(
                    pb.ERROR_CODE_UNSPECIFIED,
                    f"too many Hellos from {peer_address(connection.peer)} are waiting for the "
                    f"answer to a wrong token (at most {MAX_WAITING_PER_PEER}); try again later",
                    fatal=True,
                )
                return
            connection.said_hello = True
            self.spawn(partial(self._authenticate, connection, parsed.hello))
        elif connection.said_hello:
            # Pipelined after the Hello: kept until the Hello is answered, then played.
            size = parsed.ByteSize()
            if len(connection.early) >= MAX_EARLY_MESSAGES:
                connection.error(
                    pb.ERROR_CODE_MALFORMED_MESSAGE,
                    f"more than {MAX_EARLY_MESSAGES} messages before the Welcome; this one "
                    "was ignored",
                )
                return
            if connection.early_bytes + size > MAX_EARLY_BYTES:
                connection.error(
                    pb.ERROR_CODE_MALFORMED_MESSAGE,
                    f"more than {MAX_EARLY_BYTES} bytes of messages before the Welcome; this "
                    f"one ({size} bytes) was ignored",
                )
                return
            connection.early.append(parsed)
            connection.early_bytes += size
        else:
            connection.refuse(messages.hello_required_error())

    # ---- hello ------------------------------------------------------------------------------

    async def _expect_hello(self, connection: Connection, waiting: trio.CancelScope) -> None:
        with waiting:
            await trio.sleep_forever()
        if connection.alive and connection.bot is None:
            connection.error(
                pb.ERROR_CODE_HELLO_TIMEOUT,
                f"no Hello within {self.options.hello_timeout:g} s",
                fatal=True,
            )

    async def _authenticate(self, connection: Connection, hello: pb.Hello) -> None:
        try:
            games = verify_hello(hello)
        except RefusedMessage as refused:
            connection.refuse(refused.answer)
            return
        name = self.ephemeral.get(hash_token(hello.token))
        if name is None and hello.token:
            try:
                name = await trio.to_thread.run_sync(self.store.bots.for_token, hello.token)
            except Exception:  # a locked or broken store refuses this bot, not the server
                log.exception("%s: the store could not check a token", connection.id)
                if connection.alive:
                    connection.error(
                        pb.ERROR_CODE_UNSPECIFIED,
                        "the server could not check the token (its store failed); try again later",
                        fatal=True,
                    )
                return
        if not connection.alive:
            return
        if name is None:
            if not await self.wrong_tokens.wrong_token(connection.peer, connection.id):
                return  # the peer left while it waited: nothing is held for it
            connection.early.clear()
            connection.early_bytes = 0
            if connection.alive:
                connection.refuse(messages.unknown_token_error())
            return
        held = len(self.online.get(name, ()))
        if held >= self.options.max_connections_per_bot:
            connection.error(
                pb.ERROR_CODE_UNSPECIFIED,
                f"bot {name} holds {held} connections already (at most "
                f"{self.options.max_connections_per_bot}); close one before connecting again",
                fatal=True,
            )
            return
        connection.bot = name
        connection.bot_version = hello.bot_version
        connection.games = games
        connection.protocol = hello.protocol_version
        connection.live_events = (
            hello.protocol_version == pb.PROTOCOL_VERSION_1 or hello.live_events
        )
        self.online.setdefault(name, []).append(connection)
        connection.stop_waiting_for_hello()
        metrics.BOTS_CONNECTED.inc()
        connection.send(
            messages.welcome(
                connection.protocol,
                name,
                SERVER_VERSION,
                connection.id,
                live_events=connection.live_events,
            )
        )
        log.info(
            "bot %s connected (%s, version %r, protocol %d, %s events)",
            name,
            connection.id,
            hello.bot_version,
            connection.protocol,
            "live" if connection.live_events else "carried",
        )
        for match in list(self.matches.values()):
            match.connection_gained(connection)
        self._signal_bots_changed()
        early, connection.early = connection.early, []
        connection.early_bytes = 0
        for message in early:
            self.message_received(connection.id, message)

    # ---- replies ----------------------------------------------------------------------------

    def _route_reply(self, connection: Connection, message: Inbound) -> None:
        """A welcomed bot's message, judged (``_judge.py``, as ``check-bot`` judges it) up to
        the open request it answers, whose match judges its action."""
        try:
            reply = verify_reply_message(message)
            pending = self.pending.get(reply.request_id)
            if pending is not None and pending.match.bots[pending.seat] != connection.bot:
                pending = None  # another bot's request: as unknown as one never sent
            verify_addressed(
                reply.request_id,
                None if pending is None else pending.asked,
                holds_seat=pending is not None
                and pending.match.connection_of(pending.seat) is connection,
            )
        except RefusedMessage as refused:
            connection.refused(refused.answer)
            return
        assert pending is not None  # (verify_addressed refuses a reply to no open request)
        pending.match.reply(pending.seat, reply.action)

    # ---- bots online ------------------------------------------------------------------------

    def _signal_bots_changed(self) -> None:
        self._bots_changed.set()
        self._bots_changed = trio.Event()

    async def wait_bots_changed(self) -> None:
        await self._bots_changed.wait()

    def connections_of(self, bot: str) -> list[Connection]:
        return [c for c in self.online.get(bot, []) if c.alive]

    def add_ephemeral_bot(self, name: str) -> str:
        """A one-time token for a local match's bot (kept in memory only)."""
        token = "bisca_local_" + secrets.token_urlsafe(18)
        self.ephemeral[hash_token(token)] = name
        return token

    def drop_ephemeral_bot(self, name: str) -> None:
        for token_hash, bot in list(self.ephemeral.items()):
            if bot == name:
                del self.ephemeral[token_hash]
        for connection in self.connections_of(name):
            connection.close()

    def new_request_id(self) -> str:
        # Opaque: a keyed hash of a counter, unique (96 bits of a key drawn for this run) and
        # telling nothing.  The counter itself told a bot how many requests the server sent
        # between two of its own, and so which seat of its match plays by default (a forfeited
        # seat's default player is sent none: review s58c G1).  A reply is routed only from
        # the connection of the seat asked, so the id need not be secret, only say nothing.
        number = next(self._ids).to_bytes(8, "little")
        return "r" + hashlib.blake2b(number, key=self._request_key, digest_size=12).hexdigest()

    def new_match_id(self) -> str:
        return "m-" + secrets.token_hex(6)

    # ---- matches ----------------------------------------------------------------------------

    def open_request(self, pending: Pending) -> None:
        self.pending[pending.request_id] = pending

    def close_request(self, request_id: str) -> None:
        self.pending.pop(request_id, None)

    def is_known_bot(self, bot: str) -> bool:
        """A bot with a one-time token of this referee (a local match's, a tournament's)."""
        return bot in self.ephemeral.values()

    async def create_match(self, plan: MatchPlan, *, match_dir: Path | None = None) -> MatchRunner:
        """Record and start a match; it waits for its bots in the background.  Every bot must
        be registered in the store or hold a one-time token of this referee.  The match's
        folder (its log, its bots' output) is ``DATA/matches/ID`` unless ``match_dir``
        says otherwise.  A plan :meth:`record_ahead` recorded is started as it is."""
        if not plan.recorded:
            plan = await self.record_ahead(plan)
        assert plan.match_id is not None and plan.seed is not None and plan.clock is not None
        runner = MatchRunner(
            self,
            plan,
            match_id=plan.match_id,
            seed=plan.seed,
            clock=plan.clock,
            join_timeout=self.options.join_timeout
            if plan.join_timeout is None
            else plan.join_timeout,
            match_dir=match_dir or DataDir(self.store.data_dir).match_dir(plan.match_id),
        )
        self.matches[plan.match_id] = runner
        self.spawn(runner.run)
        return runner

    async def record_ahead(
        self, plan: MatchPlan, launched: frozenset[str] = frozenset()
    ) -> MatchPlan:
        """Record ``plan``'s match in the store, waiting, to be started later by
        :meth:`create_match`; the plan returned has its id, seed and clock fixed.  From now on
        its deal is sealed (``_sealing.py``): a ladder records every rotation of a pairing
        before it plays the first, so that no rotation's end shows the deal of those still to
        be played.  The bots of ``launched`` get their one-time tokens when the match is
        played (:func:`bisca.server.tournament.play_launched`): not looked for now."""
        game = plan.game
        seats = GAMES[game].seats(plan.settings)
        if len(plan.bots) != seats:
            raise ValueError(
                f"a {game} match with these settings needs {seats} bots, got {len(plan.bots)}"
            )
        seed = plan.seed
        if seed is not None and not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed {seed} is out of range: a seed is 0 to 2^63-1 ({MAX_SEED})")
        others = [bot for bot in sorted(set(plan.bots) - launched) if not self.is_known_bot(bot)]
        if seed is None:
            seed = secrets.randbits(63)
        clock = plan.clock or self.options.clock
        match_id = plan.match_id or self.new_match_id()
        # One thread hop: the bots checked, then the match recorded.
        record = partial(
            self.store.matches.create,
            match_id,
            game,
            settings_to_mapping(plan.settings),
            seed,
            list(plan.bots),
            clock.to_mapping(),
            rated=plan.rated,
            seals_twins=plan.seals_twins,
        )
        missing = await trio.to_thread.run_sync(_record_unless_missing, self.store, others, record)
        if missing:
            raise ValueError(f"no bot named {missing[0]!r} is registered")
        return replace(plan, seed=seed, clock=clock, match_id=match_id, recorded=True)

    async def sealed_deals(self, deals: Collection[Deal]) -> SealedDeals:
        """Which of ``deals`` are sealed (``_sealing.py``), each with a match that seals it:
        one of this referee's not over, or in the store one waiting or running (a tournament
        another process runs into the same data directory, a peer server) or a tournament's
        planned match not played yet.  What a list of matches asks of its page: the reads grow
        with the page, not with the store."""
        wanted = set(deals)
        sealed = seal_map(
            (runner.id, runner.game, runner.seed)
            for runner in self.matches.values()
            if runner.seals_twins
            and not runner.status.is_over
            and Deal(runner.game, runner.seed) in wanted
        )
        rest = [(deal.game, deal.seed) for deal in wanted if deal not in sealed]
        if rest:
            stored = await trio.to_thread.run_sync(self.store.matches.deals_in_play, rest)
            for (game, seed), match_id in stored.items():
                sealed.setdefault(Deal(game, seed), match_id)
        return sealed

    async def sealing_match(self, deal: Deal, *, besides: str | None = None) -> str | None:
        """A match other than ``besides`` that dealt ``deal`` and is not over (its id), else
        ``None``: this referee's own first (no store read then), else the store's.  One
        indexed question: what a match asks as it ends, and what an answer about one match
        asks."""
        for runner in self.matches.values():
            if (
                runner.id != besides
                and runner.seals_twins
                and not runner.status.is_over
                and (runner.game, runner.seed) == (deal.game, deal.seed)
            ):
                return runner.id
        return await trio.to_thread.run_sync(
            partial(self.store.matches.deal_in_play, deal.game, deal.seed, besides=besides)
        )

    async def deal_sealed(self, deal: Deal, *, besides: str) -> bool:
        """Whether a match other than ``besides`` dealt ``deal`` and is not over."""
        return await self.sealing_match(deal, besides=besides) is not None

    def forget_match(self, match_id: str) -> None:
        self.matches.pop(match_id, None)


def _record_unless_missing(store: Store, bots: list[str], record: Callable[[], None]) -> list[str]:
    """In a worker thread: the bots of ``bots`` the store does not know (then nothing is
    recorded), else none, and ``record`` done."""
    missing = [bot for bot in bots if not store.bots.has(bot)]
    if not missing:
        record()
    return missing
