"""A league's submissions and versions over HTTP: ``POST /api/submissions`` takes a bot
folder as ``application/gzip`` (a ``.tar.gz``), and a bot's pages show its versions to all and
each version's steps (build log, check-bot report, validation match) to its owner alone (and
the operator, with the admin token): 403 for anybody else.

The upload is bounded before anything else: its ``Content-Length`` against the archive limit
(a larger one is refused before its sender is even looked up), then the sender's uploads of
the day, refused ones too, and one at a time (``LeagueAccounts.hold_upload``: 429 before its
body is read), then the bytes as they stream (a body longer than it said cannot arrive:
aiohttp holds it to its length), within :data:`UPLOAD_S`.  Unpacking runs in a thread of its
own, :data:`UNPACKS_AT_ONCE` at a time server-wide with at most :data:`UNPACKS_WAITING` more
waiting (then 503; :data:`UNPACKS_KEPT_FOR_CLEAN` of those places only for accounts with no
upload refused that day): never in the default pool that every other call of the web's to the
store runs in, which review 38 saw starved (``GET /api/account`` took 1.7-3.9 s instead of
1 ms while a stranger's refused uploads unpacked).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO

from aiohttp import hdrs, web

from bisca.server.accounts import LeagueAccounts, SubmissionRefused, UploadHold
from bisca.server.referee import counted_address
from bisca.server.store import (
    AccountRecord,
    BotVersionRecord,
    StepRecord,
    VersionError,
    VersionState,
)

from ._accounts import AccountsApi
from ._backend import Viewer
from ._json import JsonObject, Problem, body_cut_short

#: Seconds an upload may take to arrive.
UPLOAD_S = 120.0
#: Archives unpacked at once, server-wide.  An unpack is a core's work (inflating up to
#: ``unpacked_bytes``, 64 MiB by default: about 0.3 s, review 38) and much of it Python holding
#: the GIL of the process whose loop runs the referee and the bots' streams: one at a time
#: leaves the other core of a small machine to the sandboxed bots, which play on the clock.
#: One lane still unpacks three of the largest archives a second; an honest league sends a
#: few an hour.
UNPACKS_AT_ONCE = 1
#: Uploads received and waiting for the lane (each holds its archive, at most
#: ``archive_bytes``, on disk past 1 MiB; the last waits about 4 x 0.3 s).  More would be a
#: queue a stranger's few accounts (each one upload at a time) could keep full while honest
#: uploads wait behind it: the next gets 503, try again in a moment.
UNPACKS_WAITING = 4
#: Of those places, how many only an account with no upload refused in the last 24 hours may
#: take: five accounts sending refused archives back to back (one address may sign up five in
#: an hour) held the whole lane and every other upload got 503 for two minutes (review 38c).
UNPACKS_KEPT_FOR_CLEAN = 2
#: The most digits a version number in a path may have.
MAX_VERSION_DIGITS = 9
_CHUNK = 64 * 1024


def version_json(version: BotVersionRecord) -> JsonObject:
    return {
        "bot": version.bot,
        "version": version.version,
        "label": version.label,
        "player": version.player,
        "owner": version.account,
        "kind": version.kind.value,
        "state": version.state.value,
        "reason": version.reason,
        "created_at": version.created_at,
        "updated_at": version.updated_at,
    }


def step_json(step: StepRecord) -> JsonObject:
    return {
        "step": step.step.value,
        "passed": step.passed,
        "output": step.output,
        "started_at": step.started_at,
        "finished_at": step.finished_at,
    }


class SubmissionsApi:
    def __init__(self, accounts: AccountsApi) -> None:
        self.accounts = accounts
        self._unpacker = ThreadPoolExecutor(UNPACKS_AT_ONCE, thread_name_prefix="bisca-unpack")
        #: Uploads unpacking or waiting to (counted down in the unpacker's threads).
        self._unpacks = 0
        self._unpacks_lock = threading.Lock()

    async def close(self, _app: web.Application | None = None) -> None:
        """Unpack nothing more (an unpack under way finishes in its thread)."""
        self._unpacker.shutdown(wait=False, cancel_futures=True)

    def routes(self) -> list[web.RouteDef]:
        return [
            web.post("/api/submissions", self.submit),
            web.post("/api/bots/{bot}/connect", self.connect),
            web.get("/api/account/bots", self.own_bots),
            web.get("/api/bots/{bot}", self.bot),
            web.get("/api/bots/{bot}/versions/{version}", self.version),
            web.post("/api/bots/{bot}/versions/{version}/retire", self.retire),
        ]

    async def submit(self, request: web.Request) -> web.Response:
        league = self.accounts.league()
        limit = league.limits.archive_bytes
        length = request.content_length
        if length is None:
            raise Problem(411, "an upload must give its Content-Length")
        if length > limit:
            raise Problem(413, f"the archive is {length} bytes, over the limit of {limit} bytes")
        account = await self.accounts.account_of(request)
        sent_from = counted_address(request.remote or "") or None
        hold = await self._hold(league, account.name, sent_from)
        with contextlib.ExitStack() as unsent:
            spool = unsent.enter_context(tempfile.SpooledTemporaryFile(max_size=1024 * 1024))
            unsent.callback(league.give_back_upload, hold)  # it never reached its unpack
            await self._receive(request, spool, limit)
            unsent.pop_all()  # received: the unpacker's lane owns the spool and the hold now
        try:
            version = await self._unpack(league, account.name, spool, hold)
        except SubmissionRefused as problem:
            raise Problem(problem.status, str(problem)) from None
        return web.json_response({"version": version_json(version)}, status=201)

    async def _hold(
        self, league: LeagueAccounts, account: str, sent_from: str | None
    ) -> UploadHold:
        try:
            return await self.accounts.call(league.hold_upload, account, sent_from)
        except SubmissionRefused as problem:
            raise Problem(problem.status, str(problem)) from None

    @staticmethod
    async def _receive(request: web.Request, spool: IO[bytes], limit: int) -> None:
        received = 0
        try:
            async with asyncio.timeout(UPLOAD_S):
                async for chunk in request.content.iter_chunked(_CHUNK):
                    received += len(chunk)
                    if received > limit:
                        raise Problem(413, f"the archive is over the limit of {limit} bytes")
                    spool.write(chunk)
        except TimeoutError:
            raise Problem(408, f"the archive did not arrive within {UPLOAD_S:g} s") from None
        except ConnectionError:
            raise body_cut_short() from None

    async def _unpack(
        self,
        league: LeagueAccounts,
        account: str,
        spool: IO[bytes],
        hold: UploadHold,
    ) -> BotVersionRecord:
        """``league.submit`` of the received archive in the unpacker's lane, which owns the
        spool and the hold from here: a request that goes away meanwhile leaves them to it
        (unpacked and counted, or, still waiting, given back), so its place is never lost."""
        places = UNPACKS_AT_ONCE + UNPACKS_WAITING
        if hold.refused_before:
            places -= UNPACKS_KEPT_FOR_CLEAN
        with self._unpacks_lock:
            busy = self._unpacks
            if busy < places:
                self._unpacks += 1
        if busy >= places:
            spool.close()
            league.give_back_upload(hold)
            raise Problem(
                503,
                f"the server is unpacking {busy} uploads already: try again in a moment",
            )

        def done() -> None:
            spool.close()
            with self._unpacks_lock:
                self._unpacks -= 1

        def unpack() -> BotVersionRecord:
            try:
                spool.seek(0)
                return league.submit(account, spool, hold)
            finally:
                done()

        def cancelled(future: Future[BotVersionRecord]) -> None:
            if future.cancelled():  # before it ran (the request went away, the server stops)
                league.give_back_upload(hold)
                done()

        try:
            future = self._unpacker.submit(unpack)
        except RuntimeError:  # shut down: the server is stopping
            league.give_back_upload(hold)
            done()
            raise Problem(503, "the server is stopping: try again once it is back") from None
        future.add_done_callback(cancelled)
        return await asyncio.wrap_future(future)

    async def connect(self, request: web.Request) -> web.Response:
        """A new connected version of the sender's bot (made with its first version): active
        at once, with the bot token it dials in with, shown this once."""
        league = self.accounts.league()
        account = await self.accounts.account_of(request)
        bot = request.match_info["bot"]
        try:
            version, token = await asyncio.to_thread(league.connect, account.name, bot)
        except SubmissionRefused as problem:
            raise Problem(problem.status, str(problem)) from None
        return web.json_response({"version": version_json(version), "token": token}, status=201)

    async def own_bots(self, request: web.Request) -> web.Response:
        account = await self.accounts.account_of(request)
        versions = await asyncio.to_thread(
            self.accounts.league().store.versions.of_account, account.name
        )
        return web.json_response({"versions": [version_json(v) for v in versions]})

    async def bot(self, request: web.Request) -> web.Response:
        """A bot's versions side by side: public (no files, no logs)."""
        bot = request.match_info["bot"]
        versions = await asyncio.to_thread(self.accounts.league().store.versions.of_bot, bot)
        if not versions:
            raise Problem(404, f"no bot named {bot!r} in this league")
        return web.json_response(
            {
                "bot": bot,
                "owner": versions[0].account,
                "versions": [version_json(v) for v in versions],
            }
        )

    async def owned_version(self, request: web.Request) -> BotVersionRecord:
        """The version the path names, if the sender is its owner or the operator."""
        found = await self.named_version(request)
        if not self._is_operator(request):
            viewer = await self.accounts.account_of(request)
            self._owner_only(viewer, found)
        return found

    async def may_read_logs(self, request: web.Request, version: BotVersionRecord) -> bool:
        """Whether the sender is ``version``'s owner or the operator (anybody may ask)."""
        if self._is_operator(request):
            return True
        try:
            viewer = await self.accounts.account_of(request)
        except Problem:
            return False
        return viewer.name == version.account

    async def named_version(self, request: web.Request) -> BotVersionRecord:
        """The version the path names (404 when there is none), whoever asks."""
        bot = request.match_info["bot"]
        number = request.match_info["version"].removeprefix("v")
        # ASCII digits only ('²' is a digit to str.isdigit, not to int), and few enough of
        # them for the store's integers.
        if not (number.isascii() and number.isdigit() and len(number) <= MAX_VERSION_DIGITS):
            raise Problem(
                400,
                f"a version is a number of at most {MAX_VERSION_DIGITS} digits, "
                f"e.g. /api/bots/{bot}/versions/2",
            )
        store = self.accounts.league().store
        found = await asyncio.to_thread(store.versions.get, bot, int(number))
        if found is None:
            raise Problem(404, f"no version {number} of a bot named {bot!r}")
        return found

    async def retire(self, request: web.Request) -> web.Response:
        """Its owner (or the operator) retires a version: it plays no more, its results stay."""
        found = await self.owned_version(request)
        store = self.accounts.league().store
        try:
            moved = await asyncio.to_thread(
                store.versions.move, found.bot, found.version, VersionState.RETIRED, "retired"
            )
        except VersionError as problem:
            raise Problem(409, str(problem)) from None
        return web.json_response({"version": version_json(moved)})

    async def version(self, request: web.Request) -> web.Response:
        """One version with the output of each of its steps: its owner's and the operator's."""
        found = await self.owned_version(request)
        store = self.accounts.league().store
        bot = found.bot
        steps = await asyncio.to_thread(store.versions.steps, bot, found.version)
        return web.json_response(
            {"version": version_json(found), "steps": [step_json(step) for step in steps]}
        )

    def _is_operator(self, request: web.Request) -> bool:
        scheme, _, token = request.headers.get(hdrs.AUTHORIZATION, "").partition(" ")
        return scheme.lower() == "bearer" and (
            self.accounts.backend.viewer(token.strip()) is Viewer.ADMIN
        )

    @staticmethod
    def _owner_only(viewer: AccountRecord, version: BotVersionRecord) -> None:
        if viewer.name != version.account:
            raise Problem(
                403,
                f"{version.label}'s build log, reports and logs are its owner's alone",
            )
