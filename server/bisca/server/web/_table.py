"""A seat for a person: the browser plays one seat of a match as a bot client of the arena.

A :class:`Table` is one game of a person against (and with) bots.  The arena is not told a
seat is a person: the web makes a one-time token for the person's seat, as ``bisca match``
does for its bots, opens a ``Play`` stream to the arena's own socket with the generated gRPC
stub on the same asyncio loop, and says hello like any bot.  Every ``ServerMessage`` of that
stream goes to the browser as canonical JSON; the person's choice comes back as an
``ActionReply`` and is written to the stream.  The match is created, logged and recorded by
the referee like any other (unrated), and the sample bots at the table are launched as the
arena launches every bot (sandboxed unless the operator said otherwise).

The browser holds a token of its own for the table: made per game, known to that browser
alone, and dead a while after the game (:data:`TOKEN_AFTER_END_S`).  Illegal cards come with
the referee's own reason: while the person's request is open the match waits for it, so asking
the match's engine state ``why_illegal`` of each card the person holds and may not play gives
exactly the words the referee would reject it with.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import secrets
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from pathlib import Path

import grpc
import trio

from bisca import wire
from bisca.engine import GAMES, Action, EngineError, Settings
from bisca.server.datadir import seat_log_prefix
from bisca.server.edge import TrioGuest
from bisca.server.referee import PROTOCOL_VERSION, ClockSettings, MatchPlan, MatchRunner, Policy
from bisca.server.sandbox import SAMPLE_BOTS, BotLauncher, bot_argv, run_seat_bot
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc, belote_pb2

from ._backend import Backend
from ._json import JsonObject, Problem, to_json

log = logging.getLogger("bisca.web")

#: A person's clock: a minute a move and two in the bank; a move not made plays the game's
#: default action (a person who leaves the table does not forfeit the partner's game).
PERSON_CLOCK = ClockSettings(move_ms=60_000, bank_ms=120_000, policy=Policy.DEFAULT)
#: The longest the page holds the person's question back while it paces the other seats'
#: cards and shows a completed trick (its pacer cuts every wait before a question to fit; the
#: page reads this from the table's summary).  The referee's move time at a person's table is
#: the person's plus this allowance, and the page's countdown starts when the question is
#: shown: the person is never charged for the page's own pace.
PACING_ALLOWANCE_MS = 10_000
#: How long the browser's token lives once its game is over (to see the end, reload, replay).
TOKEN_AFTER_END_S = 15 * 60.0
#: How long the bots of a table have to connect (sample bots start in a second or two).
JOIN_TIMEOUT_S = 60.0
#: Tables at once: each holds bot processes.
MAX_TABLES = 8
#: Sockets open at once on one table (a person's tab, a reload before the old socket is seen
#: gone, another tab): without a cap, a table's token, which anybody gets, held sockets by
#: the thousand, each a file descriptor of the arena's process for the whole game.
MAX_PAGES_PER_TABLE = 8
#: The longest clock a person's table may ask for: a table is a seat for a person playing
#: now, and a long clock is what lets one request hold bot processes for hours.
MAX_PERSON_CLOCK = ClockSettings(move_ms=120_000, bank_ms=600_000, policy=Policy.DEFAULT)
#: The longest match a person's table may ask for, per game: its settings' fields and caps.
MAX_PERSON_LENGTH: dict[str, dict[str, int]] = {
    "belote": {"deals": 24, "max_deals": 24},
    "bestia": {"rounds": 4, "giro_max_hands": 10},
}


@dataclass(frozen=True)
class TableLimits:
    """What one visitor may hold: the tables open at once from one peer address, and how
    long a table waits for its browser to open the person's seat before it is ended."""

    per_client: int = 2
    unjoined_s: float = 60.0
    #: How long a joined table stays with no page open before it is ended the same way: a
    #: person may reload or lose the network a while, but a table whose person left for good
    #: would hold its bot processes, and a place among :data:`MAX_TABLES`, for hours.
    left_s: float = 300.0


class TableStatus(StrEnum):
    WAITING = "waiting"
    PLAYING = "playing"
    OVER = "over"


@dataclass(eq=False)
class Table:
    """One person's game: its match, the frames the browser was sent, its open request."""

    id: str
    token: str
    game: str
    seat: int
    match_id: str
    seats: list[str]
    #: The person's clock (the referee's adds :data:`PACING_ALLOWANCE_MS` to its move time).
    clock: ClockSettings = PERSON_CLOCK
    status: TableStatus = TableStatus.WAITING
    #: Every frame sent so far, so a browser that reloads redraws the whole game.
    frames: list[JsonObject] = field(default_factory=list)
    listeners: list[asyncio.Queue[JsonObject | None]] = field(default_factory=list)
    replies: asyncio.Queue[pb.ActionReply] = field(default_factory=asyncio.Queue)
    open_request: str = ""
    #: Loop time the open request arrived at (a page that comes back counts its clock from it).
    request_at: float = 0.0
    #: The open request once a reply to it was taken: no second one is (a reload, another page
    #: of the table), and a page that comes back is not shown it as open.
    answered: str = ""
    #: Loop time after which the browser's token is refused (set when the game ends).
    expires: float | None = None
    #: The peer address that asked for the table (tables per client are counted by it).
    client: str = ""
    #: Whether the token's holder opened the person's seat (a table nobody opens is ended).
    joined: bool = False
    #: The sockets open on the table now (at most :data:`MAX_PAGES_PER_TABLE`).
    pages: int = 0
    #: What the table does when its last page closes (its :class:`Tables` ends it if none
    #: opens again in time), and the timer that would.
    when_left: Callable[[], None] = lambda: None
    left_timer: asyncio.TimerHandle | None = None

    def publish(self, frame: JsonObject) -> None:
        self.frames.append(frame)
        for queue in self.listeners:
            queue.put_nowait(frame)

    def close(self) -> None:
        for queue in self.listeners:
            queue.put_nowait(None)
        self.listeners.clear()

    @contextlib.contextmanager
    def page_opened(self) -> Iterator[None]:
        """A socket on the table, for the block; :class:`Problem` 429 when the table has
        :data:`MAX_PAGES_PER_TABLE` already."""
        if self.pages >= MAX_PAGES_PER_TABLE:
            raise Problem(
                429,
                f"table {self.id}: {MAX_PAGES_PER_TABLE} pages have it open already; close one",
            )
        self.pages += 1
        if self.left_timer is not None:
            self.left_timer.cancel()
            self.left_timer = None
        try:
            yield
        finally:
            self.pages -= 1
            if not self.pages:
                self.when_left()

    def caught_up(self) -> JsonObject:
        """The frame that follows the frames a page that comes (back) is sent at once: which
        of the requests among them is still open, and since how long, so that the page shows
        the game as it stands rather than playing it again."""
        open_ms = 0
        still_open = self.open_request if self.open_request != self.answered else ""
        if still_open:
            open_ms = round((asyncio.get_running_loop().time() - self.request_at) * 1000)
        return {"caughtUp": {"openRequest": still_open, "openForMs": open_ms}}

    def summary(self) -> JsonObject:
        return {
            "table": self.id,
            "game": self.game,
            "seat": self.seat,
            "matchId": self.match_id,
            "seats": self.seats,
            "status": self.status.value,
            "clock": {"moveMs": self.clock.move_ms, "bankMs": self.clock.bank_ms},
            "pacingMs": PACING_ALLOWANCE_MS,
        }


@dataclass(frozen=True)
class TableRequest:
    """A checked request for a table: the match to create, and the person's seat in it."""

    game: str
    settings: Settings
    seat: int
    bots: list[str]  # by seat; the person's entry is ""
    seed: int | None
    clock: ClockSettings


def table_request(request: pb.CreateMatchRequest) -> TableRequest:
    """Check a ``CreateMatchRequest`` for a table: ``bots`` names one bot per seat in seat
    order, the person's seat as the one empty name."""
    try:
        game = wire.game_name(request.game)
    except ValueError:
        raise Problem(
            400, f"unknown game {request.game}; known: {', '.join(sorted(GAMES))}"
        ) from None
    try:
        settings = wire.decode_game_settings(
            game, request.settings if request.HasField("settings") else None
        )
    except (EngineError, ValueError) as problem:
        raise Problem(400, f"settings: {problem}") from None
    seats = GAMES[game].seats(settings)
    bots = list(request.bots)
    if len(bots) != seats:
        raise Problem(
            400,
            f"bots: a {game} table with these settings has {seats} seats; name a bot for each "
            f"and leave the person's seat empty (got {len(bots)} names)",
        )
    empty = [seat for seat, name in enumerate(bots) if not name]
    if len(empty) != 1:
        raise Problem(
            400, f"bots: exactly one seat is the person's (an empty name), not {len(empty)}"
        )
    try:
        clock = ClockSettings(
            move_ms=request.clock.move_ms
            if request.clock.HasField("move_ms")
            else PERSON_CLOCK.move_ms,
            bank_ms=request.clock.bank_ms
            if request.clock.HasField("bank_ms")
            else PERSON_CLOCK.bank_ms,
            policy=PERSON_CLOCK.policy,
        )
    except ValueError as problem:
        raise Problem(400, f"clock: {problem}") from None
    _check_length(game, settings)
    _check_clock(clock)
    return TableRequest(
        game,
        settings,
        empty[0],
        bots,
        request.seed if request.HasField("seed") else None,
        clock,
    )


def _check_length(game: str, settings: Settings) -> None:
    for name, cap in MAX_PERSON_LENGTH.get(game, {}).items():
        value = getattr(settings, name)
        if value > cap:
            raise Problem(
                400, f"settings: {name}: a person's table plays at most {cap} (got {value})"
            )


def _check_clock(clock: ClockSettings) -> None:
    for name, value, cap in (
        ("move_ms", clock.move_ms, MAX_PERSON_CLOCK.move_ms),
        ("bank_ms", clock.bank_ms, MAX_PERSON_CLOCK.bank_ms),
    ):
        if value > cap:
            raise Problem(
                400, f"clock: {name}: a person's table allows at most {cap} ms (got {value})"
            )


def league_versions(store: Store, names: Sequence[str]) -> set[str]:
    """Those of ``names`` that are player names of a league's bot versions (``adabot.v2``:
    their owners' bots, hosted or connected, which the ladder alone seats).  Blocking."""
    versions = set()
    for name in names:
        bot, dot, number = name.rpartition(".v")
        numbered = dot and number.isascii() and number.isdigit() and len(number) <= 9
        if numbered and store.versions.get(bot, int(number)) is not None:
            versions.add(name)
    return versions


class Tables:
    """The tables of one arena: made by :meth:`open`, found by :meth:`find`."""

    def __init__(
        self,
        backend: Backend,
        launcher: BotLauncher,
        address: str,
        limits: TableLimits | None = None,
    ) -> None:
        self.backend = backend
        self.launcher = launcher
        self.limits = limits or TableLimits()
        #: Where the person's stream connects: the arena's own plaintext socket.
        self.address = address
        self.tables: dict[str, Table] = {}
        #: Tables being opened now, by the peer address that asked: counted against the caps
        #: from the check on, as opening one awaits the referee before the table is kept.
        self._opening: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()

    async def bots(self, game: str) -> JsonObject:
        """Who may sit at a table: the sample bots, and the operator's registered bots online
        now that play ``game`` (a league's versions play where its ladder seats them)."""
        referee = self.backend.referee
        online = [
            name
            for name, connections in referee.online.items()
            if not referee.is_known_bot(name)
            and any(c.alive and (not c.games or game in c.games) for c in connections)
        ]
        versions = await asyncio.to_thread(league_versions, referee.store, online)
        return {"samples": sorted(SAMPLE_BOTS), "online": sorted(set(online) - versions)}

    async def open(self, request: TableRequest, client: str = "") -> Table:
        """A new table for ``request``, asked by the peer address ``client``."""
        self._expire()
        playing = [t for t in self.tables.values() if t.status is not TableStatus.OVER]
        yours = sum(t.client == client for t in playing) + self._opening[client]
        if yours >= self.limits.per_client:
            raise Problem(
                429,
                f"{self.limits.per_client} tables of yours ({client}) are open; finish or "
                "leave one first",
            )
        if len(playing) + self._opening.total() >= MAX_TABLES:
            raise Problem(503, f"{MAX_TABLES} tables are playing; try again when one is over")
        # Counted from now: requests sent together would otherwise all pass the checks above
        # while each awaits the referee, and open as many tables (and bot processes) as asked.
        self._opening[client] += 1
        try:
            return await self._opened(request, client)
        finally:
            self._opening[client] -= 1
            if not self._opening[client]:
                del self._opening[client]

    async def _opened(self, request: TableRequest, client: str) -> Table:
        """:meth:`open` once the caps allow it: the match created, the table kept."""
        referee = self.backend.referee
        for name in request.bots:
            if name and name not in SAMPLE_BOTS and referee.is_known_bot(name):
                # Another table's seat (its person, its sample bots: their names are in the
                # public match list), a tournament's bot: seated here too, its one stream
                # would carry this match's requests into its own (a person's page shows them
                # as its game's and leaves its own game when this one ends).
                raise Problem(
                    409,
                    f"bots: {name!r} plays in a match of its own with a one-time token of this "
                    "arena; it is never seated at a table",
                )
            if name and name not in SAMPLE_BOTS and not referee.connections_of(name):
                raise Problem(
                    409,
                    f"bots: {name!r} is neither a sample bot ({', '.join(sorted(SAMPLE_BOTS))}) "
                    "nor a registered bot connected now",
                )
        asked = [name for name in request.bots if name and name not in SAMPLE_BOTS]
        versions = await asyncio.to_thread(league_versions, referee.store, asked)
        if versions:
            raise Problem(
                409,
                f"bots: {min(versions)!r} is a version of a league's account: it plays where "
                "the league's ladder seats it, never at a table",
            )
        tag = secrets.token_hex(3)
        names = [
            f"person-{tag}"
            if not name
            else f"seat{seat}-{name}-{tag}"
            if name in SAMPLE_BOTS
            else name
            for seat, name in enumerate(request.bots)
        ]
        launched = [seat for seat, name in enumerate(request.bots) if name in SAMPLE_BOTS]
        # One-time tokens for the seats the web brings (the person's, the sample bots'); a
        # registered bot at the table plays with its own.
        ephemeral = [names[seat] for seat in (request.seat, *launched)]
        tokens = await self.backend.guest.call(_register, self.backend, ephemeral)
        try:
            runner = await self.backend.guest.call(_create, self.backend, request, names)
        except ValueError as problem:
            await self.backend.guest.call(_unregister, self.backend, ephemeral)
            raise Problem(400, str(problem)) from None
        table = Table(
            id="t-" + secrets.token_hex(6),
            token="bisca_table_" + secrets.token_urlsafe(24),
            game=request.game,
            seat=request.seat,
            match_id=runner.id,
            seats=names,
            clock=request.clock,
            client=client,
        )
        self.tables[table.id] = table
        asyncio.get_running_loop().call_later(
            self.limits.unjoined_s, self._end_unjoined, table, runner
        )
        table.when_left = partial(self._wait_for_a_page, table, runner)
        person_token, bot_tokens = tokens[0], tokens[1:]
        launch = [
            (seat, bot_argv(request.bots[seat], request.game), token)
            for seat, token in zip(launched, bot_tokens, strict=True)
        ]
        self.backend.guest.run_sync_soon(
            self.backend.referee.spawn,
            partial(_keep_bots, self.backend, self.launcher, runner, launch, ephemeral),
        )
        task = asyncio.ensure_future(self._play(table, runner, person_token))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        log.info("table %s: match %s, the person at seat %d", table.id, runner.id, table.seat)
        return table

    def find(self, table_id: str, token: str) -> Table:
        """The table ``table_id`` for the holder of its token (:class:`Problem` otherwise)."""
        self._expire()
        table = self.tables.get(table_id)
        if table is None:
            raise Problem(404, f"no table {table_id!r} (or its game is long over)")
        if not token or not secrets.compare_digest(token.encode(), table.token.encode()):
            raise Problem(401, f"table {table_id}: wrong or missing table token")
        table.joined = True  # the token's holder came: the table is not one nobody opened
        return table

    def reply(self, table: Table, reply: pb.ActionReply) -> None:
        if table.status is TableStatus.OVER:
            raise Problem(409, "the game is over")
        if not reply.request_id or reply.request_id != table.open_request:
            raise Problem(
                409, f"request {reply.request_id!r} is not the open request of this table"
            )
        if reply.request_id == table.answered:
            raise Problem(409, f"request {reply.request_id!r} was answered already")
        table.answered = reply.request_id
        table.replies.put_nowait(reply)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _end_unjoined(self, table: Table, runner: MatchRunner) -> None:
        """End a table whose browser never opened the person's seat."""
        if not table.joined and table.status is not TableStatus.OVER:
            reason = f"nobody opened the person's seat within {self.limits.unjoined_s:g} s"
            self._end(table, runner, reason)

    def _wait_for_a_page(self, table: Table, runner: MatchRunner) -> None:
        """The table's last page closed: it is ended unless one opens within ``left_s``."""
        if table.status is not TableStatus.OVER:
            table.left_timer = asyncio.get_running_loop().call_later(
                self.limits.left_s, self._end_left, table, runner
            )

    def _end_left(self, table: Table, runner: MatchRunner) -> None:
        """End a table no page has had open for ``left_s``, as an unjoined one is ended."""
        table.left_timer = None
        if not table.pages and table.status is not TableStatus.OVER:
            reason = f"no page had the person's seat open for {self.limits.left_s:g} s"
            self._end(table, runner, reason)

    def _end(self, table: Table, runner: MatchRunner, reason: str) -> None:
        """End a table nobody plays at: the person's seat is forfeited (its default player
        acts at once), so the match and its bots end within moments."""
        log.info("table %s: %s; ending it", table.id, reason)
        table.publish({"closed": reason})
        self.backend.guest.run_sync_soon(runner.forfeit_seat, table.seat, reason)

    def _expire(self) -> None:
        now = asyncio.get_running_loop().time()
        for table_id, table in list(self.tables.items()):
            if table.expires is not None and now > table.expires:
                del self.tables[table_id]

    # ---- the person's stream ----------------------------------------------------------------

    async def _play(self, table: Table, runner: MatchRunner, token: str) -> None:
        try:
            async with grpc.aio.insecure_channel(self.address) as channel:
                stub = arena_pb2_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
                call = stub.Play()
                await call.write(
                    pb.BotMessage(
                        hello=pb.Hello(
                            token=token,
                            bot_name=table.seats[table.seat],
                            bot_version="web",
                            protocol_version=PROTOCOL_VERSION,
                            games=[wire.game_enum(table.game)],
                            # A person watches the other seats play: every event as it
                            # happens, not only inside the person's next request.
                            live_events=True,
                        )
                    )
                )
                writer = asyncio.ensure_future(self._write_replies(table, call))
                try:
                    async for message in call:
                        await self._received(table, runner, message)
                        if message.WhichOneof("kind") == "match_ended":
                            break
                finally:
                    writer.cancel()
        except grpc.aio.AioRpcError as problem:
            log.warning("table %s: the stream ended: %s", table.id, problem.details())
            table.publish({"closed": f"the arena ended the stream: {problem.details()}"})
        finally:
            table.status = TableStatus.OVER
            table.open_request = ""
            table.expires = asyncio.get_running_loop().time() + TOKEN_AFTER_END_S
            table.close()

    @staticmethod
    async def _write_replies(table: Table, call: grpc.aio.StreamStreamCall) -> None:
        while True:
            reply = await table.replies.get()
            if reply.request_id == table.open_request:
                await call.write(pb.BotMessage(action=reply))

    async def _received(self, table: Table, runner: MatchRunner, message: pb.ServerMessage) -> None:
        kind = message.WhichOneof("kind")
        if kind == "match_started":
            table.status = TableStatus.PLAYING
        elif kind == "action_request":
            # A new request, or the same one asked again after a refusal: open for a reply.
            table.open_request = message.action_request.request_id
            table.request_at = asyncio.get_running_loop().time()
            table.answered = ""
        elif kind == "match_ended":
            table.status = TableStatus.OVER
            table.open_request = ""
        if kind == "action_rejected":
            # The reason as a code the page translates, ahead of the refusal it explains.
            rejected = message.action_rejected
            table.publish(
                {
                    "refused": {
                        "requestId": rejected.request_id,
                        "reason": rejected.message,
                        **reason_code(rejected.message),
                    }
                }
            )
        if kind == "action_request":
            # What may not be chosen, ahead of the request: the page draws the request with
            # its greyed cards and bids at once (the request stays open meanwhile).
            illegal = await illegal_actions(self.backend.guest, runner, message.action_request)
            table.publish(
                {"illegal": {"requestId": message.action_request.request_id, "actions": illegal}}
            )
        table.publish({"server": to_json(message)})


async def illegal_actions(
    guest: TrioGuest, runner: MatchRunner, request: pb.ActionRequest
) -> list[JsonObject]:
    """What the person sees offered but may not choose now, each with the referee's reason
    (the live match's own :meth:`MatchRunner.why_illegal`, asked in trio, where the match
    runs): in card play the cards of the hand it may not play; in Belote's bidding the takes
    in the suits the round excludes.  The page shows them greyed, their reason in words."""
    candidates = [
        action for action in _offered(runner.game, request) if action not in request.legal_actions
    ]
    if not candidates:
        return []
    game = runner.game
    reasons = await guest.call(
        _why_illegal,
        runner,
        request.seat,
        [wire.decode_game_action(game, action) for action in candidates],
    )
    if not reasons:  # the seat is no longer to act: the request was answered meanwhile
        return []
    return [
        {"action": to_json(action), "reason": reason, **reason_code(reason)}
        for action, reason in zip(candidates, reasons, strict=True)
        if reason is not None
    ]


def _offered(game: str, request: pb.ActionRequest) -> list[pb.GameAction]:
    """Every action the page shows the person at this request, legal or not: each card of the
    hand when a card is to be played, and Belote's four takes while bidding (pass is always
    legal there)."""
    legal = list(request.legal_actions)
    kinds = {getattr(action, game).WhichOneof("action") for action in legal}
    codec_action = type(getattr(pb.GameAction(), game))
    if "play_card" in kinds:
        hand = getattr(request.observation, game).hand
        return [pb.GameAction(**{game: codec_action(play_card={"card": card})}) for card in hand]
    if game == "belote" and "pass" in kinds:
        suits = [value for name, value in belote_pb2.Suit.items() if value]
        return [pb.GameAction(belote=codec_action(take={"suit": suit})) for suit in suits]
    return []


#: The engines' reasons a card in the hand may not be played (or a take made), as a code and
#: its arguments the page translates (``why.CODE`` in its dictionary); the text stays for bots
#: and the log.
_REASONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("follow", re.compile(r"(?P<suit>\w+) was led: follow suit")),
    ("round1-take", re.compile(r"round 1 only takes the turned card's suit (?P<suit>\w+)")),
    ("round2-take", re.compile(r"round 2 excludes the turned card's suit (?P<suit>\w+)")),
    ("trump-led", re.compile(r"trump \((?P<suit>\w+)\) was led: play a trump")),
    (
        "trump-higher",
        re.compile(r"trump was led: play a trump higher than every trump in the trick"),
    ),
    (
        "overtrump",
        re.compile(r"a trump played must be higher than every trump in the trick when able"),
    ),
    ("must-trump", re.compile(r"an opponent is winning the trick: play a trump")),
    (
        "void-trump",
        re.compile(r"void in (?P<led>\w+), seat \d+ must play a trump \((?P<suit>\w+)\)"),
    ),
)


def reason_code(reason: str) -> JsonObject:
    """``{"code", "args"}`` for a reason the page knows (suits as their enum names, as in
    every other frame); ``{}`` for any other, which the page shows in the referee's words."""
    for code, pattern in _REASONS:
        found = pattern.fullmatch(reason)
        if found:
            args = {name: f"SUIT_{value.upper()}" for name, value in found.groupdict().items()}
            return {"code": code, "args": args}
    return {}


async def _why_illegal(runner: MatchRunner, seat: int, actions: list[Action]) -> list[str | None]:
    """The runner's query as the trio task :meth:`TrioGuest.call` runs (it takes coroutines)."""
    return runner.why_illegal(seat, actions)


# ---- in trio: the match, its tokens and its bots ------------------------------------------


async def _register(backend: Backend, names: Sequence[str]) -> list[str]:
    return [backend.referee.add_ephemeral_bot(name) for name in names]


async def _unregister(backend: Backend, names: Sequence[str]) -> None:
    for name in names:
        backend.referee.drop_ephemeral_bot(name)


async def _create(backend: Backend, request: TableRequest, names: list[str]) -> MatchRunner:
    runner = await backend.referee.create_match(
        MatchPlan(
            request.game,
            request.settings,
            tuple(names),
            seed=request.seed,
            clock=referee_clock(request.clock),
            join_timeout=JOIN_TIMEOUT_S,
            rated=False,  # a person's game counts in no leaderboard
            # Its opener may deal it from a finished match's (public) seed: that match's
            # replay stays open (review 48).
            seals_twins=False,
        )
    )
    assert runner.match_dir is not None
    runner.match_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return runner


def referee_clock(person: ClockSettings) -> ClockSettings:
    """The clock the referee keeps at a person's table: the person's, its move time longer by
    the page's pacing allowance (the bots at the table have the same, as every seat of a match
    has one clock; a person's table is unrated)."""
    return dataclasses.replace(person, move_ms=person.move_ms + PACING_ALLOWANCE_MS)


async def _keep_bots(
    backend: Backend,
    launcher: BotLauncher,
    runner: MatchRunner,
    launch: list[tuple[int, list[str], str]],
    ephemeral: list[str],
) -> None:
    """Run the table's sample bots for the match, then forget its one-time tokens."""
    match_dir = runner.match_dir
    assert match_dir is not None
    exit_codes: list[int | None] = [None] * len(runner.seats)
    try:
        async with trio.open_nursery() as nursery:
            for seat, argv, token in launch:
                process = launcher.process(argv, token, seat_log_prefix(Path(match_dir), seat))
                nursery.start_soon(run_seat_bot, seat, process, runner, exit_codes)
            await runner.done.wait()
            # Forgotten as the match ends, as a local match's are: their streams closed, the
            # bots' signal to exit, while ``run_seat_bot`` waits for them (after the nursery,
            # each was killed at the end of its grace, 5 s later).
            await _unregister(backend, ephemeral)
    finally:
        await _unregister(backend, ephemeral)  # (again, harmless; for a table left before its end)
