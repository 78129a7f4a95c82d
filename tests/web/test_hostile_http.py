"""The app against hostile HTTP: a page of another origin, a rebound DNS name, a flood of
tables, a slowloris client, plain HTTP where TLS is served.  Each test performs the attack
on a real ``bisca serve --http`` (or the app on loopback) and sees it refused."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import re
import socket
import ssl
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.http_exceptions import BadStatusLine, LineTooLong

from bisca.server.store import Store
from bisca.server.web import Table, TableLimits, Tables, WebOptions, data_backend, serving_web
from bisca.server.web import _app as app_module
from bisca.server.web import _http_log as http_log
from bisca.server.web._api import Api
from bisca.server.web._connections import ConnectionCap
from bisca.server.web._http_log import RequestLog
from bisca.server.web._json import Problem
from bisca.server.web._replay import replay_json
from bisca.server.web._replays import replay_key
from bisca.server.web._table import MAX_PAGES_PER_TABLE
from tests.edge.certificates import issue, make_authority
from tests.support.arena import Arena, start_arena, stop_arena
from tests.support.waiting import INTERVAL, poll_until

from .support import call, league_app

Site = tuple[Arena, str]
TABLE: dict[str, Any] = {
    "request": {
        "game": "GAME_BELOTE",
        "settings": {"belote": {"deals": 1}},
        "bots": ["", "greedy", "random", "greedy"],
    }
}


def raw_request(
    url: str, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """A request with exactly these headers (Host included, when given)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest(method, path, skip_host=headers is not None and "Host" in headers)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def app_url(arena: Arena) -> str:
    assert arena.process.stdout is not None
    for _ in range(10):
        found = re.search(r"browser app on (https?://\S+)", arena.process.stdout.readline())
        if found:
            return found.group(1).rstrip("/")
    raise AssertionError((arena.tmp / "server.log").read_text()[-2000:])


def test_a_text_plain_post_of_another_origin_is_refused(site: Site) -> None:
    _, url = site
    body = json.dumps(TABLE).encode()
    status, answer = raw_request(
        url, "POST", "/api/tables", body, {"Content-Type": "text/plain", "Origin": url}
    )
    assert status == 403 and "Content-Type must be application/json" in answer["error"]
    status, answer = raw_request(
        url,
        "POST",
        "/api/tables",
        body,
        {"Content-Type": "application/json", "Origin": "http://evil.example"},
    )
    assert status == 403 and "Origin 'http://evil.example' is not this app's" in answer["error"]


def test_a_host_that_is_not_the_servers_is_refused(site: Site) -> None:
    _, url = site
    port = url.rsplit(":", 1)[1]
    status, answer = raw_request(url, "GET", "/api/info", headers={"Host": f"evil.example:{port}"})
    assert status == 421 and "is not a name of this server" in answer["error"]
    status, answer = raw_request(url, "GET", "/api/info", headers={"Host": f"localhost:{port}"})
    assert status == 200 and answer["arena"] is True


def test_a_websocket_of_another_origin_is_refused(site: Site) -> None:
    _, url = site

    async def connect(origin: str) -> int:
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(
                    url.replace("http://", "ws://") + "/api/matches/m-x/watch", origin=origin
                ):
                    return 101
            except aiohttp.WSServerHandshakeError as refused:
                return refused.status

    assert asyncio.run(connect("http://evil.example")) == 403
    assert asyncio.run(connect(url)) == 101


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"settings": {"belote": {"deals": 1000}}}, "deals: a person's table plays at most 24"),
        ({"clock": {"moveMs": 3_600_000}}, "clock: move_ms: a person's table allows at most"),
        ({"clock": {"bankMs": 3_600_000}}, "clock: bank_ms: a person's table allows at most"),
    ],
)
def test_long_tables_are_refused(site: Site, change: dict[str, object], words: str) -> None:
    _, url = site
    status, body = call(f"{url}/api/tables", {"request": {**TABLE["request"], **change}})
    assert status == 400 and words in body["error"]


@pytest.mark.system
def test_tables_per_client_are_capped_and_an_unjoined_table_ends(tmp_path: Path) -> None:
    arena, _ = start_arena(
        tmp_path,
        *["--http", "127.0.0.1:0", "--http-tables-per-client", "1", "--http-table-wait", "1"],
    )
    try:
        url = app_url(arena)
        status, first = call(f"{url}/api/tables", TABLE)
        assert status == 201, first
        status, refused = call(f"{url}/api/tables", TABLE)
        assert status == 429 and "1 tables of yours" in refused["error"]
        # Nobody opens the person's seat: the table is ended, and frees its place.
        poll_until(
            "the unjoined table's match ends",
            lambda: (
                call(f"{url}/api/matches/{first['matchId']}")[1]["match"]["status"]
                == "MATCH_STATUS_FINISHED"
            ),
        )
        status, second = poll_until(
            "a new table opens", lambda: (got := call(f"{url}/api/tables", TABLE))[0] == 201 and got
        )
        assert second["table"] != first["table"]
    finally:
        stop_arena(arena)


@pytest.mark.system
def test_tables_asked_at_once_are_capped_too(tmp_path: Path) -> None:
    """Opening a table awaits the referee before the table is kept: requests sent together
    must not all pass the cap meanwhile (each would launch its bot processes)."""
    arena, _ = start_arena(
        tmp_path, *["--http", "127.0.0.1:0", "--http-tables-per-client", "1", "--no-sandbox"]
    )
    try:
        url = app_url(arena)

        async def ask_at_once(count: int) -> list[int]:
            async with aiohttp.ClientSession() as session:

                async def ask() -> int:
                    async with session.post(f"{url}/api/tables", json=TABLE) as response:
                        await response.read()
                        return response.status

                return await asyncio.gather(*(ask() for _ in range(count)))

        statuses = asyncio.run(ask_at_once(6))
        assert sorted(statuses) == [201] + [429] * 5, statuses
    finally:
        stop_arena(arena)


@pytest.mark.system
def test_another_tables_seats_are_never_seated_at_a_table(tmp_path: Path) -> None:
    """The seats of a person's table (its person, its sample bots) are connected bots whose
    names the public match list shows: a stranger's table naming them is refused, not played
    over the other person's stream."""
    arena, _ = start_arena(tmp_path, "--http", "127.0.0.1:0", "--no-sandbox")
    try:
        url = app_url(arena)
        status, victim = call(f"{url}/api/tables", TABLE)
        assert status == 201, victim

        def running_seats() -> list[str] | None:
            status, listing = call(f"{url}/api/matches?status=running")
            assert status == 200, listing
            for info in listing["list"]["matches"]:
                if info["matchId"] == victim["matchId"]:
                    return list(info["bots"])
            return None

        seats = poll_until("the person's match runs (its bots connected)", running_seats)
        for name in seats[:2]:  # the person's seat, then a sample bot's
            request = {**TABLE["request"], "bots": ["", name, "greedy", "greedy"]}
            status, refused = call(f"{url}/api/tables", {"request": request})
            assert status == 409, refused
            assert f"{name!r} plays in a match of its own" in refused["error"], refused
    finally:
        stop_arena(arena)


@pytest.mark.system
def test_a_websocket_message_bigger_than_a_body_is_refused_unread(tmp_path: Path) -> None:
    """A page's messages are a few hundred bytes: one bigger than a request's body, plain or
    compressed (a few KiB on the wire), closes the socket (1009) before any token is asked
    for, instead of being parsed on the referee's loop."""
    arena, _ = start_arena(tmp_path, "--http", "127.0.0.1:0")
    try:
        url = app_url(arena).replace("http://", "ws://")
        # Valid JSON that each socket would answer (no such table or match, no token).
        huge = json.dumps({"token": "", "padding": [0] * (WebOptions().max_body // 2)})

        async def send(path: str, compress: int) -> tuple[list[str], int | None]:
            async with (
                aiohttp.ClientSession() as session,
                session.ws_connect(url + path, compress=compress) as socket,
            ):
                await socket.send_str(huge)
                answers = [message.data async for message in socket]
                return answers, socket.close_code

        for path in ("/api/tables/t-none/play", "/api/matches/m-none/watch"):
            for compress in (0, 15):
                answers, code = asyncio.run(send(path, compress))
                assert code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG, (path, compress, answers)
    finally:
        stop_arena(arena)


def test_a_websocket_gone_before_its_first_message_logs_no_failure(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A stranger's socket closed before its first message (or for a message too big) is
    told nothing: answering it failed, and each such socket wrote a traceback to the log."""

    async def attack() -> None:
        async with (
            data_backend(data_dir) as backend,
            serving_web(backend, None, "127.0.0.1", 0) as url,
        ):
            watch = url.replace("http://", "ws://") + "api/matches/m-none/watch"
            async with aiohttp.ClientSession() as session:
                closed = await session.ws_connect(watch)
                await closed.close()
                too_big = await session.ws_connect(watch)
                await too_big.send_str(json.dumps({"padding": "x" * WebOptions().max_body}))
                assert (await too_big.receive()).type == aiohttp.WSMsgType.CLOSE
                await too_big.close()
        # (the server's end waits for its handlers: both have answered, or failed, by now)

    with caplog.at_level(logging.ERROR, logger="bisca.web"):
        asyncio.run(attack())
    assert not caplog.records, [record.getMessage() for record in caplog.records]


def opened_table(url: str) -> tuple[dict[str, Any], str]:
    """A new table of the app at ``url`` (its answer) and the address of its person's socket."""
    status, table = call(f"{url}/api/tables", TABLE)
    assert status == 201, table
    return table, url.replace("http://", "ws://") + f"/api/tables/{table['table']}/play"


@pytest.mark.system
def test_a_tables_sockets_are_capped(tmp_path: Path) -> None:
    """A table's token is anybody's: its sockets, each held for the whole game, are capped
    (a file descriptor each), and a socket closed frees its place."""
    arena, _ = start_arena(tmp_path, "--http", "127.0.0.1:0", "--no-sandbox")
    try:
        url = app_url(arena)
        table, play = opened_table(url)

        async def open_pages() -> None:
            async with aiohttp.ClientSession() as session:

                async def first_frame() -> tuple[aiohttp.ClientWebSocketResponse, Any]:
                    socket = await session.ws_connect(play)
                    await socket.send_json({"token": table["token"]})
                    return socket, await socket.receive_json()

                pages = [await first_frame() for _ in range(MAX_PAGES_PER_TABLE)]
                assert all("table" in frame for _, frame in pages), pages
                refused, frame = await first_frame()
                assert frame.get("status") == 429, frame
                assert f"{MAX_PAGES_PER_TABLE} pages have it open" in frame["error"], frame
                await refused.close()
                await pages[0][0].close()
                # The server sees the page gone when its handler ends: poll for the place.
                deadline = asyncio.get_running_loop().time() + 30
                while True:
                    socket, frame = await first_frame()
                    await socket.close()
                    if "table" in frame or asyncio.get_running_loop().time() > deadline:
                        break
                    await asyncio.sleep(INTERVAL)
                assert "table" in frame, frame
                for socket, _ in pages[1:]:
                    await socket.close()

        asyncio.run(open_pages())
    finally:
        stop_arena(arena)


def test_a_half_sent_request_is_closed(data_dir: Path) -> None:
    async def attack() -> tuple[bytes, bytes]:
        async with (
            data_backend(data_dir) as backend,
            serving_web(backend, None, "127.0.0.1", 0, WebOptions(idle_s=0.5)) as url,
        ):
            port = int(url.rstrip("/").rsplit(":", 1)[1])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port)
            half = await asyncio.wait_for(reader.read(), 30)  # b"": the server closed it
            writer.close()
            idle_reader, idle_writer = await asyncio.open_connection("127.0.0.1", port)
            idle = await asyncio.wait_for(idle_reader.read(), 30)
            idle_writer.close()
            return half, idle

    half, idle = asyncio.run(attack())
    assert half == b"" and idle == b""


def connection_from(source: str, port: int) -> socket.socket:
    """A TCP connection to the app on loopback from ``source`` (any 127.x.y.z is loopback)."""
    return socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))


def answer_unasked(port: int) -> bytes:
    """All a new connection from 127.0.0.1 is sent, asking nothing, until the server closes
    it (an admitted one: nothing, once it has been idle for the app's idle time)."""
    with connection_from("127.0.0.1", port) as connection:
        return b"".join(iter(lambda: connection.recv(4096), b""))


def websocket_unsent(port: int) -> socket.socket | None:
    """A WebSocket from 127.0.0.1 that has sent no message yet, opened by hand, or ``None``
    if its handshake is refused."""
    connection = connection_from("127.0.0.1", port)
    connection.sendall(
        b"GET /api/matches/m-none/watch HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n" % port
    )
    handshake = b""
    while b"\r\n\r\n" not in handshake and (more := connection.recv(4096)):
        handshake += more
    if handshake.startswith(b"HTTP/1.1 101"):
        return connection
    connection.close()
    return None


@pytest.mark.system
def test_connections_per_client_are_capped(tmp_path: Path) -> None:
    """Each connection is a file descriptor of the process the referee runs in: one address
    that keeps idle connections (or WebSockets that never send) open holds at most
    --http-connections-per-client of them, the next is answered 429 and closed at once, and
    another address is served meanwhile."""
    cap = 4
    arena, _ = start_arena(
        tmp_path, *["--http", "127.0.0.1:0", "--http-connections-per-client", str(cap)]
    )
    held: list[socket.socket] = []
    try:
        url = app_url(arena)
        port = int(url.rsplit(":", 1)[1])
        held += [connection_from("127.0.0.1", port) for _ in range(cap)]
        refused = poll_until(
            f"connection {cap + 1} from 127.0.0.1 is refused",
            lambda: (got := answer_unasked(port)).startswith(b"HTTP/1.1 429") and got,
        )
        assert f"127.0.0.1 already has {cap} connections open".encode() in refused, refused
        assert b"--http-connections-per-client" in refused, refused

        other = http.client.HTTPConnection(
            "127.0.0.1", port, timeout=30, source_address=("127.0.0.2", 0)
        )
        other.request("GET", "/api/info")
        assert other.getresponse().status == 200
        other.close()

        # A connection closed frees its place (once the server has seen it go), which a
        # WebSocket takes and holds in turn.
        held.pop().close()
        held.append(poll_until("a WebSocket takes the freed place", lambda: websocket_unsent(port)))
        assert answer_unasked(port).startswith(b"HTTP/1.1 429")
    finally:
        for connection in held:
            connection.close()
        stop_arena(arena)


@pytest.mark.system
def test_serve_raises_its_soft_open_files_limit_to_the_hard_one(tmp_path: Path) -> None:
    """The app's connections, the bots' streams and the match logs share the process's
    descriptors: a soft limit of 256 under a hard one of 4096 is raised to 4096."""
    arena, _ = start_arena(
        tmp_path, "--http", "127.0.0.1:0", under=["prlimit", "--nofile=256:4096", "--"]
    )
    try:
        app_url(arena)  # serving: the limit was set before
        limits = Path(f"/proc/{arena.process.pid}/limits").read_text()
        open_files = next(line for line in limits.splitlines() if line.startswith("Max open files"))
        assert open_files.split()[3:5] == ["4096", "4096"], open_files
    finally:
        stop_arena(arena)


@pytest.mark.system
def test_the_app_is_https_with_the_servers_certificate(tmp_path: Path) -> None:
    authority = make_authority(tmp_path)
    server = issue(authority, tmp_path, "bisca-server", server=True)
    arena, _ = start_arena(
        tmp_path,
        *["--http", "127.0.0.1:0", "--tls-cert", str(server.cert_file)],
        *["--tls-key", str(server.key_file)],
    )
    try:
        url = app_url(arena)
        assert url.startswith("https://127.0.0.1:")
        trusted = ssl.create_default_context(cafile=str(authority.cert_file))
        with urllib.request.urlopen(f"{url}/api/info", context=trusted, timeout=30) as response:
            assert response.status == 200 and json.loads(response.read())["arena"] is True
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as plain:
            plain.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = plain.recv(4096)
        assert not answer.startswith(b"HTTP/")  # a TLS alert or a closed socket, no answer
    finally:
        stop_arena(arena)


def test_a_log_that_cannot_be_read_is_a_409_without_the_servers_folders(tmp_path: Path) -> None:
    """A replay asked of a log that is gone, or is not a log: 409 naming the match and why,
    with the file's name, never the server's folders (the answer is anybody's)."""
    folder = tmp_path / "srv" / "data" / "matches" / "m-1"
    folder.mkdir(parents=True)
    gone = folder / "m-1.binlog"
    with pytest.raises(Problem) as missing:
        replay_key("m-1", None, gone)
    garbage = folder / "m-2.binlog"
    garbage.write_bytes(b"not a log at all")
    with pytest.raises(Problem) as unreadable:
        replay_json(garbage, None, {})
    for refused, name in ((missing.value, "m-1"), (unreadable.value, "m-2.binlog")):
        assert refused.status == 409 and name in refused.message, refused.message
        assert str(tmp_path) not in refused.message, refused.message


@pytest.mark.system
def test_a_table_left_with_no_page_open_ends(tmp_path: Path) -> None:
    """A person who opened the seat and left for good (the last page closed, none opened
    again within --http-table-left) no longer holds the table's bots and place for hours."""
    arena, _ = start_arena(
        tmp_path, *["--http", "127.0.0.1:0", "--http-table-left", "1", "--no-sandbox"]
    )
    try:
        url = app_url(arena)
        table, play = opened_table(url)

        async def open_and_leave() -> None:
            async with aiohttp.ClientSession() as session:
                socket = await session.ws_connect(play)
                await socket.send_json({"token": table["token"]})
                assert "table" in await socket.receive_json()
                await socket.close()

        asyncio.run(open_and_leave())
        match = poll_until(
            "the left table's match ends",
            lambda: (
                (got := call(f"{url}/api/matches/{table['matchId']}")[1]["match"])["status"]
                == "MATCH_STATUS_FINISHED"
                and got
            ),
        )
        assert "no page had the person's seat open for 1 s" in str(match), match
    finally:
        stop_arena(arena)


MARKER = b"EVILMARKER"


def malformed(port: int) -> list[bytes]:
    """Requests aiohttp's parser refuses (400), each quoting ``MARKER``: the HTTP version, the
    Content-Length, a header line over 8,190 bytes, 200 headers (aiohttp's most: 128), a chunk
    size; and a gzip body that is not gzip, found as the app reads it."""
    host = b"Host: 127.0.0.1:%d\r\n" % port
    return [
        b"GET /" + MARKER + b" HTTP/9.9\r\n\r\n",
        b"POST /api/" + MARKER + b" HTTP/1.1\r\n" + host + b"Content-Length: x\r\n\r\n",
        b"GET / HTTP/1.1\r\n" + host + b"X-" + MARKER + b": " + b"a" * 9000 + b"\r\n\r\n",
        b"GET / HTTP/1.1\r\n"
        + host
        + b"".join(b"X-%s-%d: 1\r\n" % (MARKER, n) for n in range(200))
        + b"\r\n",
        b"POST /api/accounts HTTP/1.1\r\n"
        + host
        + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + MARKER
        + b"\r\n\r\n",
        b"POST /api/accounts HTTP/1.1\r\n"
        + host
        + b"Content-Type: application/json\r\nContent-Encoding: gzip\r\n"
        + b"Content-Length: %d\r\n\r\n%s" % (len(MARKER), MARKER),
    ]


async def answer_of(port: int, request: bytes, host: str = "127.0.0.1") -> bytes:
    """All the app answers ``request`` sent on a connection of its own, until it closes it."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(request)
        return await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


def test_malformed_requests_are_counted_in_one_line_not_logged_each(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review s56b (3): aiohttp logged each request its parser refused as an ERROR with a
    traceback quoting the sender's bytes (18 bytes sent, 579 bytes of log).  Now a flood of
    them is answered 400 and logged as one line counting them, without a byte the sender
    chose.  (The line is said as the app ends: no interval's timer runs out meanwhile, however
    slow the machine.)"""
    monkeypatch.setattr(http_log, "BAD_REQUESTS_EVERY_S", 24 * 3600.0)
    rounds = 25

    async def flood() -> list[bytes]:
        async with league_app(tmp_path) as (url, _):
            port = int(url.rsplit(":", 1)[1])
            return [await answer_of(port, request) for request in malformed(port) * rounds]

    with caplog.at_level(logging.DEBUG):
        answers = asyncio.run(flood())
    assert all(re.match(rb"HTTP/1\.[01] 400 ", answer) for answer in answers), answers[:6]
    lines = [
        record
        for record in caplog.records
        if record.name.startswith(("aiohttp", "bisca.web")) and record.levelno >= logging.INFO
    ]
    assert len(lines) == 1, [record.getMessage()[:200] for record in lines]
    (line,) = lines
    assert line.name == "bisca.web" and line.exc_info is None
    assert line.getMessage().startswith(f"{len(answers)} malformed HTTP requests"), (
        line.getMessage()
    )
    assert MARKER.decode() not in caplog.text


def test_a_failure_of_the_apps_own_still_logs_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the malformed requests' count leaves alone: a handler's failure is logged by the
    app's middleware with its traceback, and one past the middleware by aiohttp's logger,
    with its traceback too."""

    async def info_fails(self: object, request: object) -> None:
        raise RuntimeError("a handler's own failure")

    def compress_fails(request: object, response: object) -> None:
        raise RuntimeError("a failure past the middleware")

    async def ask(port: int) -> bytes:
        request = b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n"
        return await answer_of(port, request % port)

    async def fail() -> tuple[bytes, bytes]:
        async with league_app(tmp_path) as (url, _):
            port = int(url.rsplit(":", 1)[1])
            handler = await ask(port)
            monkeypatch.setattr(app_module, "_compress", compress_fails)
            middleware = await ask(port)
            return handler, middleware

    monkeypatch.setattr(Api, "info", info_fails)
    with caplog.at_level(logging.ERROR):
        handler, middleware = asyncio.run(fail())
    assert handler.startswith(b"HTTP/1.1 500 "), handler
    assert middleware.startswith(b"HTTP/1.1 500 "), middleware
    failures = {
        (record.name, str(record.exc_info[1])): record.exc_info[2]
        for record in caplog.records
        if record.exc_info is not None and record.exc_info[1] is not None
    }
    assert failures.keys() == {
        ("bisca.web", "a handler's own failure"),
        ("aiohttp.server", "a failure past the middleware"),
    }, failures
    assert "Traceback" in caplog.text and all(failures.values())


class KeptRecords(logging.Handler):
    """A log handler that keeps the records, and sets ``line`` at each."""

    def __init__(self, line: asyncio.Event | None = None) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.line = line

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if self.line is not None:
            self.line.set()


def test_malformed_requests_are_said_once_an_interval() -> None:
    """The counts are said by a timer, one line per interval at most, each counting what came
    since the line before; a failure that is not the parser's passes at once, as it was."""
    summary = logging.getLogger("tests.web.malformed-count")
    summary.propagate = False
    passed = KeptRecords()

    async def scenario() -> KeptRecords:
        said = KeptRecords(line := asyncio.Event())
        summary.addHandler(said)
        counted = RequestLog(summary, every_s=0.0)
        counted.logger.addHandler(passed)
        try:
            for refused in (BadStatusLine("x"), LineTooLong("x", "8190")):
                counted.exception("Error handling request from %s", "x", exc_info=refused)
            await asyncio.wait_for(line.wait(), 30)
            line.clear()
            counted.exception("Error handling request from %s", "x", exc_info=BadStatusLine("x"))
            await asyncio.wait_for(line.wait(), 30)
            counted.exception("Unhandled exception", exc_info=RuntimeError("ours"))
            counted.close()  # nothing left to say
        finally:
            counted.logger.removeHandler(passed)
            summary.removeHandler(said)
        return said

    said = [record.getMessage() for record in asyncio.run(scenario()).records]
    assert said == [
        "2 malformed HTTP requests answered 400 since the last count "
        "(1 BadStatusLine, 1 LineTooLong)",
        "1 malformed HTTP requests answered 400 since the last count (1 BadStatusLine)",
    ], said
    assert [str(r.exc_info[1]) for r in passed.records if r.exc_info] == ["ours"]


class PeerTransport(asyncio.Transport):
    """A connection's transport from ``host`` as the cap sees it: what is written, closed."""

    def __init__(self, host: str) -> None:
        super().__init__()
        self.peer = (host, 50000, 0, 0)
        self.written = b""
        self.closed = False

    def get_extra_info(self, name: str, default: object = None) -> object:
        return self.peer if name == "peername" else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        self.closed = True


def test_connections_of_one_ipv6_64_share_one_cap() -> None:
    """Review s56b (4): the cap counted an IPv6 peer by its whole address, so one host with a
    /64 held 64 connections from each of as many addresses as it liked (2,510 descriptors
    from 80 of them).  Its addresses now share one count, as in every other limit per client;
    another /64 has a count of its own, and a connection closed frees its place."""
    cap = ConnectionCap(2)
    connect = cap.protocol_factory(asyncio.Protocol)

    def connection(host: str) -> tuple[asyncio.Protocol, PeerTransport]:
        protocol, transport = connect(), PeerTransport(host)
        protocol.connection_made(transport)
        return protocol, transport

    first, _ = connection("2001:db8:1:2::a")
    connection("2001:db8:1:2:ffff::b")
    _, refused = connection("2001:db8:1:2::c")
    assert refused.closed and refused.written.startswith(b"HTTP/1.1 429 "), refused.written
    assert b"2001:db8:1:2::/64 already has 2 connections open" in refused.written
    _, other = connection("2001:db8:1:3::a")
    assert not other.closed and cap.open_from("2001:db8:1:3::/64") == 1
    first.connection_lost(None)
    _, freed = connection("2001:db8:1:2::d")
    assert not freed.closed and cap.open_from("2001:db8:1:2::/64") == 2


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
def test_the_caps_per_client_count_a_real_ipv6_peer_by_its_64(tmp_path: Path) -> None:
    """The app on ``[::1]``: a table past the tables per client, and a connection past the
    connections per client, are refused naming ``::/64``, the peer's /64 (they counted
    ``::1``).  A table of the same /64 is open already, as one opened from ``::2`` is kept."""

    async def scenario() -> tuple[bytes, bytes]:
        data = tmp_path / "data"
        Store.in_directory(data).close()
        async with data_backend(data) as backend:
            # No launcher: a table past the cap is refused before any would be needed.
            tables = Tables(backend, None, "", TableLimits(per_client=1))  # type: ignore[arg-type]
            tables.tables["t-2"] = Table(
                id="t-2", token="t", game="belote", seat=0, match_id="m-2", seats=[], client="::/64"
            )
            options = WebOptions(connections_per_client=1)
            async with serving_web(backend, tables, "::1", 0, options) as url:
                port = int(url.rstrip("/").rsplit(":", 1)[1])
                body = json.dumps(TABLE).encode()
                table = await answer_of(
                    port,
                    b"POST /api/tables HTTP/1.1\r\nHost: [::1]:%d\r\nConnection: close\r\n"
                    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                    % (port, len(body), body),
                    "::1",
                )
                # (the server counted that connection's end before its client read the end)
                async with aiohttp.ClientSession() as session:
                    async with session.get(f"{url}api/info") as held:
                        assert held.status == 200  # its connection stays open, kept alive
                    connection = await answer_of(port, b"", "::1")
            return table, connection

    table, connection = asyncio.run(scenario())
    assert table.startswith(b"HTTP/1.1 429 ") and b"1 tables of yours (::/64)" in table, table
    assert connection.startswith(b"HTTP/1.1 429 "), connection
    assert b"::/64 already has 1 connections open" in connection, connection
