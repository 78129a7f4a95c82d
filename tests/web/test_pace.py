"""One peer address's requests, paced (``web/_pace.py``, review s58b's W2): the pace as a
number with its own clock, then the flood it is for on a real ``bisca serve --http``, and the
option's bad values."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer, make_mocked_request

from bisca.server.cli import main
from bisca.server.web._api import Api
from bisca.server.web._pace import RequestPace, Turn
from tests.support.arena import start_arena, stop_arena

from .test_hostile_http import app_url


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _pace(per_second: float, **options: float) -> tuple[RequestPace, Clock]:
    clock = Clock()
    return RequestPace(per_second, clock=clock, **options), clock  # type: ignore[arg-type]


def test_a_burst_is_answered_at_once_and_the_rest_wait_their_turns() -> None:
    pace, clock = _pace(10, burst_s=1.0, max_wait_s=2.05)
    # At 10 a second with a second's burst: eleven at once (the burst and the one due now),
    # then each a tenth of a second after the one before, up to two seconds' wait (2.05 s
    # at most: the turns are sums of tenths, in floating point).
    turns = [pace.turn("a") for _ in range(33)]
    assert [round(t.wait, 6) for t in turns[:11]] == [0.0] * 11
    assert [round(t.wait, 6) for t in turns[11:31]] == [round(n / 10, 6) for n in range(1, 21)]
    assert not any(t.refused for t in turns[:31])
    # The next would wait 2.1 s: refused, told to come back when its wait is 2.05 s, and it
    # takes no turn (the one after it is refused alike).
    assert turns[31] == Turn(pytest.approx(0.05), refused=True)  # type: ignore[arg-type]
    assert turns[32].refused
    # Time passing gives the turns back at the pace.
    clock.now += 0.5
    assert round(pace.turn("a").wait, 6) == 1.6
    clock.now += 60
    assert pace.turn("a") == Turn(0.0)


def test_each_address_has_its_own_pace() -> None:
    pace, _ = _pace(1, burst_s=0.0, max_wait_s=0.5)
    assert pace.turn("a") == Turn(0.0)
    assert pace.turn("a").refused
    assert pace.turn("b") == Turn(0.0)
    assert pace.turn("2001:db8::/64") == Turn(0.0)


def test_idle_addresses_are_forgotten_and_a_table_of_active_ones_shares_one_pace() -> None:
    pace, clock = _pace(1, burst_s=0.0, max_wait_s=0.5, max_addresses=3)
    for address in "abc":
        pace.turn(address)
    assert pace.addresses == 3
    # All three are active (their next turns are a second away): a fourth address is paced
    # with the others beyond the table, and so is a fifth, sharing that one pace.
    assert pace.turn("d") == Turn(0.0)
    assert pace.turn("e").refused
    assert pace.addresses == 4  # the three and the newcomers' one
    # Once their turns have passed, the idle addresses make room for new ones.
    clock.now += 2
    assert pace.turn("f") == Turn(0.0)
    assert pace.turn("f").refused  # its own pace, not the overflow's
    assert pace.addresses == 1  # the newcomers' shared pace forgotten too


def test_requests_held_are_answered_when_the_app_shuts_down() -> None:
    """Stopping the server does not wait for the turns of the requests it holds."""
    pace = RequestPace(1 / 3000, burst_s=0.0, max_wait_s=10_000.0)
    request = make_mocked_request("GET", "/api/info").clone(remote="192.0.2.7")

    async def answer(_request: web.Request) -> web.StreamResponse:
        return web.Response(text="answered")

    async def main() -> list[str]:
        first = await pace.middleware(request, answer)
        held = asyncio.ensure_future(pace.middleware(request, answer))
        await asyncio.sleep(0)
        assert not held.done()  # its turn is 3,000 s away
        await pace.release(web.Application())
        second = await asyncio.wait_for(held, 30)
        return [str(getattr(response, "text", "")) for response in (first, second)]

    assert asyncio.run(main()) == ["answered", "answered"]


def test_a_pace_must_be_above_zero_and_finite() -> None:
    for wrong in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="--http-requests-per-client"):
            RequestPace(wrong)


async def _flood(url: str, connections: int, seconds: float) -> dict[int, int]:
    """``connections`` connections from 127.0.0.1 asking ``url`` in a loop for ``seconds``;
    the answers' statuses counted (the requests still held when the time is up included)."""
    statuses: dict[int, int] = {}
    stop = time.monotonic() + seconds

    async def asker(session: aiohttp.ClientSession) -> None:
        while time.monotonic() < stop:
            async with session.get(url) as response:
                await response.read()
                statuses[response.status] = statuses.get(response.status, 0) + 1

    timeout = aiohttp.ClientTimeout(total=60)
    connector = aiohttp.TCPConnector(limit=connections)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await asyncio.gather(*(asker(session) for _ in range(connections)))
    return statuses


async def _first_refusal(url: str, askers: int) -> tuple[int, str]:
    """``askers`` requests of ``url`` at once from 127.0.0.1: the first refused one's
    ``Retry-After`` and sentence (the others, held, are not waited for)."""
    connector = aiohttp.TCPConnector(limit=askers)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def ask() -> tuple[int, str, str]:
            async with session.get(url) as response:
                return (
                    response.status,
                    response.headers.get("Retry-After", ""),
                    await response.text(),
                )

        pending = {asyncio.ensure_future(ask()) for _ in range(askers)}
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for status, retry_after, text in (task.result() for task in done):
                    if status == 429:
                        return int(retry_after), json.loads(text)["error"]
        finally:
            for task in pending:
                task.cancel()
    raise AssertionError(f"none of {askers} requests at once was refused")


@pytest.mark.system
def test_a_flood_from_one_address_is_answered_at_its_pace_and_another_is_not_held(
    tmp_path: Path,
) -> None:
    """Connections asking in a loop from one address are answered at its pace, 2 a second
    past a burst of 10, their requests held, none refused; another address's burst is its
    own; and requests whose turns are more than 10 s ahead are refused 429 at once, naming
    the option, with when to ask again."""
    arena, _ = start_arena(tmp_path, *["--http", "127.0.0.1:0", "--http-requests-per-client", "2"])
    try:
        url = app_url(arena)
        started = time.monotonic()
        statuses = asyncio.run(_flood(f"{url}/api/leaderboard/belote", 4, 2.0))
        lasted = time.monotonic() - started
        # Unpaced, this loop is answered thousands of times a second.
        assert set(statuses) == {200}, statuses
        assert 4 <= statuses[200] <= 12 + 2 * lasted, (statuses, lasted)

        port = int(url.rsplit(":", 1)[1])
        for _ in range(10):
            other = http.client.HTTPConnection(
                "127.0.0.1", port, timeout=30, source_address=("127.0.0.2", 0)
            )
            other.request("GET", "/api/info")
            assert other.getresponse().status == 200
            other.close()

        # The burst is spent: of 64 at once, those past 10 s of turns are refused.
        retry_after, said = asyncio.run(_first_refusal(f"{url}/api/info", 64))
        assert retry_after >= 1
        assert "127.0.0.1 asks faster than 2 requests a second" in said, said
        assert "--http-requests-per-client" in said, said
    finally:
        stop_arena(arena)


@pytest.mark.parametrize("given", ["-1", "nan", "inf", "1e7", "fast"])
def test_a_pace_that_is_no_number_of_requests_a_second_is_refused(
    given: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["serve", "--http", "127.0.0.1:0"], ["web"]):
        with pytest.raises(SystemExit) as exit_:
            main([*command, "--data", str(tmp_path / "d"), "--http-requests-per-client", given])
        assert exit_.value.code == 2
        assert "argument --http-requests-per-client: expected" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_an_address_ahead_of_its_pace_keeps_no_idle_address_in_the_table() -> None:
    """Review s59d, F2: idle entries were forgotten in the order asked, up to the first one
    still ahead of its pace, so one address kept ahead kept a full table of idle ones behind
    it, and every newcomer shared the overflow's pace."""
    pace, clock = _pace(1, burst_s=0.0, max_wait_s=1000.0, max_addresses=4)
    for _ in range(300):
        pace.turn("ahead")  # 300 s ahead of its pace, asked first
    for address in ("b", "c", "d"):
        pace.turn(address)
    clock.now += 2  # b, c and d are idle now; "ahead" is not
    assert pace.turn("newcomer") == Turn(0.0)
    assert pace.turn("another") == Turn(0.0)  # its own pace, not the newcomer's
    assert pace.addresses == 3


def test_a_sockets_messages_take_turns_of_its_pace_and_one_too_far_ahead_is_closed() -> None:
    """Review s59d, F1: a page's WebSocket messages were not paced, and one table's socket
    sending in a loop held the referee's loop (1.1 million messages in 5 s).  Each message
    takes a turn: one socket's flood is read at its address's pace (the socket unread
    meanwhile, so its sender waits), and a socket whose turn is too far ahead, behind the
    others of its address, is closed 1013 (try again later)."""
    pace = RequestPace(4, burst_s=0.5, max_wait_s=1.0)
    api = Api.__new__(Api)  # only its pace is used here
    api.pace = pace
    read: dict[str, int] = {}

    async def handler(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        peer = request.query["peer"]
        async for _ in socket:
            read[peer] = read.get(peer, 0) + 1
            if not await api._paced(socket, peer):  # (the turn under test)
                break
        return socket

    async def flood(session: aiohttp.ClientSession, url: object, messages: int) -> int | None:
        """Send ``messages``; the close code the server ends the socket with, if it does
        within 20 s (a socket it keeps reading at its pace is then closed by the client)."""
        async with session.ws_connect(url) as socket:  # type: ignore[arg-type]
            for n in range(messages):
                await socket.send_str(f"{n}")
            with contextlib.suppress(TimeoutError):
                while not socket.closed:
                    await socket.receive(timeout=20)
            return socket.close_code if socket.closed else None

    async def main() -> list[int | None]:
        app = web.Application()
        app.router.add_get("/ws", handler)
        async with TestServer(app) as server, aiohttp.ClientSession() as session:
            alone = asyncio.ensure_future(flood(session, server.make_url("/ws?peer=a"), 1000))
            await asyncio.sleep(1.0)
            # Unpaced, all 1,000 were read in milliseconds; paced, a second's worth.
            assert 1 <= read["a"] <= 2 + 4 * 3 + 1, read
            alone.cancel()
            # Six sockets of one address, each a turn waiting: the sixth's is 1.5 s ahead.
            url = server.make_url("/ws?peer=b")
            crowd = {asyncio.ensure_future(flood(session, url, 3)) for _ in range(6)}
            codes: list[int | None] = []
            try:
                while crowd and aiohttp.WSCloseCode.TRY_AGAIN_LATER not in codes:
                    done, crowd = await asyncio.wait(crowd, return_when=asyncio.FIRST_COMPLETED)
                    codes += [task.result() for task in done]
            finally:
                for task in crowd:
                    task.cancel()
            return codes

    codes = asyncio.run(main())
    assert aiohttp.WSCloseCode.TRY_AGAIN_LATER in codes, codes
