"""Calling the app's API from the tests: HTTP with the standard library, WebSocket with
aiohttp's client."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from typing import Any

import aiohttp

from tests.support.arena import Arena


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


def app_url(arena: Arena) -> str:
    """The browser app's URL, from the lines ``bisca serve --http`` prints at its start."""
    assert arena.process.stdout is not None
    for _ in range(10):
        line = arena.process.stdout.readline()
        found = re.search(r"browser app on (http://\S+)", line)
        if found:
            return found.group(1).rstrip("/")
    raise AssertionError(f"no browser app line; {(arena.tmp / 'server.log').read_text()[-2000:]}")
