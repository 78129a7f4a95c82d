"""League mode: a real ``bisca serve --league`` process pairs the registered bots that connect
(bots as processes) and rates them; operators see the queue, the matches and the leaderboard."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.arena import Arena, start_arena, stop_arena
from tests.support.commands import bisca, sample_bot
from tests.support.waiting import poll_until

BOTS = {"g1": "greedy", "g2": "greedy", "r1": "random", "r2": "random"}


@dataclass
class League:
    """A ``bisca serve --league`` process and the tokens of the bots registered before it."""

    arena: Arena
    tokens: dict[str, str]

    @property
    def stub(self) -> Any:
        return self.arena.stub

    @property
    def admin(self) -> list[tuple[str, str]]:
        return self.arena.auth

    @property
    def data(self) -> Path:
        return self.arena.data_dir

    def launch(self, name: str) -> None:
        self.arena.launch(
            self.tokens[name], *sample_bot(BOTS[name], "belote", "bestia", log_level="WARNING")
        )


@pytest.fixture
def league(tmp_path: Path) -> Iterator[League]:
    store = Store.in_directory(tmp_path / "data")
    tokens = {name: store.bots.add(name) for name in BOTS}
    store.close()
    arena, _ = start_arena(tmp_path, "--league", "belote:deals=1", "bestia:seats=4,rounds=1")
    yield League(arena, tokens)
    stop_arena(arena)


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

    three = poll_until("three bots queued", lambda: len(queued()) == 3 and queued(), interval=0.1)
    assert sorted(three) == ["g1", "g2", "r1"]
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

    rows = poll_until("both leaderboards filled", boards, interval=0.1)
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

    # The server says one line per match started and per match finished.
    server_log = (league.arena.tmp / "server.log").read_text()
    lines = r"bisca\.server\.match\.lines: (\S+): "
    started = re.findall(lines + r"\w+ started, seats ", server_log)
    ended = re.findall(lines + r"finished after \d+ steps: ", server_log)
    assert {m.match_id for m in finished} <= set(ended) <= set(started)
    assert len(started) == len(set(started)) and len(ended) == len(set(ended))

    # The operator's commands: list, show, and a match created by hand, waited for.
    server = ["--address", league.arena.address, "--data", str(league.data)]
    # The league plays on meanwhile: a limit above what it can finish keeps that match listed.
    listed = bisca("matches", "list", "--status", "finished", "--limit", "1000", *server)
    assert listed.returncode == 0, listed.stderr
    assert finished[0].match_id in listed.stdout and "place 1" in listed.stdout
    shown = bisca("matches", "show", finished[0].match_id, *server)
    assert shown.returncode == 0 and shown.stdout.count("  seat ") == 4
    created = bisca(
        "matches", "create", "--game", "belote", *[f"--bot={name}" for name in BOTS],
        "--set", "deals=1", "--seed", "11", "--wait", "--json", *server,
    )  # fmt: skip
    assert created.returncode == 0, created.stdout + created.stderr
    info = json.loads(created.stdout)
    assert info["status"] == "MATCH_STATUS_FINISHED" and info["seed"] == "11"
    assert [seat["botName"] for seat in info["results"]] == list(BOTS)
    unknown = bisca("matches", "show", "m-nope", *server)
    assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stderr
    wrong = bisca("matches", "list", "--address", league.arena.address, "--token", "wrong")
    assert wrong.returncode == 1 and "UNAUTHENTICATED" in wrong.stderr


def test_serve_refuses_a_bad_league(tmp_path: Path) -> None:
    done = bisca("serve", "--data", str(tmp_path), "--league", "belote:deals=0")
    assert done.returncode == 2 and "deals must be 1..1000" in done.stderr
    done = bisca("serve", "--data", str(tmp_path), "--league", "chess")
    assert done.returncode == 2 and "unknown game 'chess'" in done.stderr
