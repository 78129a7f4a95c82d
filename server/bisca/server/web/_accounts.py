"""The accounts of a league for strangers, over HTTP (``bisca serve --registration``).

A browser signs up or in with a name and a password and gets a session cookie (``HttpOnly``,
``SameSite=Strict``, ``Secure`` over HTTPS, :data:`SESSION_DAYS` days: it survives a reload);
the command line signs in with the password once for an API token, shown once, and then
sends ``Authorization: Bearer TOKEN``.  Cross-site requests are the guard's
(``_guards.py``): every state-changing call is JSON, from the app's own Origin or none.
Sign-in failures from one peer address are slowed down (:class:`_Throttle`), each attempt
counted before its password is checked, and its sign-ins with a password, right or wrong, are
at most :data:`PASSWORD_CHECKS_PER_WINDOW` in :data:`PASSWORD_CHECK_WINDOW_S` (each costs a
scrypt); its sign-ups at most :data:`SIGN_UPS_PER_HOUR` an hour; an account's API tokens made
at most :data:`TOKENS_MADE_PER_WINDOW` in the window (and an address's, whichever of its
accounts makes them, :data:`TOKENS_MADE_PER_ADDRESS`); its sign-ups refused for a taken name at
most :data:`TAKEN_NAMES_PER_WINDOW`.  An address is its IPv6 /64
(:func:`counted_address`).

Every call that may hash a secret (scrypt, ~48 ms of CPU) runs in :data:`HASHING_THREADS`
threads of its own, not in the default executor every other store call of the web runs in:
a burst of sign-ins, sign-ups and new tokens queued everybody's store reads behind it (review
s56b, finding 5).  A token's check hashes only when the token is not remembered: it is tried
in the default executor first, and redone in the hashing threads when it would hash.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from aiohttp import hdrs, web

from bisca.server.accounts import SESSION_DAYS, LeagueAccounts
from bisca.server.referee import counted_address
from bisca.server.store import (
    AccountError,
    AccountRecord,
    NameTaken,
    TokenKind,
    TokenRecord,
    TooManyTokens,
    check_token_label,
)

from ._backend import Backend
from ._json import JsonObject, Problem, request_json

SESSION_COOKIE = "bisca_session"
#: Failed sign-ins a peer address may make before each next one waits.
FREE_FAILURES = 5
#: The longest wait, seconds, and the peers remembered.
MAX_WAIT_S = 60.0
#: A peer's failed sign-ins are forgotten this long after its last one.
FORGET_AFTER_S = 15 * 60.0
#: Accounts one peer address may make in any hour through the web (each costs a password
#: hash and brings quotas of its own); the operator's ``bisca account`` commands have none.
SIGN_UPS_PER_HOUR = 5
#: Sign-ins with a password (right or wrong) one peer address may make in any
#: :data:`PASSWORD_CHECK_WINDOW_S`: each costs a scrypt, a right one a second for its session
#: or token, and the failures' throttle takes a success's attempt back, so without this one
#: stranger signing in to an account of their own again and again kept the hashing threads
#: of everyone busy.  A person or a script signs in far less often than this.
PASSWORD_CHECKS_PER_WINDOW = 30
PASSWORD_CHECK_WINDOW_S = 600.0
#: API tokens one account may make with its session or token in any
#: :data:`PASSWORD_CHECK_WINDOW_S` (each costs a scrypt; an account holds at most 20 live).
TOKENS_MADE_PER_WINDOW = 20
#: API tokens one address may make in that window, whichever of its accounts makes them: an
#: address opens five accounts an hour, and with a hundred of them the accounts' windows let
#: it force about 2,000 scrypts every ten minutes (review s56b, finding 5).
TOKENS_MADE_PER_ADDRESS = 40
#: Sign-ups refused for a taken name one address may make in any
#: :data:`PASSWORD_CHECK_WINDOW_S`: each says whether an account exists (review 41: 40 in a row
#: from one address named every account asked about), where a sign-in says nothing of it.
TAKEN_NAMES_PER_WINDOW = 20
REMEMBERED_PEERS = 10_000
#: The threads that hash secrets: one core at most, whatever the burst, and never the
#: default executor's threads, which every other store call of the web waits for.
HASHING_THREADS = 1
HASHING_THREAD_NAME = "bisca-hash"

T = TypeVar("T")


class _WouldHash(Exception):
    """A token's check, tried outside the hashing threads, reached its scrypt."""


def _would_hash() -> None:
    raise _WouldHash


class _Throttle:
    """Failed sign-ins per peer: after :data:`FREE_FAILURES`, 429 until a wait that doubles
    with each failure (1 s up to :data:`MAX_WAIT_S`) is over.  A success takes back its own
    attempt only (a peer that signs in to an account of its own between guesses at another's
    wipes nothing); a peer's failures are forgotten :data:`FORGET_AFTER_S` after its last.

    An attempt counts as a failure from the moment it is let through (:meth:`attempt`), before
    its password is checked, and only its success takes it back: guesses sent at once are
    let through exactly as many as guesses sent one after the other.  A token whose secret
    must be hashed to be told right or wrong is such an attempt too.  Called from the loop
    and from worker threads (a token's check): a lock keeps each call whole."""

    def __init__(self) -> None:
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._lock = threading.Lock()

    def attempt(self, peer: str) -> None:
        """Let one attempt of ``peer`` through (429 while it must wait), counted as failed
        until :meth:`succeeded` says otherwise."""
        with self._lock:
            count, since = self._failures.get(peer, (0, 0.0))
            if time.monotonic() - since > FORGET_AFTER_S:
                count = 0
            if count >= FREE_FAILURES:
                wait = min(MAX_WAIT_S, 2.0 ** (count - FREE_FAILURES)) - (time.monotonic() - since)
                if wait > 0:
                    raise Problem(
                        429, f"too many failed sign-ins from here: try again in {wait:.0f} s"
                    )
            self._remember(peer, count + 1)

    def failed(self, peer: str) -> None:
        """An attempt let through failed: the wait runs from now (it counted already; a peer
        forgotten meanwhile, by another attempt's success, has this one failure)."""
        with self._lock:
            count, _ = self._failures.get(peer, (1, 0.0))
            self._remember(peer, count)

    def succeeded(self, peer: str) -> None:
        """A right password or token: its own attempt no longer counts (the peer's failures
        stay)."""
        with self._lock:
            count, since = self._failures.pop(peer, (0, 0.0))
            if count > 1:
                self._failures[peer] = (count - 1, since)

    def _remember(self, peer: str, count: int) -> None:
        self._failures.pop(peer, None)
        self._failures[peer] = (count, time.monotonic())
        while len(self._failures) > REMEMBERED_PEERS:
            self._failures.popitem(last=False)


class _Window:
    """At most ``most`` costly calls of one kind per key (a peer's address, an account) in
    any ``seconds``.  A call holds its place from before its cost (calls sent at once are let
    through no more than sent one by one) and gives it back when it turned out to cost
    nothing."""

    def __init__(self, most: int, seconds: float, refusal: str) -> None:
        """``refusal``: the 429's message, a format string of the wait left, ``{wait}``
        seconds or ``{minutes}``."""
        self.most, self.seconds = most, seconds
        self._refusal = refusal
        self._made: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()  # (held from worker threads)

    def hold(self, key: str) -> float:
        """A place for one call of ``key`` (429 when the window's are taken); its time."""
        with self._lock:
            now = time.monotonic()
            made = [at for at in self._made.pop(key, []) if now - at < self.seconds]
            if len(made) >= self.most:
                self._made[key] = made
                wait = self.seconds - (now - made[0])
                raise Problem(429, self._refusal.format(wait=wait, minutes=wait / 60))
            self._made[key] = [*made, now]
            while len(self._made) > REMEMBERED_PEERS:
                self._made.popitem(last=False)
            return now

    def give_back(self, key: str, held: float) -> None:
        with self._lock:
            made = self._made.get(key, [])
            if held in made:
                made.remove(held)


def _text_field(body: JsonObject, key: str, *, required: bool = True) -> str:
    value = body.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise Problem(400, f"the request needs {key!r}, a string")
    return value


def _label(body: JsonObject, default: str) -> str:
    """A new token's label (``default`` when none is given); 400 naming the rule past it."""
    try:
        return check_token_label(_text_field(body, "label", required=False)) or default
    except AccountError as problem:
        raise Problem(400, str(problem)) from None


def account_json(account: AccountRecord) -> JsonObject:
    return {"name": account.name, "status": account.status.value, "created_at": account.created_at}


def token_json(token: TokenRecord) -> JsonObject:
    return {
        "id": token.id,
        "kind": token.kind.value,
        "label": token.label,
        "created_at": token.created_at,
        "expires_at": token.expires_at,
        "revoked": token.revoked,
    }


class AccountsApi:
    """The routes of accounts, sessions and tokens; 404 on a server that runs no league for
    strangers."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.throttle = _Throttle()
        window = f"in the last {PASSWORD_CHECK_WINDOW_S / 60:.0f} minutes"
        self.sign_ups = _Window(
            SIGN_UPS_PER_HOUR,
            3600.0,
            f"{SIGN_UPS_PER_HOUR} accounts were made from here in the last hour; try again in "
            "{minutes:.0f} min",
        )
        self.password_checks = _Window(
            PASSWORD_CHECKS_PER_WINDOW,
            PASSWORD_CHECK_WINDOW_S,
            f"{PASSWORD_CHECKS_PER_WINDOW} sign-ins with a password were made from here {window}; "
            "try again in {wait:.0f} s",
        )
        self.tokens_made = _Window(  # per account
            TOKENS_MADE_PER_WINDOW,
            PASSWORD_CHECK_WINDOW_S,
            f"this account made {TOKENS_MADE_PER_WINDOW} API tokens {window}; try again in "
            "{wait:.0f} s",
        )
        self.tokens_made_here = _Window(  # per address
            TOKENS_MADE_PER_ADDRESS,
            PASSWORD_CHECK_WINDOW_S,
            f"{TOKENS_MADE_PER_ADDRESS} API tokens were made from here {window}; try again in "
            "{wait:.0f} s",
        )
        self.taken_names = _Window(
            TAKEN_NAMES_PER_WINDOW,
            PASSWORD_CHECK_WINDOW_S,
            f"{TAKEN_NAMES_PER_WINDOW} sign-ups with a taken name were made from here {window}; "
            "try again in {wait:.0f} s",
        )
        self._hashing = ThreadPoolExecutor(HASHING_THREADS, thread_name_prefix=HASHING_THREAD_NAME)

    async def close(self, _app: web.Application | None = None) -> None:
        """Hash nothing more (the app is ending; a hash under way finishes in its thread)."""
        self._hashing.shutdown(wait=False, cancel_futures=True)

    def routes(self) -> list[web.RouteDef]:
        return [
            web.post("/api/accounts", self.sign_up),
            web.post("/api/session", self.sign_in),
            web.delete("/api/session", self.sign_out),
            web.get("/api/account", self.me),
            web.post("/api/tokens", self.password_token),
            web.get("/api/account/tokens", self.tokens),
            web.post("/api/account/tokens", self.new_token),
            web.delete("/api/account/tokens/{token_id}", self.revoke_token),
        ]

    # ---- helpers ----------------------------------------------------------------------------

    def league(self) -> LeagueAccounts:
        if self.backend.accounts is None:
            raise Problem(
                404,
                "this server has no accounts: its operator starts it with "
                "`bisca serve --league ... --registration open|invite --http ...`",
            )
        return self.backend.accounts

    async def call(self, function: Callable[..., T], *args: object, hashes: bool = False) -> T:
        """A store call, in a worker thread (one of the hashing threads for a call that
        ``hashes`` a secret); an :class:`AccountError` is a 400 naming why (409 for a token
        past the account's live ones: the owner revokes one first)."""
        try:
            if hashes:
                return await self._hashed(function, *args)
            return await asyncio.to_thread(function, *args)
        except TooManyTokens as problem:
            raise Problem(409, str(problem)) from None
        except AccountError as problem:
            raise Problem(400, str(problem)) from None

    async def _hashed(self, function: Callable[..., T], *args: object) -> T:
        """``function(*args)`` in a hashing thread, called as :func:`asyncio.to_thread` calls
        it (in a copy of the caller's context); 503 once the app is ending."""
        call = functools.partial(contextvars.copy_context().run, function, *args)
        try:
            future = asyncio.get_running_loop().run_in_executor(self._hashing, call)
        except RuntimeError:  # the executor is shut down: the server is stopping
            raise Problem(503, "the server is stopping: try again once it is back") from None
        return await future

    async def account_of(self, request: web.Request) -> AccountRecord:
        """Who sends ``request``: its Bearer API token, else its session cookie; 401 if
        neither is live."""
        self.league()  # 404 on a server without accounts
        header = request.headers.get(hdrs.AUTHORIZATION, "")
        if header:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Problem(401, "Authorization must be 'Bearer TOKEN'")
            found = await self._holder(request, token.strip(), TokenKind.API)
        else:
            session = request.cookies.get(SESSION_COOKIE, "")
            found = await self._holder(request, session, TokenKind.SESSION) if session else None
        if found is None:
            raise Problem(
                401, "sign in first (a session, or an API token as 'Authorization: Bearer ...')"
            )
        return found

    async def _holder(
        self, request: web.Request, token: str, kind: TokenKind
    ) -> AccountRecord | None:
        """Who holds ``token``, a check that hashes the token's secret let through the
        throttle first: a live token id with any secret costs a scrypt, so a wrong one counts
        as a failed sign-in (429 after :data:`FREE_FAILURES`) and a right one is taken back.
        A token remembered, or refused by its row alone, costs no scrypt and is not counted."""
        peer = counted_address(request.remote or "")
        hashed = False

        def before_slow_hash() -> None:
            nonlocal hashed
            self.throttle.attempt(peer)
            hashed = True

        try:
            # A token remembered, or refused by its row, is answered here at no scrypt...
            found = await self.call(self.league().holder, token, kind, _would_hash)
        except _WouldHash:
            # ... one that must be hashed is checked again in the hashing threads.
            found = await self.call(
                self.league().holder, token, kind, before_slow_hash, hashes=True
            )
        if hashed:
            if found is None:
                self.throttle.failed(peer)
            else:
                self.throttle.succeeded(peer)
        return found

    async def _body(self, request: web.Request) -> JsonObject:
        return await request_json(request, f"{request.method} {request.path}")

    def _with_session(self, request: web.Request, response: web.Response, token: str) -> None:
        response.set_cookie(
            SESSION_COOKIE,
            token,
            max_age=SESSION_DAYS * 24 * 3600,
            path="/",
            httponly=True,
            samesite="Strict",
            secure=request.secure,
        )

    async def _signed_in(self, request: web.Request, body: JsonObject) -> AccountRecord:
        league, peer = self.league(), counted_address(request.remote or "")
        name, password = _text_field(body, "name"), _text_field(body, "password")
        # Counted before the password is checked, so guesses sent at once cannot all pass; a
        # sign-in the failures' throttle refuses costs no scrypt and takes no place.
        held = self.password_checks.hold(peer)
        try:
            self.throttle.attempt(peer)
        except Problem:
            self.password_checks.give_back(peer, held)
            raise
        try:
            account = await self._hashed(league.sign_in, name, password)
        except AccountError as problem:
            self.throttle.failed(peer)
            raise Problem(401, str(problem)) from None
        self.throttle.succeeded(peer)
        return account

    # ---- the routes -------------------------------------------------------------------------

    async def sign_up(self, request: web.Request) -> web.Response:
        league = self.league()
        body = await self._body(request)
        invite = _text_field(body, "invite", required=False) or None
        name, password = _text_field(body, "name"), _text_field(body, "password")
        peer = counted_address(request.remote or "")

        def before_slow_hash() -> None:
            # Held just before the scrypt: a sign-up refused before it (a bad or taken name, a
            # bogus invite) takes no place, and one refused after it (the same name taken
            # meanwhile) keeps its place, for it cost the hash all the same.
            self.sign_ups.hold(peer)

        # A place held just before the name is looked up (a bogus invite is refused before
        # it), kept only by a refusal for a taken name: each says an account exists.
        held: list[float] = []

        def before_name_check() -> None:
            held.append(self.taken_names.hold(peer))

        def signing_up() -> AccountRecord | NameTaken:
            try:
                return league.sign_up(name, password, invite, before_slow_hash, before_name_check)
            except NameTaken as taken:
                return taken

        try:
            account = await self.call(signing_up, hashes=True)
            if isinstance(account, NameTaken):
                held.clear()  # its place is kept
                raise Problem(400, str(account))
        finally:
            for at in held:
                self.taken_names.give_back(peer, at)
        _, session = await self.call(league.new_session, account.name, hashes=True)
        response = web.json_response({"account": account_json(account)}, status=201)
        self._with_session(request, response, session)
        return response

    async def sign_in(self, request: web.Request) -> web.Response:
        account = await self._signed_in(request, await self._body(request))
        _, session = await self.call(self.league().new_session, account.name, hashes=True)
        response = web.json_response({"account": account_json(account)})
        self._with_session(request, response, session)
        return response

    async def sign_out(self, request: web.Request) -> web.Response:
        session = request.cookies.get(SESSION_COOKIE, "")
        # Checked here first, through the throttle; then remembered: no second scrypt (and so
        # the sign-out's own check is no hash, in the default executor).
        if session and await self._holder(request, session, TokenKind.SESSION) is not None:
            await self.call(self.league().sign_out, session)
        response = web.json_response({"signed_out": True})
        response.del_cookie(SESSION_COOKIE, path="/")
        return response

    async def me(self, request: web.Request) -> web.Response:
        account = await self.account_of(request)
        return web.json_response({"account": account_json(account)})

    async def password_token(self, request: web.Request) -> web.Response:
        """An API token for the command line, asked with the account's password."""
        body = await self._body(request)
        label = _label(body, "command line")  # (refused before the password's scrypt)
        account = await self._signed_in(request, body)
        record, token = await self.call(
            self.league().new_api_token, account.name, label, hashes=True
        )
        return web.json_response({"token": token, **token_json(record)}, status=201)

    async def tokens(self, request: web.Request) -> web.Response:
        account = await self.account_of(request)
        found = await self.call(self.league().store.accounts.tokens, account.name)
        return web.json_response({"tokens": [token_json(token) for token in found]})

    async def new_token(self, request: web.Request) -> web.Response:
        account = await self.account_of(request)
        body = await self._body(request)
        label = _label(body, "api")

        peer = counted_address(request.remote or "")

        def before_slow_hash() -> None:  # (a token refused before its hash costs nothing)
            held = self.tokens_made.hold(account.name)
            try:
                self.tokens_made_here.hold(peer)
            except Problem:
                self.tokens_made.give_back(account.name, held)
                raise

        record, token = await self.call(
            self.league().new_api_token, account.name, label, before_slow_hash, hashes=True
        )
        return web.json_response({"token": token, **token_json(record)}, status=201)

    async def revoke_token(self, request: web.Request) -> web.Response:
        account = await self.account_of(request)
        token_id = request.match_info["token_id"]
        record = await self.call(self.league().store.accounts.revoke, account.name, token_id)
        return web.json_response(token_json(record))
