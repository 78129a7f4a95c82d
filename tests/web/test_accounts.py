"""Accounts over HTTP, in process: sign-up (open and by invite), the session cookie, API
tokens made with the password and revoked, throttled sign-ins, suspension, and the guards'
refusal of another origin; hostile input before sign-in (nested JSON, odd version numbers)."""

from __future__ import annotations

import asyncio
import logging
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import aiohttp
import pytest

import bisca.server.store._account_repository as account_repository
import bisca.server.store._secrets as secrets
import bisca.server.web._accounts as web_accounts
from bisca.server.accounts import MAX_API_TOKENS, MAX_SESSIONS, Registration
from bisca.server.store import MAX_LABEL, AccountStatus, Store, TokenKind, VersionKind
from bisca.server.web import data_backend, serving_web
from tests.support.league import PASSWORD

from .support import JSON, get, league_app, post, signed_up


def count_slow_hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every scrypt the store runs from now on (a password's or a token's), by its salt."""
    hashed: list[str] = []
    real = secrets.slow_hash

    def counting(secret: str, salt: str) -> str:
        hashed.append(salt)
        return real(secret, salt)

    monkeypatch.setattr(secrets, "slow_hash", counting)
    monkeypatch.setattr(account_repository, "slow_hash", counting)
    return hashed


def standing_clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The accounts' throttles on a clock that stands still until the test moves it
    (``now[0] += seconds``): no wait runs out by itself."""
    now = [1000.0]
    monkeypatch.setattr(web_accounts, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


def test_open_registration_sessions_and_tokens(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, league),
            aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser,
            aiohttp.ClientSession() as cli,
        ):
            async with browser.post(
                f"{url}/api/accounts", json={"name": "alice", "password": PASSWORD}, headers=JSON
            ) as answer:
                assert answer.status == 201, await answer.text()
                cookie = answer.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Max-Age=" in cookie
            status, me = await get(browser, f"{url}/api/account")
            assert status == 200 and me["account"] == {
                "name": "alice",
                "status": "active",
                "created_at": me["account"]["created_at"],  # type: ignore[index]
            }
            status, taken = await post(
                cli, f"{url}/api/accounts", {"name": "alice", "password": PASSWORD}
            )
            assert status == 400 and "taken" in str(taken["error"])

            # Another site's page cannot post with the browser's cookie: the guard refuses it.
            status, refused = await post(
                browser, f"{url}/api/account/tokens", {"label": "x"}, Origin="https://evil.example"
            )
            assert status == 403 and "not this app's" in str(refused["error"])

            # The command line: a token for the password, shown once, then Bearer.
            status, made = await post(
                cli, f"{url}/api/tokens", {"name": "alice", "password": PASSWORD, "label": "ci"}
            )
            assert status == 201 and str(made["token"]).startswith("bisca_at_")
            bearer = {"Authorization": f"Bearer {made['token']}"}
            status, me = await get(cli, f"{url}/api/account", **bearer)
            assert status == 200 and me["account"]["name"] == "alice"  # type: ignore[index]
            status, listed = await get(cli, f"{url}/api/account/tokens", **bearer)
            kinds = sorted(str(t["kind"]) for t in listed["tokens"])  # type: ignore[attr-defined]
            assert kinds == ["api", "session"] and "bisca_at_" not in str(listed)
            async with cli.delete(
                f"{url}/api/account/tokens/{made['id']}", headers={**JSON, **bearer}
            ) as answer:
                assert answer.status == 200
            assert (await get(cli, f"{url}/api/account", **bearer))[0] == 401
            assert (await get(cli, f"{url}/api/account", Authorization="Basic x"))[0] == 401

            # Suspension ends the browser's session at once.
            await asyncio.to_thread(
                league.store.accounts.set_status, "alice", AccountStatus.SUSPENDED
            )
            status, gone = await get(browser, f"{url}/api/account")
            assert status == 401 and "sign in first" in str(gone["error"])
            status, _ = await post(
                cli, f"{url}/api/session", {"name": "alice", "password": PASSWORD}
            )
            assert status == 401

            # Sign-in failures from one address (alice's was the first) are slowed after five.
            for _ in range(4):
                status, _ = await post(
                    cli, f"{url}/api/session", {"name": "bob", "password": "x" * 12}
                )
                assert status == 401
            status, slowed = await post(
                cli, f"{url}/api/session", {"name": "bob", "password": "x" * 12}
            )
            assert status == 429 and "try again in" in str(slowed["error"])

    asyncio.run(scenario())


def test_invite_registration_and_a_server_without_accounts(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.INVITE) as (url, league),
            aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser,
        ):
            status, refused = await post(
                browser, f"{url}/api/accounts", {"name": "bob", "password": PASSWORD}
            )
            assert status == 400 and "by invitation" in str(refused["error"])
            code = await asyncio.to_thread(league.store.accounts.new_invite, "bob")
            body = {"name": "bob", "password": PASSWORD, "invite": code}
            assert (await post(browser, f"{url}/api/accounts", body))[0] == 201
            assert (await get(browser, f"{url}/api/account"))[0] == 200
            async with browser.delete(f"{url}/api/session", headers=JSON) as answer:
                assert answer.status == 200
            assert (await get(browser, f"{url}/api/account"))[0] == 401
            status, again = await post(browser, f"{url}/api/accounts", {**body, "name": "carl"})
            assert status == 400 and "used already" in str(again["error"])
            status, _ = await post(
                browser, f"{url}/api/session", {"name": "bob", "password": PASSWORD}
            )
            assert status == 200 and (await get(browser, f"{url}/api/account"))[0] == 200

        data = tmp_path / "plain"
        Store.in_directory(data).close()
        async with (
            data_backend(data) as backend,
            serving_web(backend, None, "127.0.0.1", 0) as url,
            aiohttp.ClientSession() as client,
        ):
            status, none = await get(client, f"{url.rstrip('/')}/api/account")
            assert status == 404 and "--registration" in str(none["error"])

    asyncio.run(scenario())


def test_sign_ins_sent_at_once_are_throttled_as_if_sent_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each attempt counts against its address before its password is checked: 40 wrong
    guesses sent together get 5 password checks (401) and 35 refusals (429), as 40 sent one
    after the other would.  The throttle's clock stands still, so no wait runs out."""
    standing_clock(monkeypatch)

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as cli,
        ):
            body = {"name": "victim", "password": PASSWORD}
            assert (await post(cli, f"{url}/api/accounts", body))[0] == 201

            async def guess(n: int) -> int:
                wrong = {"name": "victim", "password": f"guess number {n:04d}"}
                return (await post(cli, f"{url}/api/session", wrong))[0]

            statuses = await asyncio.gather(*(guess(n) for n in range(40)))
            assert (statuses.count(401), statuses.count(429)) == (
                web_accounts.FREE_FAILURES,
                40 - web_accounts.FREE_FAILURES,
            ), statuses
            # The right password waits too, and a token for it.
            assert (await post(cli, f"{url}/api/session", body))[0] == 429
            assert (await post(cli, f"{url}/api/tokens", body))[0] == 429

    asyncio.run(scenario())


def test_a_sign_up_refused_by_its_invite_or_name_costs_no_scrypt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an invite-only league a stranger posts sign-ups with any invite: each is refused
    before its password is hashed (scrypt, 16 MiB and ~30 ms), as is a used invite or a
    taken name; only a sign-up that can succeed costs one scrypt."""
    hashed = count_slow_hashes(monkeypatch)

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.INVITE) as (url, league),
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as cli,
        ):

            async def sign_up(body: dict[str, str]) -> tuple[int, dict[str, object]]:
                return await post(cli, f"{url}/api/accounts", body)

            bogus = [{"name": f"x{n}", "password": "p" * 200, "invite": "no"} for n in range(30)]
            answers = await asyncio.gather(*(sign_up(body) for body in bogus))
            assert {status for status, _ in answers} == {400}
            assert all("not one of this league's" in str(a["error"]) for _, a in answers)
            assert hashed == []

            code = await asyncio.to_thread(league.store.accounts.new_invite, "ada")
            assert (await sign_up({"name": "ada", "password": PASSWORD, "invite": code}))[0] == 201
            assert len(hashed) == 2  # her password, and her new session token
            hashed.clear()
            status, used = await sign_up({"name": "bo", "password": PASSWORD, "invite": code})
            assert status == 400 and "used already" in str(used["error"])
            other = await asyncio.to_thread(league.store.accounts.new_invite, "bo")
            status, taken = await sign_up({"name": "ada", "password": PASSWORD, "invite": other})
            assert status == 400 and "taken" in str(taken["error"])
            assert hashed == []
            # The refused sign-up did not use the invite up.
            assert (await sign_up({"name": "bo", "password": PASSWORD, "invite": other}))[0] == 201

    asyncio.run(scenario())


def test_a_token_with_a_wrong_secret_counts_as_a_failed_sign_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Bearer bisca_at_ID_ANYTHING`` with the id of a live token (the sender's own) costs
    a scrypt to refuse: each such check is a sign-in attempt of the throttle's, so 40 sent at
    once cost 5 scrypts.  A token refused by its row alone (revoked, of another kind) costs
    none and is not counted; a right token is not counted either, and one already checked
    costs no scrypt, so it still answers while its address waits."""
    standing_clock(monkeypatch)
    hashed = count_slow_hashes(monkeypatch)

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, league),
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as cli,
        ):
            body = {"name": "mallory", "password": PASSWORD}
            assert (await post(cli, f"{url}/api/accounts", body))[0] == 201
            status, made = await post(cli, f"{url}/api/tokens", body)
            assert status == 201
            remembered = {"Authorization": f"Bearer {made['token']}"}
            assert (await get(cli, f"{url}/api/account", **remembered))[0] == 200
            revoked, _ = await asyncio.to_thread(league.new_api_token, "mallory", "old")
            await asyncio.to_thread(league.store.accounts.revoke, "mallory", revoked.id)
            session_record, session = await asyncio.to_thread(league.new_session, "mallory")
            # Made by the store itself (as before a restart): not remembered by this server.
            new_token = league.store.accounts.new_token
            fresh = [
                (await asyncio.to_thread(new_token, "mallory", TokenKind.API, f"t{n}"))[1]
                for n in range(web_accounts.FREE_FAILURES + 1)
            ]
            hashed.clear()

            # Refused by their rows: a revoked token, a session given as an API token.
            for token in (f"bisca_at_{revoked.id}_x", session) * 5:
                status, _ = await get(cli, f"{url}/api/account", Authorization=f"Bearer {token}")
                assert status == 401
            assert hashed == []
            # Right tokens, each checked once (a scrypt each): not failures.
            for token in fresh:
                status, _ = await get(cli, f"{url}/api/account", Authorization=f"Bearer {token}")
                assert status == 200
            assert len(hashed) == len(fresh)
            hashed.clear()

            async def guess(n: int) -> int:
                wrong = f"Bearer bisca_at_{made['id']}_guess{n:04d}"
                return (await get(cli, f"{url}/api/account", Authorization=wrong))[0]

            statuses = await asyncio.gather(*(guess(n) for n in range(40)))
            assert (statuses.count(401), statuses.count(429)) == (
                web_accounts.FREE_FAILURES,
                40 - web_accounts.FREE_FAILURES,
            ), statuses
            assert len(hashed) == web_accounts.FREE_FAILURES
            # A session cookie of a live id is the same attempt, and waits too.
            wrong_cookie = f"bisca_at_{session_record.id}_wrong"
            async with cli.get(
                f"{url}/api/account", cookies={web_accounts.SESSION_COOKIE: wrong_cookie}
            ) as answer:
                assert answer.status == 429
            async with cli.delete(
                f"{url}/api/session",
                headers=JSON,
                cookies={web_accounts.SESSION_COOKIE: wrong_cookie},
            ) as answer:
                assert answer.status == 429
            assert len(hashed) == web_accounts.FREE_FAILURES
            # The token checked before still answers (no scrypt: remembered).
            assert (await get(cli, f"{url}/api/account", **remembered))[0] == 200

    asyncio.run(scenario())


def test_deeply_nested_json_is_a_400_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """60 KB of ``[`` to the sign-in route (before anybody is signed in) is a bad request,
    not a fault of the server: 400 naming it, and nothing in the server's log."""

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession() as cli,
        ):
            for route in ("session", "accounts", "tokens"):
                async with cli.post(
                    f"{url}/api/{route}", data=b"[" * 60_000, headers=JSON
                ) as answer:
                    status, body = answer.status, await answer.json()
                assert status == 400, (status, body)
                assert body["error"] == f"POST /api/{route}: JSON nested too deeply"

    with caplog.at_level(logging.WARNING):
        asyncio.run(scenario())
    assert [r for r in caplog.records if r.name.startswith("bisca")] == []


ODD_BODIES = [
    pytest.param("accounts", b'\xff{"name": "x"}', "", 400,
                 "POST /api/accounts: not UTF-8 (byte 0 of the body)", id="not-utf8"),
    pytest.param("session", b"{}", "; charset=nope", 415,
                 "POST /api/session: JSON is UTF-8, not charset='nope'", id="unknown-charset"),
    pytest.param("session", b'{"name": "alice", "password": "\\ud800 and ten more"}', "", 400,
                 "POST /api/session: a string holds \\ud800, half of a UTF-16 surrogate pair: "
                 "not a character", id="surrogate-sign-in"),
    pytest.param("accounts", b'{"name": "carol", "password": "ten more and \\udfff"}', "", 400,
                 "POST /api/accounts: a string holds \\udfff, half of a UTF-16 surrogate pair: "
                 "not a character", id="surrogate-sign-up"),
    pytest.param("session", b'{"name": "alice", "password": ' + b"1" * 4301 + b"}", "", 400,
                 "POST /api/session: a number of more than 4300 digits", id="long-number"),
]  # fmt: skip


@pytest.mark.parametrize(("route", "body", "charset", "status", "error"), ODD_BODIES)
def test_a_body_that_is_not_utf8_text_is_refused_naming_it(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    route: str,
    body: bytes,
    charset: str,
    status: int,
    error: str,
) -> None:
    """Before any sign-in: bytes that are not UTF-8, a charset that is not, a password with a
    lone surrogate (valid JSON, no text): each the sender's error, named, with nothing in the
    server's log.  Review 38: each was a 500 and a traceback (UnicodeDecodeError, LookupError,
    UnicodeEncodeError in the password's hash)."""

    async def scenario() -> tuple[int, object]:
        async with league_app(tmp_path) as (url, _), aiohttp.ClientSession() as cli:
            alice = {"name": "alice", "password": PASSWORD}
            assert (await post(cli, f"{url}/api/accounts", alice))[0] == 201
            headers = {"Content-Type": f"application/json{charset}"}
            async with cli.post(f"{url}/api/{route}", data=body, headers=headers) as answer:
                return answer.status, (await answer.json())["error"]

    with caplog.at_level(logging.WARNING):
        assert asyncio.run(scenario()) == (status, error)
    assert [r for r in caplog.records if r.name.startswith("bisca")] == []


@pytest.mark.parametrize("path", ["/api/session", "/api/submissions"])
def test_a_body_its_sender_cuts_short_ends_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    """A client that announces 100,000 bytes, sends a thousand and hangs up: nobody reads an
    answer, and the server's log gets no traceback (review 38c: one per such request, no
    account needed for a sign-in's body)."""

    async def scenario() -> bytes:
        async with league_app(tmp_path) as (url, _), aiohttp.ClientSession() as cli:
            headers = JSON
            if path == "/api/submissions":
                signed_in = await signed_up(cli, url, "mallory")
                headers = {**signed_in, "Content-Type": "application/gzip"}
            host, port = url.removeprefix("http://").split(":")
            head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: 100000\r\n"
            head += "".join(f"{key}: {value}\r\n" for key, value in headers.items())
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(head.encode() + b"\r\n" + b'{"name": "' + b"x" * 1000)
            writer.write_eof()  # gone: the server ends the connection once it has seen that
            answer = await reader.read()
            writer.close()
            return answer

    with caplog.at_level(logging.WARNING):
        assert asyncio.run(scenario()) == b""
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []


def test_an_odd_version_number_is_a_400_naming_it(tmp_path: Path) -> None:
    """A version number in a path is ASCII digits, at most 9 of them: '²' and '٣' (digits
    to ``str.isdigit``), 30 nines (past the store's integers) and the like are refused by
    the route, before anybody is looked up, never a fault of the server."""

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, league),
            aiohttp.ClientSession() as cli,
        ):
            await asyncio.to_thread(league.store.accounts.create, "ada", PASSWORD)
            await asyncio.to_thread(
                league.store.versions.add, "ada", "mybot", VersionKind.HOSTED, "", ""
            )
            expected = {"1": 401, "v1": 401, "2": 404, "999999999": 404}  # 401: owner only
            for odd in ("%C2%B2", "%D9%A3", "9" * 30, "v" + "9" * 10, "-1", "1.0", "v", "0x1"):
                expected[odd] = 400
            for number, status in expected.items():
                async with cli.get(f"{url}/api/bots/mybot/versions/{number}") as answer:
                    got = answer.status, (await answer.json())["error"]
                assert got[0] == status, (number, got)
                if status == 400:
                    assert "a version is a number of at most 9 digits" in got[1]

    asyncio.run(scenario())


def test_a_sign_in_of_ones_own_between_guesses_wipes_no_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stranger with an account of their own signs in to it after every few guesses at
    another's: each success takes back its own attempt only, so the guesses are throttled as
    if it did not sign in at all; the address's failures are forgotten a quiet spell later."""
    now = standing_clock(monkeypatch)

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession() as cli,
        ):
            victim = {"name": "victim", "password": PASSWORD}
            mine = {"name": "mallory", "password": PASSWORD}
            for body in (victim, mine):
                assert (await post(cli, f"{url}/api/accounts", body))[0] == 201
            statuses = []
            for n in range(2 * web_accounts.FREE_FAILURES):
                wrong = {"name": "victim", "password": f"guess number {n:04d}"}
                statuses.append((await post(cli, f"{url}/api/session", wrong))[0])
                if n % 2:
                    statuses.append((await post(cli, f"{url}/api/session", mine))[0])
            assert 429 in statuses, statuses
            assert statuses.count(401) == web_accounts.FREE_FAILURES, statuses
            now[0] += web_accounts.FORGET_AFTER_S + 1
            assert (await post(cli, f"{url}/api/session", victim))[0] == 200

    asyncio.run(scenario())


def test_one_address_makes_a_few_accounts_an_hour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each account costs a password hash and brings submission quotas of its own: one
    address makes at most ``SIGN_UPS_PER_HOUR`` in an hour, sent at once or one by one; a
    sign-up refused before its hash (a taken name) takes no place; the hour over, it may
    make more."""
    now = standing_clock(monkeypatch)
    most = web_accounts.SIGN_UPS_PER_HOUR

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as cli,
        ):

            async def sign_up(name: str) -> int:
                body = {"name": name, "password": PASSWORD}
                return (await post(cli, f"{url}/api/accounts", body))[0]

            assert await sign_up("first") == 201
            assert await sign_up("first") == 400  # taken: refused before its hash
            statuses = await asyncio.gather(*(sign_up(f"bulk{n}") for n in range(3 * most)))
            assert (statuses.count(201), statuses.count(429)) == (most - 1, 2 * most + 1)
            now[0] += 3600
            assert await sign_up("next-hour") == 201

    asyncio.run(scenario())


def test_one_address_signs_in_with_a_password_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sign-in with a password costs a scrypt, a right one a second for its session, and
    the failures' throttle takes a success's attempt back: so one address signing in to its
    own account again and again, sent at once or one by one, tokens asked with the password
    included, is held to ``PASSWORD_CHECKS_PER_WINDOW`` in the window, each one past it
    refused before any hash; another address is not held by it, and the window over, the
    first signs in again."""
    now = standing_clock(monkeypatch)
    most = web_accounts.PASSWORD_CHECKS_PER_WINDOW

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as cli,
            aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
            ) as other,
        ):
            mine = {"name": "mallory", "password": PASSWORD}
            assert (await post(cli, f"{url}/api/accounts", mine))[0] == 201
            hashed = count_slow_hashes(monkeypatch)
            routes = ("session", "tokens")
            for n in range(most - 2):
                assert (await post(cli, f"{url}/api/{routes[n % 2]}", mine))[0] in (200, 201)
            assert len(hashed) == 2 * (most - 2)  # the password's, and the session's or token's
            at_once = web_accounts.FREE_FAILURES  # (the failures' throttle lets as many fly)
            statuses = await asyncio.gather(
                *(post(cli, f"{url}/api/{routes[n % 2]}", mine) for n in range(at_once))
            )
            codes = sorted(status for status, _ in statuses)
            assert codes.count(429) == at_once - 2 and set(codes[:2]) <= {200, 201}, codes
            refused = await post(cli, f"{url}/api/session", mine)
            assert refused[0] == 429 and "sign-ins with a password" in str(refused[1]["error"])
            assert len(hashed) == 2 * most, "a sign-in refused by the window costs no scrypt"
            assert (await post(other, f"{url}/api/session", mine))[0] == 200
            now[0] += web_accounts.PASSWORD_CHECK_WINDOW_S
            assert (await post(cli, f"{url}/api/session", mine))[0] == 200

    asyncio.run(scenario())


def test_a_session_or_token_just_made_works_at_once_after_typos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five typos, then the right password: the session it gives (and a token made then) is
    remembered as it is made, so its first use costs no check the throttle could refuse while
    the typos' wait runs."""
    standing_clock(monkeypatch)
    hashed = count_slow_hashes(monkeypatch)

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, league),
            aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser,
        ):
            await asyncio.to_thread(league.store.accounts.create, "alice", PASSWORD)
            right = {"name": "alice", "password": PASSWORD}
            for n in range(web_accounts.FREE_FAILURES):
                wrong = {"name": "alice", "password": f"typo number {n:04d}"}
                assert (await post(browser, f"{url}/api/session", wrong))[0] == 401
            web_accounts.time = types.SimpleNamespace(monotonic=lambda: 1002.0)  # waited
            assert (await post(browser, f"{url}/api/session", right))[0] == 200
            hashed.clear()
            assert (await get(browser, f"{url}/api/account"))[0] == 200
            assert hashed == []

    asyncio.run(scenario())


def test_requests_bringing_one_token_not_checked_yet_share_its_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token this server has not checked yet (made before a restart) brought by twelve
    requests at once: one check (one scrypt) serves them all, none is refused as a failed
    sign-in."""
    hashed = count_slow_hashes(monkeypatch)

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, league),
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as cli,
        ):
            store = league.store
            await asyncio.to_thread(store.accounts.create, "alice", PASSWORD)
            _, token = await asyncio.to_thread(
                store.accounts.new_token, "alice", TokenKind.API, "ci"
            )
            hashed.clear()
            bearer = {"Authorization": f"Bearer {token}"}
            answers = await asyncio.gather(
                *(get(cli, f"{url}/api/account", **bearer) for _ in range(12))
            )
            assert [status for status, _ in answers] == [200] * 12, answers
            assert len(hashed) == 1

    asyncio.run(scenario())


def test_an_accounts_live_tokens_and_their_labels_are_bounded(tmp_path: Path) -> None:
    """One account, its own password, in a loop: each sign-in makes a session (30 days) and
    each ``POST /api/account/tokens`` an API token (no end), a row and a scrypt each, and a
    label was kept up to 64 KiB (review 38: 80 calls, 82 live tokens).  Sign-ins past
    ``MAX_SESSIONS`` end the oldest session; API tokens past ``MAX_API_TOKENS`` are refused
    (409) until one is revoked; a label longer than a line is refused (400)."""

    async def scenario() -> None:
        async with (
            league_app(tmp_path) as (url, league),
            aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser,
            aiohttp.ClientSession() as cli,
        ):
            bearer = await signed_up(cli, url, "mallory")  # a session and an API token
            body = {"name": "mallory", "password": PASSWORD}
            for _ in range(MAX_SESSIONS + 2):
                assert (await post(browser, f"{url}/api/session", body))[0] == 200
            assert (await get(browser, f"{url}/api/account"))[0] == 200  # the newest

            status, refused = await post(
                cli, f"{url}/api/account/tokens", {"label": "x" * 20_000}, **bearer
            )
            assert (status, refused["error"]) == (
                400,
                f"a token's label is one line of at most {MAX_LABEL} printable characters "
                "(this one has 20000 characters)",
            )
            for n in range(MAX_API_TOKENS - 1):
                status, _ = await post(
                    cli, f"{url}/api/account/tokens", {"label": f"t{n}"}, **bearer
                )
                assert status == 201
            status, refused = await post(cli, f"{url}/api/account/tokens", {}, **bearer)
            assert status == 409 and "revoke one first" in str(refused["error"]), refused
            assert (await post(cli, f"{url}/api/tokens", body))[0] == 409  # with the password

            tokens = await asyncio.to_thread(league.store.accounts.tokens, "mallory")
            live = [token for token in tokens if not token.revoked]
            kinds = sorted(token.kind for token in live)
            assert kinds == [TokenKind.API] * MAX_API_TOKENS + [TokenKind.SESSION] * MAX_SESSIONS
            async with cli.delete(
                f"{url}/api/account/tokens/{live[-1].id}", headers={**JSON, **bearer}
            ) as answer:
                assert answer.status == 200
            assert (await post(cli, f"{url}/api/account/tokens", {}, **bearer))[0] == 201

    asyncio.run(scenario())


def test_a_token_past_the_live_limit_is_refused_before_its_scrypt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An account at ``MAX_API_TOKENS`` asking for one more is refused (409) by a read before
    the new secret is hashed (review 40: 40 refusals cost 40 scrypts)."""

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession() as cli,
        ):
            bearer = await signed_up(cli, url, "mallory")  # its first API token
            for _ in range(MAX_API_TOKENS - 1):
                assert (await post(cli, f"{url}/api/account/tokens", {}, **bearer))[0] == 201
            hashed = count_slow_hashes(monkeypatch)
            refused = [await post(cli, f"{url}/api/account/tokens", {}, **bearer) for _ in range(8)]
            assert {status for status, _ in refused} == {409}, refused
            assert "revoke one first" in str(refused[0][1]["error"])
            assert hashed == []

    asyncio.run(scenario())


def test_one_account_makes_a_few_tokens_in_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each API token costs a scrypt: an account making and revoking tokens in a loop (never
    at its live limit) is held to ``TOKENS_MADE_PER_WINDOW`` in the window, each past it
    refused before any hash; the window over, it makes one again (review 40)."""
    now = standing_clock(monkeypatch)
    most = web_accounts.TOKENS_MADE_PER_WINDOW

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession() as cli,
        ):
            bearer = await signed_up(cli, url, "mallory")
            hashed = count_slow_hashes(monkeypatch)

            async def make_and_revoke() -> tuple[int, dict[str, object]]:
                status, answer = await post(cli, f"{url}/api/account/tokens", {}, **bearer)
                if status == 201:
                    async with cli.delete(
                        f"{url}/api/account/tokens/{answer['id']}", headers={**JSON, **bearer}
                    ) as gone:
                        assert gone.status == 200
                return status, answer

            for _ in range(most):
                assert (await make_and_revoke())[0] == 201
            status, refused = await make_and_revoke()
            assert status == 429 and "made 20 API tokens" in str(refused["error"]), refused
            assert len(hashed) == most
            now[0] += web_accounts.PASSWORD_CHECK_WINDOW_S
            assert (await make_and_revoke())[0] == 201

    asyncio.run(scenario())


def test_one_address_makes_a_few_tokens_in_a_while_whichever_account_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review s56b: each account's window let an address with a hundred accounts force ~2,000
    scrypts every ten minutes.  An address's accounts together are held to
    ``TOKENS_MADE_PER_ADDRESS``, each past it refused before any hash."""
    standing_clock(monkeypatch)
    monkeypatch.setattr(web_accounts, "TOKENS_MADE_PER_ADDRESS", 3)

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession() as cli,
        ):
            first = await signed_up(cli, url, "mallory")
            second = await signed_up(cli, url, "mallory2")
            hashed = count_slow_hashes(monkeypatch)
            made = [
                (await post(cli, f"{url}/api/account/tokens", {}, **bearer))[0]
                for bearer in (first, second, first)
            ]
            assert made == [201, 201, 201]
            status, refused = await post(cli, f"{url}/api/account/tokens", {}, **second)
            assert status == 429, refused
            assert "3 API tokens were made from here" in str(refused["error"]), refused
            assert len(hashed) == 3  # the fourth refused before its scrypt

    asyncio.run(scenario())


def test_a_sign_up_refused_after_its_scrypt_keeps_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sign-up that loses a race for its name (sent five times at once) is refused in the
    transaction, after its password's scrypt: it keeps its place, so an address's hour of
    sign-ups costs at most ``SIGN_UPS_PER_HOUR`` password scrypts (review 40: 15 for 5)."""
    standing_clock(monkeypatch)
    most = web_accounts.SIGN_UPS_PER_HOUR

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as cli,
        ):
            hashed = count_slow_hashes(monkeypatch)
            made = 0
            for round_ in range(3 * most):
                body = {"name": f"mallory{round_}", "password": PASSWORD}
                answers = await asyncio.gather(
                    *(post(cli, f"{url}/api/accounts", body) for _ in range(most))
                )
                made += [status for status, _ in answers].count(201)
            # Each account made costs a second scrypt, its session's.
            assert 1 <= made <= most and len(hashed) - made <= most, (made, len(hashed))

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("remote", "counted_as"),
    [
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("", ""),
        ("not an address", "not an address"),
    ],
)
def test_an_ipv6_address_is_counted_by_its_64(remote: str, counted_as: str) -> None:
    """One host is given a whole IPv6 /64: per address, its sign-ins and sign-ups would have
    2^64 budgets (review 40)."""
    assert web_accounts.counted_address(remote) == counted_as


def test_one_address_asks_about_taken_names_a_few_times_in_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sign-up refused for a taken name says an account exists, where a sign-in says nothing
    of it: one address gets ``TAKEN_NAMES_PER_WINDOW`` such answers in the window, then 429
    before any name is looked up (review 41: 40 in a row named every account asked about);
    a sign-up that makes its account takes no place; another address is not held by it."""
    now = standing_clock(monkeypatch)
    most = web_accounts.TAKEN_NAMES_PER_WINDOW

    async def scenario() -> None:
        async with (
            league_app(tmp_path, Registration.OPEN) as (url, _),
            aiohttp.ClientSession() as cli,
            aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
            ) as other,
        ):

            async def sign_up(session: aiohttp.ClientSession, name: str) -> tuple[int, str]:
                body = {"name": name, "password": PASSWORD}
                status, answer = await post(session, f"{url}/api/accounts", body)
                return status, str(answer.get("error", ""))

            assert (await sign_up(other, "quietperson"))[0] == 201
            assert (await sign_up(cli, "mine"))[0] == 201  # no place taken
            probes = ["QuietPerson", "qu1etperson", "quietperson"]
            answers = [await sign_up(cli, probes[n % 3]) for n in range(most + 5)]
            assert [status for status, _ in answers] == [400] * most + [429] * 5, answers
            assert "is taken" in answers[0][1] and "taken name" in answers[-1][1], answers
            assert (await sign_up(cli, "freshname"))[0] == 429  # asked before any lookup
            assert (await sign_up(other, "QUIETPERSON"))[0] == 400
            now[0] += web_accounts.PASSWORD_CHECK_WINDOW_S
            assert (await sign_up(cli, "freshname"))[0] == 201

    asyncio.run(scenario())


def test_hashing_runs_in_threads_of_its_own_and_store_reads_are_answered_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review s56b (5): every scrypt ran in the default executor every other store call of
    the web shares, so a burst of them queued everybody's reads.  Each hash (a sign-up, a
    sign-in, a session, an API token, a token's check) runs in the hashing threads; with
    them held, and more new tokens asked than the default executor has threads, an account's
    reads are answered all the same, and the held tokens are made once the hashes go on."""
    names: list[str] = []  # the thread of each scrypt
    holding = threading.Event()
    go_on = threading.Event()
    entered = threading.Semaphore(0)
    real = secrets.slow_hash

    def hash_in_its_thread(secret: str, salt: str) -> str:
        names.append(threading.current_thread().name)
        if holding.is_set():
            entered.release()
            go_on.wait()
        return real(secret, salt)

    monkeypatch.setattr(secrets, "slow_hash", hash_in_its_thread)
    monkeypatch.setattr(account_repository, "slow_hash", hash_in_its_thread)
    default_threads = 4
    burst = 2 * default_threads

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(default_threads))
        async with league_app(tmp_path) as (url, accounts), aiohttp.ClientSession() as cli:
            # A sign-up and its session, a sign-in and its API token: four hashes.
            bearer = await signed_up(cli, url, "alice")
            accounts._checked.clear()  # (as after a restart: the token's check hashes)
            assert (await get(cli, f"{url}/api/account", **bearer))[0] == 200
            assert len(names) == 5, names

            holding.set()
            try:
                made = [
                    asyncio.create_task(
                        post(cli, f"{url}/api/account/tokens", {"label": f"t{n}"}, **bearer)
                    )
                    for n in range(burst)
                ]
                for _ in range(web_accounts.HASHING_THREADS):
                    assert await asyncio.to_thread(entered.acquire, True, 60)
                # Every hashing thread is held, the other tokens wait for them: reads go on.
                status, me = await asyncio.wait_for(get(cli, f"{url}/api/account", **bearer), 60)
                assert status == 200 and me["account"]["name"] == "alice", me  # type: ignore[index]
                status, tokens = await asyncio.wait_for(
                    get(cli, f"{url}/api/account/tokens", **bearer), 60
                )
                assert status == 200 and len(tokens["tokens"]) == 2, tokens  # type: ignore[arg-type]
                assert not any(task.done() for task in made)
            finally:
                go_on.set()
            assert [status for status, _ in await asyncio.gather(*made)] == [201] * burst

    asyncio.run(scenario())
    assert len(names) == 5 + burst
    assert all(name.startswith(web_accounts.HASHING_THREAD_NAME) for name in names), names
