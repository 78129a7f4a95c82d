"""Calls made while the server's PostgreSQL store is down (operator re-test): each gRPC call
answered ``UNKNOWN: Unexpected <class StoreError>`` and each web request 500, each logging a
40-line traceback, which a health check polling once a second turned into a flood.  Now a call
that needs the store answers UNAVAILABLE (gRPC) or 503 with ``Retry-After`` (web), saying the
store is not reachable; the log says once per front that the store is lost and once that it
answers again, without a traceback; and once the store is back the calls answer again."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from bisca.server.edge import operator
from bisca.v1 import arena_pb2 as pb
from tests.support.arena import Arena, start_server, stop_arena
from tests.support.postgres import PostgresServer
from tests.support.waiting import poll_until
from tests.web.support import app_url, socket_send

#: A match the store has no record of: asking for it reads the store, and nothing caches it.
NO_MATCH = "m-nothing"
#: What each front calls itself in the log.
FRONTS = ("the gRPC service", "the web app")
#: Calls made during the outage, each of which used to log a traceback.
CALLS_DURING_THE_OUTAGE = 5


def _list_matches(arena: Arena) -> grpc.RpcError | pb.ListMatchesResponse:
    try:
        response: pb.ListMatchesResponse = arena.stub.ListMatches(
            pb.ListMatchesRequest(limit=5), metadata=arena.auth, timeout=30
        )
        return response
    except grpc.RpcError as problem:
        return problem


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as problem:
        return problem.code, dict(problem.headers), problem.read()


def _the_store_is_lost(arena: Arena) -> grpc.RpcError | None:
    answer = _list_matches(arena)
    return answer if isinstance(answer, grpc.RpcError) else None


def _said_back(log: Path) -> str | None:
    """The server's log, once it says of both fronts that the store answers again."""
    said = log.read_text()
    return said if all(f"{front}: the store answers again" in said for front in FRONTS) else None


@pytest.fixture
def served(postgres: PostgresServer, tmp_path: Path) -> Iterator[tuple[Arena, str]]:
    """``bisca serve`` on a PostgreSQL store, with the browser app: the arena, the app's URL."""
    url = postgres.new_database()
    data = tmp_path / "league-data"
    arena, _ = start_server(
        tmp_path,
        data,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"],
        *["--store", url, "--data", str(data)],
    )
    try:
        yield arena, app_url(arena)
    finally:
        stop_arena(arena)


def test_calls_during_a_store_outage_are_unavailable_without_a_traceback(
    served: tuple[Arena, str], postgres: PostgresServer
) -> None:
    arena, http = served
    assert isinstance(_list_matches(arena), pb.ListMatchesResponse)
    assert _get(f"{http}/api/matches/{NO_MATCH}")[0] == 404
    postgres.stop("immediate")
    try:
        refused = poll_until("the store to be found lost", lambda: _the_store_is_lost(arena))
        assert refused.code() == grpc.StatusCode.UNAVAILABLE, refused
        assert refused.details() == operator.STORE_LOST
        for _ in range(CALLS_DURING_THE_OUTAGE):
            again = _the_store_is_lost(arena)
            assert again is not None and again.code() == grpc.StatusCode.UNAVAILABLE
            status, headers, body = _get(f"{http}/api/matches/{NO_MATCH}")
            assert status == 503, body
            assert headers["Retry-After"].isdigit(), headers
            assert body == b'{"error": "%s"}' % operator.STORE_LOST.encode()
        # A finished match's watch reads the store too: refused the same way on either front.
        with pytest.raises(grpc.RpcError) as watch:
            request = pb.WatchMatchRequest(match_id=NO_MATCH)
            list(arena.stub.WatchMatch(request, metadata=arena.auth, timeout=30))
        assert watch.value.code() == grpc.StatusCode.UNAVAILABLE, watch.value
        spectator = (arena.data_dir / "spectator.token").read_text().strip()
        socket = f"{http.replace('http://', 'ws://')}/api/matches/{NO_MATCH}/watch"
        [refusal] = socket_send(socket, [{"token": spectator, "request": {}}])
        assert refusal == {"error": operator.STORE_LOST, "status": 503}
    finally:
        postgres.start()
    poll_until("gRPC calls to answer again", lambda: _the_store_is_lost(arena) is None)
    poll_until("the web to answer again", lambda: _get(f"{http}/api/matches/{NO_MATCH}")[0] == 404)
    said = poll_until(
        "both fronts to say the store answers again", lambda: _said_back(arena.tmp / "server.log")
    )
    assert "Traceback" not in said and "Unexpected" not in said, said[-3000:]
    for front in FRONTS:
        assert said.count(f"{front}: lost the store") == 1, said[-3000:]
        assert said.count(f"{front}: the store answers again") == 1, said[-3000:]
