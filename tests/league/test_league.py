"""League mode: a real ``bisca serve --league`` process pairs the registered bots that connect
(bots as processes) and rates them; operators see the queue, the matches and the leaderboard."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc

from .conftest import bisca

BOTS = {"g1": "greedy", "g2": "greedy", "r1": "random", "r2": "random"}


@dataclass
class League:
    process: subprocess.Popen[str]
    address: str
    data: Path
    tokens: dict[str, str]
    admin: list[tuple[str, str]]
    bots: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def stub(self) -> Any:
        return arena_pb2_grpc.ArenaStub(grpc.insecure_channel(self.address))

    def launch(self, name: str) -> None:
        env = {**os.environ, "BISCA_ADDRESS": self.address, "BISCA_TOKEN": self.tokens[name]}
        command = [sys.executable, "-m", "bisca.server.cli", "bot", BOTS[name]]
        command += ["--game", "belote", "--game", "bestia", "--log-level", "WARNING"]
        self.bots.append(
            subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


@pytest.fixture
def league(tmp_path: Path) -> Iterator[League]:
    data = tmp_path / "data"
    store = Store.in_directory(data)
    tokens = {name: store.add_bot(name) for name in BOTS}
    store.close()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bisca.server.cli",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--data",
            str(data),
            "--league",
            "belote:deals=1",
            "bestia:seats=4,rounds=1",
        ],
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "server.log", "w"),  # noqa: SIM115 (kept for the server's life)
        text=True,
    )
    assert process.stdout is not None
    found = re.search(r"serving on (\S+?)[;,]", process.stdout.readline())
    assert found, (tmp_path / "server.log").read_text()
    token = (data / "admin.token").read_text().strip()
    arena = League(process, found.group(1), data, tokens, [("authorization", f"Bearer {token}")])
    yield arena
    for bot in arena.bots:
        bot.kill()
        bot.wait()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0, (tmp_path / "server.log").read_text()[-2000:]


def test_league_mode_pairs_connected_bots_and_rates_them(league: League) -> None:
    stub = league.stub
    listing = stub.ListMatches(pb.ListMatchesRequest(), metadata=league.admin, timeout=10)
    assert list(listing.queue) == [] and list(listing.matches) == []

    # Three bots cannot fill a table of four: they wait in the queue, in the order they came.
    for name in ("g1", "r1", "g2"):
        league.launch(name)

    def queued() -> list[str]:
        listing = stub.ListMatches(pb.ListMatchesRequest(), metadata=league.admin, timeout=10)
        return [entry.bot_name for entry in listing.queue]

    assert sorted(wait_for("three bots queued", lambda: len(queued()) == 3 and queued())) == [
        "g1",
        "g2",
        "r1",
    ]
    listing = stub.ListMatches(pb.ListMatchesRequest(), metadata=league.admin, timeout=10)
    assert list(listing.matches) == []
    assert set(listing.queue[0].games) == {pb.GAME_BELOTE, pb.GAME_BESTIA}
    assert listing.queue[0].waiting_since.endswith("Z")

    # The fourth makes a table: matches of both games follow, rated as they finish.
    league.launch("r2")

    def boards() -> dict[int, Any] | None:
        rows = {
            game: stub.GetLeaderboard(
                pb.GetLeaderboardRequest(game=game), metadata=league.admin, timeout=10
            ).rows
            for game in (pb.GAME_BELOTE, pb.GAME_BESTIA)
        }
        ready = all(len(r) == 4 and min(row.matches for row in r) >= 2 for r in rows.values())
        return rows if ready else None

    rows = wait_for("both leaderboards filled", boards)
    for game_rows in rows.values():
        assert {row.bot_name for row in game_rows} == set(BOTS)
        assert [row.rank for row in game_rows] == [1, 2, 3, 4]
        conservative = [row.conservative for row in game_rows]
        assert conservative == sorted(conservative, reverse=True)
        for row in game_rows:
            assert row.conservative == pytest.approx(row.mu - 3 * row.sigma)
            assert row.sigma < 25 / 3
            assert row.HasField("ci_half_width")
    matches = stub.ListMatches(pb.ListMatchesRequest(), metadata=league.admin, timeout=10).matches
    assert {m.game for m in matches} == {pb.GAME_BELOTE, pb.GAME_BESTIA}
    for match in matches:
        assert sorted(match.bots) == sorted(BOTS), "four different bots at every table"
    finished = [m for m in matches if m.status == pb.MATCH_STATUS_FINISHED]
    assert len(finished) >= 4
    assert all(len(m.results) == 4 for m in finished)

    # The same standings from the store, and the RPC needs the admin token.
    table = bisca("leaderboard", "--game", "belote", "--data", str(league.data))
    assert table.returncode == 0 and all(name in table.stdout for name in BOTS)
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetLeaderboard(pb.GetLeaderboardRequest(game=pb.GAME_BELOTE), timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as bad:
        stub.GetLeaderboard(pb.GetLeaderboardRequest(game=99), metadata=league.admin, timeout=10)
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_serve_refuses_a_bad_league(tmp_path: Path) -> None:
    done = bisca("serve", "--data", str(tmp_path), "--league", "belote:deals=0")
    assert done.returncode == 2 and "deals must be 1..1000" in done.stderr
    done = bisca("serve", "--data", str(tmp_path), "--league", "chess")
    assert done.returncode == 2 and "unknown game 'chess'" in done.stderr
