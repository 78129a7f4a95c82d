"""The web's JSON API over HTTP and WebSocket (``docs/web.md`` has every call with examples).

Every answer is protobuf's canonical JSON of the ``bisca.v1`` message the gRPC service answers
with (``MatchInfo``, ``ListMatchesResponse``, ``GetLeaderboardResponse``, ``WatchUpdate``,
``ServerMessage`` ...), inside a small object where the web adds what no message holds (a
page of matches, a replay's frames, a verification).  A bad request is a 4xx with
``{"error": "..."}`` naming what was wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from functools import partial

import aiohttp
from aiohttp import web

from bisca import wire
from bisca.engine import GAMES
from bisca.server.edge import opened_watch, operator, stop_watching
from bisca.server.errors import OperatorError
from bisca.server.logs import Watcher
from bisca.server.records import MatchStatus, RecordedMatch
from bisca.server.referee import counted_address, status_message
from bisca.server.store import (
    MARGIN_GAMES,
    RESULT_LABELS,
    RESULT_UNITS,
    standings_rows,
)
from bisca.v1 import arena_pb2 as pb

from ._backend import Backend, Viewer
from ._json import (
    JsonObject,
    Problem,
    from_json,
    parse_body,
    problem_of,
    request_json,
    to_json,
)
from ._pace import RequestPace
from ._recent import RecentAnswers
from ._replays import Replays, replay_key
from ._table import Table, Tables, table_request

log = logging.getLogger("bisca.web")

#: Matches a list request considers (the newest first) before its filters and pages.
LIST_SCAN = 5000
PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
#: What a WebSocket client must send first, and how long it has (a page sends it at once).
FIRST_MESSAGE_S = 10.0
#: The largest WebSocket message a page may send, decompressed (a reply or a first message
#: is a few hundred bytes): as a request's body.  aiohttp's default, 4 MiB, let anybody, before
#: any token, have the loop the referee runs on parse megabytes of JSON per message, sent in
#: a few KiB with the socket's compression.
MAX_MESSAGE_BYTES = 64 * 1024
#: What a page's socket writes ahead of what its page reads before a send waits: aiohttp's
#: own, for every socket but a watch's.
DEFAULT_WRITE_AHEAD = 64 * 1024
#: ... and for a watch of a finished match, whose updates wait in its view until they are
#: sent: with aiohttp's own limits (64 KiB checked, the transport's 64 KiB high-water mark) a
#: page that reads nothing had ~250 KB of its view written ahead before a send waited, the
#: gRPC front one update (review of the web's cut, 2026-12-07).
WATCH_WRITE_AHEAD = 8 * 1024
#: The statuses a match list may ask for, by the words the pages use.
STATUS_WORDS = {status.value: status for status in MatchStatus}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


#: The rating updates a history answer holds at most (the newest; ``"more"`` says whether older
#: ones are left out): a ladder adds one per seat of every match, and an answer of every one
#: grew without bound (150 KB at 260 matches, review 52).
HISTORY_POINTS = 5_000


class Api:
    def __init__(
        self,
        backend: Backend,
        tables: Tables | None,
        store_calls: operator.StoreCalls,
        pace: RequestPace | None = None,
    ) -> None:
        self.backend = backend
        self.tables = tables
        #: Each address's pace (``None``: not paced), which its pages' socket messages take
        #: turns of, as its requests do.
        self.pace = pace
        #: The app's answer to a lost store (its middleware's), for a socket it opened.
        self.store_calls = store_calls
        self.replays = Replays()
        # The listings every page polls, the same for everybody (``_recent.py``).
        self.recent_bodies: RecentAnswers[str] = RecentAnswers()
        self.recent_lists: RecentAnswers[pb.ListMatchesResponse] = RecentAnswers()
        # One bot's history is keyed by a name the asker chooses: kept apart, so that asking
        # for many names cannot push the listings out (review s58b).
        self.recent_histories: RecentAnswers[str] = RecentAnswers()

    async def close(self, app: web.Application) -> None:
        """The end of the app (an aiohttp cleanup): the replays' worker process goes too."""
        self.replays.close()

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/api/info", self.info),
            web.get("/api/leaderboard/{game}", self.leaderboard),
            web.get("/api/leaderboard/{game}/history", self.history),
            web.get("/api/matches", self.matches),
            web.get("/api/matches/{match_id}", self.match),
            web.get("/api/matches/{match_id}/replay", self.replay),
            web.get("/api/matches/{match_id}/watch", self.watch),
            web.get("/api/tables/bots", self.table_bots),
            web.post("/api/tables", self.open_table),
            web.get("/api/tables/{table_id}/play", self.play),
        ]

    # ---- helpers ----------------------------------------------------------------------------

    async def _operator(
        self, function: Callable[..., Awaitable[object]], request: object
    ) -> object:
        try:
            return await self.backend.guest.call(function, self.backend.referee, request)
        except OperatorError as problem:
            raise problem_of(problem) from None

    def _arena(self) -> Tables:
        if self.tables is None:
            raise Problem(
                409,
                "no arena runs in this process (bisca web shows a data directory); start "
                "`bisca serve --http HOST:PORT` to watch live matches and to play",
            )
        return self.tables

    # ---- the arena --------------------------------------------------------------------------

    async def info(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "arena": self.backend.arena,
                # A league open to strangers: the app shows its account pages.
                "accounts": self.backend.accounts is not None,
                "games": [
                    {
                        "game": pb.Game.Name(wire.game_enum(name)),
                        "name": name,
                        "unit": RESULT_UNITS.get(name, "score"),
                    }
                    for name in sorted(GAMES)
                ],
            }
        )

    # ---- leaderboards -----------------------------------------------------------------------

    async def leaderboard(self, request: web.Request) -> web.Response:
        game = _game(request.match_info["game"])
        made = partial(self._leaderboard, game)
        return web.json_response(text=await self.recent_bodies.get(("leaderboard", game), made))

    async def _leaderboard(self, game: str) -> str:
        response = await self._operator(
            operator.get_leaderboard, pb.GetLeaderboardRequest(game=wire.game_enum(game))
        )
        assert isinstance(response, pb.GetLeaderboardResponse)
        table = await asyncio.to_thread(self.backend.store.matches.standings, game)
        rows = standings_rows(table)
        return json.dumps(
            {
                "leaderboard": to_json(response),
                "unit": RESULT_UNITS.get(game, "score"),
                "resultLabel": RESULT_LABELS.get(game, ""),
                # The store's standings (what `bisca leaderboard` prints beside the ratings).
                "standings": {
                    "matches": table.matches,
                    "margins": game in MARGIN_GAMES,
                    "order": [row["bot"] for row in rows],
                    "bots": {
                        str(row["bot"]): {
                            "wins": row["wins"],
                            "draws": row["draws"],
                            "losses": row["losses"],
                            "meanMargin": row["mean_margin"],
                            "incidents": row["incidents"],
                        }
                        for row in rows
                    },
                    "headToHead": {str(row["bot"]): row["head_to_head"] for row in rows},
                },
            }
        )

    async def history(self, request: web.Request) -> web.Response:
        game = _game(request.match_info["game"])
        bot = request.query.get("bot") or None
        made = partial(self._history, game, bot)
        answers = self.recent_bodies if bot is None else self.recent_histories
        return web.json_response(text=await answers.get(("history", game, bot), made))

    async def _history(self, game: str, bot: str | None) -> str:
        # One more than is shown: whether older updates are left out.
        newest = partial(self.backend.store.ratings.history, game, bot, newest=HISTORY_POINTS + 1)
        rows = await asyncio.to_thread(newest)
        more = len(rows) > HISTORY_POINTS
        rows = rows[1:] if more else rows
        return json.dumps(
            {
                "game": game,
                "more": more,
                "history": [
                    {
                        "matchId": row.match_id,
                        "bot": row.bot,
                        "mu": row.mu,
                        "sigma": row.sigma,
                        "conservative": row.mu - 3 * row.sigma,
                        "createdAt": row.created_at,
                    }
                    for row in rows
                ],
            }
        )

    # ---- matches ----------------------------------------------------------------------------

    async def matches(self, request: web.Request) -> web.Response:
        query = request.query
        listing = pb.ListMatchesRequest(limit=LIST_SCAN)
        status = query.get("status", "")
        if status:
            if status not in STATUS_WORDS:
                raise Problem(400, f"status: {status!r} is not one of {', '.join(STATUS_WORDS)}")
            listing.status = status_message(STATUS_WORDS[status])
        game = _game(query["game"]) if query.get("game") else None
        bot = query.get("bot", "")
        page = _whole(query.get("page", "1"), "page", 1, 1_000_000)
        size = _whole(query.get("pageSize", str(PAGE_SIZE)), "pageSize", 1, MAX_PAGE_SIZE)
        tournament = query.get("tournament", "")
        in_tournament: set[str] | None = None
        if tournament:
            slots = await asyncio.to_thread(self.backend.store.tournaments.slots, tournament)
            if not slots:
                raise Problem(404, f"tournament: no tournament named {tournament!r} here")
            in_tournament = {slot.match_id for slot in slots if slot.match_id}
        response = await self.recent_lists.get(
            ("matches", listing.status), partial(self._list_matches, listing)
        )
        chosen = [
            info
            for info in response.matches
            if (game is None or info.game == wire.game_enum(game))
            and (not bot or bot in info.bots)
            and (in_tournament is None or info.match_id in in_tournament)
        ]
        shown = pb.ListMatchesResponse(
            matches=chosen[(page - 1) * size : page * size], queue=response.queue
        )
        return web.json_response(
            {"list": to_json(shown), "page": page, "pageSize": size, "total": len(chosen)}
        )

    async def _list_matches(self, listing: pb.ListMatchesRequest) -> pb.ListMatchesResponse:
        response = await self._operator(operator.list_matches, listing)
        assert isinstance(response, pb.ListMatchesResponse)
        return response

    async def match(self, request: web.Request) -> web.Response:
        info = await self._operator(
            operator.get_match, pb.GetMatchRequest(match_id=request.match_info["match_id"])
        )
        assert isinstance(info, pb.MatchInfo)
        return web.json_response({"match": to_json(info)})

    async def replay(self, request: web.Request) -> web.Response:
        match_id = request.match_info["match_id"]
        store = self.backend.store
        record = await asyncio.to_thread(store.matches.get, match_id)
        if record is None:
            raise Problem(404, f"no match {match_id!r}")
        if not record.status.is_over:
            raise Problem(
                409,
                f"match {match_id} is {record.status.value}: watch it live; its replay "
                "opens when it is over",
            )
        if not record.log_path:
            raise Problem(
                409, f"match {match_id} has no log ({record.status.value}: {record.reason})"
            )
        # Duplicate deals: a match with the same cards may still be played; its cards stay
        # hidden until it is over too (the rule every interface keeps: operator.sealed_deals).
        sealing = await self.backend.guest.call(
            operator.sealing_match, self.backend.referee, record.game, record.seed
        )
        if sealing is not None:
            raise Problem(
                403,
                f"match {sealing} is being played with the same deal; the replay of "
                f"{match_id} opens when it is over",
            )
        # Read from the store the server runs on (a PostgreSQL league's keeps the log itself,
        # whichever machine played it), and held to what that store records of the one match.
        recorded = await asyncio.to_thread(operator.recorded_log, store, match_id, record.log_path)
        records = {match_id: RecordedMatch.of(record)}
        document = await self.replays.replay(
            replay_key(match_id, records[match_id], recorded),
            recorded,
            recorded.signed_by or self.backend.public_key,
            records,
        )
        document["match"] = to_json(operator.stored_info(record))
        return web.json_response(document)

    async def watch(self, request: web.Request) -> web.WebSocketResponse:
        """A match as spectators see it: the first message is ``{"token": ..., "request":
        WatchMatchRequest}``, then each ``WatchUpdate`` follows as it happens."""
        socket = _page_socket(write_ahead=WATCH_WRITE_AHEAD)
        await socket.prepare(request)
        if request.transport is not None:  # (the transport's own mark, as aiohttp's check)
            request.transport.set_write_buffer_limits(high=WATCH_WRITE_AHEAD)
        try:
            first = await _first_message(socket)
            token = first.get("token")
            watch = from_json(first.get("request", {}), pb.WatchMatchRequest, "request")
            watch.match_id = request.match_info["match_id"]
            viewer = self.backend.viewer(token if isinstance(token, str) else "")
            if viewer is Viewer.NOBODY:
                raise Problem(401, "watching needs the spectator token (or the admin token)")
            if (watch.omniscient or watch.delay_steps) and viewer is not Viewer.ADMIN:
                raise Problem(
                    403, "the omniscient view needs the admin token; spectators see the public view"
                )
            await self._stream_watch(request, socket, watch)
        except Problem as problem:
            await _refuse(socket, problem)
        await socket.close()
        return socket

    async def _stream_watch(
        self, request: web.Request, socket: web.WebSocketResponse, watch: pb.WatchMatchRequest
    ) -> None:
        updates: asyncio.Queue[pb.WatchUpdate | None] = asyncio.Queue()
        backend = self.backend
        try:
            # The socket is open: a lost store is told on it, as any refusal.
            with self.store_calls.answering():
                watching = await opened_watch(
                    backend.guest,
                    backend.referee,
                    watch,
                    updates.put_nowait,
                    counted_address(request.remote or ""),
                )
        except OperatorError as problem:
            raise problem_of(problem) from None
        peer = counted_address(request.remote or "")
        closed = asyncio.ensure_future(self._closed(socket, peer))
        try:
            while True:
                # A live match's updates as it publishes them; a finished one's view of its
                # log update by update, each once the one before is sent.
                got = asyncio.ensure_future(
                    updates.get() if isinstance(watching, Watcher) else watching.next()
                )
                await asyncio.wait((got, closed), return_when=asyncio.FIRST_COMPLETED)
                if not got.done():
                    got.cancel()
                    return
                update = got.result()
                if update is None:
                    return
                sending = socket.send_json({"update": to_json(update)})
                if isinstance(watching, Watcher):
                    await sending
                elif (stalled := await watching.written(sending)) is not None:
                    # The page reads nothing: its connection is cut, with what waits for it
                    # (closing the socket would wait behind that).
                    if request.transport is not None:
                        request.transport.abort()
                    with contextlib.suppress(ConnectionError):
                        await stalled
                    return
        finally:
            closed.cancel()
            backend.guest.run_sync_soon(stop_watching, backend.referee, watch.match_id, watching)

    # ---- a seat for a person ----------------------------------------------------------------

    async def table_bots(self, request: web.Request) -> web.Response:
        tables = self._arena()
        game = _game(request.query.get("game", "belote"))
        return web.json_response(await tables.bots(game))

    async def open_table(self, request: web.Request) -> web.Response:
        tables = self._arena()
        body = await request_json(request, "body")
        create = from_json(body.get("request"), pb.CreateMatchRequest, "request")
        # Counted as every limit per client counts an address (an IPv6 host by its /64).
        client = counted_address(request.remote or "")
        table = await tables.open(table_request(create), client=client)
        return web.json_response({**table.summary(), "token": table.token}, status=201)

    async def play(self, request: web.Request) -> web.WebSocketResponse:
        """The person's seat: first ``{"token": ...}``; then the table's frames, and
        ``{"reply": ActionReply}`` from the page."""
        tables = self._arena()
        socket = _page_socket()
        await socket.prepare(request)
        try:
            first = await _first_message(socket)
            token = first.get("token")
            table = tables.find(
                request.match_info["table_id"], token if isinstance(token, str) else ""
            )
            with table.page_opened():
                peer = counted_address(request.remote or "")
                await self._stream_table(socket, tables, table, peer)
        except Problem as problem:
            await _refuse(socket, problem)
        await socket.close()
        return socket

    async def _stream_table(
        self, socket: web.WebSocketResponse, tables: Tables, table: Table, peer: str
    ) -> None:
        # The summary and the frames so far taken together (nothing is published between
        # them): a page tells from the summary's status whether those frames are a game
        # already under way (played at once) or none (the deal paced from its start).
        summary = table.summary()
        queue: asyncio.Queue[JsonObject | None] = asyncio.Queue()
        for frame in table.frames:
            queue.put_nowait(frame)
        queue.put_nowait(table.caught_up())
        if table.expires is None:
            table.listeners.append(queue)
        else:
            queue.put_nowait(None)
        try:
            await socket.send_json({"table": summary})
        except BaseException:
            if queue in table.listeners:
                table.listeners.remove(queue)
            raise

        async def send() -> None:
            while (frame := await queue.get()) is not None:
                await socket.send_json(frame)
            await socket.send_json({"table": table.summary()})
            await socket.close()  # the game is over: this ends the loop below too

        sender = asyncio.ensure_future(send())
        try:
            async for message in socket:
                if message.type != aiohttp.WSMsgType.TEXT or not await self._paced(socket, peer):
                    break
                try:
                    body = parse_body(message.data, "message")
                    reply = from_json(body.get("reply"), pb.ActionReply, "reply")
                    tables.reply(table, reply)
                except Problem as problem:
                    await _refuse(socket, problem)
        finally:
            sender.cancel()
            if queue in table.listeners:
                table.listeners.remove(queue)

    async def _paced(self, socket: web.WebSocketResponse, peer: str) -> bool:
        """Each message a page's socket sends takes a turn of its address's pace, as a request
        does: one table's socket sending in a loop took the loop the referee plays on, 1.1
        million messages in 5 s, a request of another address waiting 629 ms (review s59d,
        F1).  Waiting for the turn, the socket is not read, so its sender waits too; a socket
        whose turn is too far ahead is closed (1013, try again later).  Whether it goes on."""
        if self.pace is None:
            return True
        turn = await self.pace.wait_for_turn(peer)
        if not turn.refused:
            return True
        said = self.pace.refusal(peer, turn).message.encode()[:120]  # (a close reason's room)
        await socket.close(code=aiohttp.WSCloseCode.TRY_AGAIN_LATER, message=said)
        return False

    async def _closed(self, socket: web.WebSocketResponse, peer: str) -> None:
        """Returns when the page closes the socket (what it sends meanwhile is ignored, each
        message a turn of its pace)."""
        async for _ in socket:
            if not await self._paced(socket, peer):
                return


def _game(name: str) -> str:
    if name not in GAMES:
        raise Problem(404, f"game: no game {name!r}; known: {', '.join(sorted(GAMES))}")
    return name


def _whole(text: str, what: str, low: int, high: int) -> int:
    # ASCII digits only (str.isdigit takes '²', which int() refuses), and no more of them than
    # ``high`` has (int() of thousands of digits is refused, and costs before that).
    whole = text.isascii() and text.isdigit() and len(text) <= len(str(high))
    if not whole or not low <= int(text) <= high:
        raise Problem(400, f"{what}: expected a whole number {low}..{high}, got {text!r}")
    return int(text)


def _page_socket(*, write_ahead: int = DEFAULT_WRITE_AHEAD) -> web.WebSocketResponse:
    """A socket to a page: pinged (a vanished page is noticed), its messages bounded (one
    over :data:`MAX_MESSAGE_BYTES` closes it with 1009, message too big); a send waits once
    about ``write_ahead`` bytes wait for the page (aiohttp checks after that many)."""
    return web.WebSocketResponse(
        heartbeat=20, max_msg_size=MAX_MESSAGE_BYTES, writer_limit=write_ahead
    )


async def _refuse(socket: web.WebSocketResponse, problem: Problem) -> None:
    """Tell the page what was wrong, if it is still there: a page that closed its socket (or
    whose socket was closed for a message too big) is told nothing, rather than logging a
    traceback per stranger's socket."""
    with contextlib.suppress(ConnectionResetError):
        await socket.send_json({"error": problem.message, "status": problem.status})


async def _first_message(socket: web.WebSocketResponse) -> JsonObject:
    try:
        message = await socket.receive(timeout=FIRST_MESSAGE_S)
    except TimeoutError:
        raise Problem(408, f"no first message within {FIRST_MESSAGE_S:g} s") from None
    if message.type != aiohttp.WSMsgType.TEXT:
        raise Problem(400, "the first message must be a JSON text message")
    return parse_body(message.data, "first message")
