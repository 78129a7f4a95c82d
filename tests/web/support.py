"""Calling the app's API from the tests: HTTP with the standard library, WebSocket with
aiohttp's client; a league's app served in process (:func:`league_app`) and its accounts
called with aiohttp."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import sqlite3
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bisca.server.accounts import LeagueAccounts, Registration, SubmissionLimits
from bisca.server.store import Store
from bisca.server.web import data_backend, serving_web
from tests.support.arena import Arena
from tests.support.league import PASSWORD

JSON = {"Content-Type": "application/json"}
GZIP = {"Content-Type": "application/gzip"}


def call(url: str, body: object = None, raw: bytes | None = None) -> tuple[int, Any]:
    """GET (or POST ``body`` as JSON, or ``raw`` bytes) and the status with the JSON answer
    (a POST says it is JSON, as the app requires of every state-changing request)."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def socket_frames(url: str, first: object, until: str, replies: int = 0) -> list[dict[str, Any]]:
    """Open a WebSocket, send ``first``, and collect frames until one has the key ``until``
    (or the socket closes); each ``actionRequest`` frame is answered with its first legal
    action, ``replies`` times."""

    async def run() -> list[dict[str, Any]]:
        frames: list[dict[str, Any]] = []
        left = replies
        async with aiohttp.ClientSession() as session, session.ws_connect(url) as socket:
            await socket.send_json(first)
            async for message in socket:
                frame = json.loads(message.data)
                frames.append(frame)
                if until in frame:
                    break
                request = frame.get("server", {}).get("actionRequest")
                if request is not None and left > 0:
                    left -= 1
                    reply = {
                        "requestId": request["requestId"],
                        "action": request["legalActions"][0],
                    }
                    await socket.send_json({"reply": reply})
        return frames

    return asyncio.run(asyncio.wait_for(run(), 120))


def socket_send(url: str, messages: list[object], errors: int = 0) -> list[dict[str, Any]]:
    """Send ``messages`` one after the other and collect frames until ``errors`` of them are
    errors (with 0, just the first frame)."""

    async def run() -> list[dict[str, Any]]:
        frames: list[dict[str, Any]] = []
        async with aiohttp.ClientSession() as session, session.ws_connect(url) as socket:
            for message in messages:
                if isinstance(message, str):
                    await socket.send_str(message)
                else:
                    await socket.send_json(message)
            while not frames or sum("error" in f for f in frames) < errors:
                message = await socket.receive()
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                frames.append(json.loads(message.data))
        return frames

    return asyncio.run(asyncio.wait_for(run(), 60))


def copy_data_dir(source: Path, target: Path) -> None:
    """A copy of the (SQLite) data directory ``source`` at ``target`` whose store names the
    copy's own logs (a store names each match's log by its whole path)."""
    shutil.copytree(source, target)
    with contextlib.closing(sqlite3.connect(target / "bisca.sqlite3")) as store, store:
        store.execute(
            "UPDATE matches SET log_path = ? || substr(log_path, ?)",
            (str(target), len(str(source)) + 1),
        )


def app_url(arena: Arena) -> str:
    """The browser app's URL, from the lines ``bisca serve --http`` prints at its start."""
    assert arena.process.stdout is not None
    for _ in range(10):
        line = arena.process.stdout.readline()
        found = re.search(r"browser app on (http://\S+)", line)
        if found:
            return found.group(1).rstrip("/")
    raise AssertionError(f"no browser app line; {(arena.tmp / 'server.log').read_text()[-2000:]}")


@asynccontextmanager
async def league_app(
    tmp_path: Path,
    registration: Registration = Registration.OPEN,
    limits: SubmissionLimits | None = None,
) -> AsyncIterator[tuple[str, LeagueAccounts]]:
    """The app of a league open to strangers, served in process over ``tmp_path/data`` (its
    store made there unless it is there already), taking uploads into ``data/submissions``:
    its URL (no trailing ``/``) and its accounts."""
    data = tmp_path / "data"
    Store.in_directory(data).close()
    async with data_backend(data) as backend:
        backend.accounts = LeagueAccounts(
            backend.store,
            registration,
            limits=limits or SubmissionLimits(),
            uploads=data / "submissions",
        )
        async with serving_web(backend, None, "127.0.0.1", 0) as url:
            yield url.rstrip("/"), backend.accounts


async def post(
    session: aiohttp.ClientSession, url: str, body: dict[str, str], **headers: str
) -> tuple[int, dict[str, object]]:
    async with session.post(url, json=body, headers={**JSON, **headers}) as answer:
        return answer.status, await answer.json()


async def get(
    session: aiohttp.ClientSession, url: str, **headers: str
) -> tuple[int, dict[str, object]]:
    async with session.get(url, headers=headers) as answer:
        return answer.status, await answer.json()


async def signed_up(session: aiohttp.ClientSession, url: str, name: str) -> dict[str, str]:
    """A new account's ``Authorization`` header: signed up, then an API token for its
    password (as ``bisca account create`` does)."""
    body = {"name": name, "password": PASSWORD}
    status, answer = await post(session, f"{url}/api/accounts", body)
    assert status == 201, answer
    status, answer = await post(session, f"{url}/api/tokens", body)
    assert status == 201, answer
    return {"Authorization": f"Bearer {answer['token']}"}


async def upload(
    session: aiohttp.ClientSession, url: str, bearer: dict[str, str], archive: bytes
) -> tuple[int, dict[str, object]]:
    """``POST /api/submissions`` of ``archive`` (a .tar.gz), as ``bisca submit`` sends it."""
    async with session.post(
        f"{url}/api/submissions", data=archive, headers={**bearer, **GZIP}
    ) as answer:
        return answer.status, await answer.json()
