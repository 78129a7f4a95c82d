"""A finished match of a PostgreSQL league replayed and watched from the store the server runs
on (operator re-test: the web app read the data directory's SQLite file, "cannot read the
store league-data/bisca.sqlite3: unable to open database file").

The matches are played into the league's database by a tournament run on a data directory of
its own, as a worker of the league plays them on its machine: the serving machine has none of
their log files, only the copies the store keeps (``match_logs``).  Its replay, the web's
watch of it and gRPC's ``WatchMatch`` read that copy; ``bisca web --store URL`` serves it too.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bisca.server.records import MatchStatus
from bisca.server.store import open_store
from bisca.server.web import data_backend, serving_web
from bisca.v1 import arena_pb2 as pb
from tests.support.arena import Arena, start_server, stop_arena
from tests.support.commands import bisca
from tests.support.postgres import PostgresServer
from tests.tournament.support import tournament_text

from .support import app_url, call, socket_send


@dataclass(frozen=True)
class League:
    """A PostgreSQL league whose matches another machine played, served by ``bisca serve``."""

    url: str
    played_in: Path
    arena: Arena
    http: str


@dataclass(frozen=True)
class Finished:
    """A finished match of the league, and the key its log was signed with, as the store
    records it (the machine that played it: not the serving machine's)."""

    match_id: str
    signed_by: str


@pytest.fixture(scope="module")
def league(postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    url = postgres.new_database()
    folder = tmp_path_factory.mktemp("pg-replay")
    spec = folder / "league.toml"
    spec.write_text(tournament_text(name="pg", per_pairing=1, concurrency=1))
    played_in = folder / "worker-data"
    run = bisca("tournament", "run", str(spec), "--store", url, "--data", str(played_in))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    # That machine's disk is not this one's: its log files are out of reach.
    shutil.rmtree(played_in / "matches")
    serving = folder / "league-data"
    arena, _ = start_server(
        folder,
        serving,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"],
        *["--store", url, "--data", str(serving)],
    )
    try:
        yield League(url, played_in, arena, app_url(arena))
    finally:
        stop_arena(arena)


def _finished_match(league: League) -> Finished:
    with open_store(league.url, league.played_in) as store:
        [match, *_] = store.matches.find(MatchStatus.FINISHED, None)
        kept = store.logs.get(match.id)
    assert kept is not None and kept.public_key  # the store keeps its log and its signer
    # On no disk the server can read: only the store has it.
    assert not (league.arena.data_dir / "matches" / match.id).exists()
    assert match.log_path and not Path(match.log_path).exists()
    return Finished(match.id, kept.public_key)


def _is_the_replay_of(body: dict[str, Any], finished: Finished) -> None:
    verdict = body["verdict"]
    assert verdict["ok"] and verdict["complete"], verdict
    # Trusted by the key the store records for the log, as `bisca replay verify --store` is.
    assert verdict["trusted"] is True and verdict["signedBy"] == finished.signed_by, verdict
    match_id = finished.match_id
    assert verdict["lines"][0].startswith(f"{match_id}.binlog: OK"), verdict
    assert body["header"]["matchId"] == match_id
    assert body["match"]["status"] == "MATCH_STATUS_FINISHED"
    assert len(body["frames"]) > 1 and body["frames"][-1]["decision"] is None


def test_the_replay_of_a_finished_match_is_read_from_the_postgresql_store(
    league: League,
) -> None:
    finished = _finished_match(league)
    status, body = call(f"{league.http}/api/matches/{finished.match_id}/replay")
    assert status == 200, body
    _is_the_replay_of(body, finished)
    assert "bisca-log-" not in str(body)  # the temporary copy is named by its file alone


def test_a_finished_match_is_watched_from_the_postgresql_store(league: League) -> None:
    match_id = _finished_match(league).match_id
    spectator = (league.arena.data_dir / "spectator.token").read_text().strip()
    watch = f"{league.http.replace('http://', 'ws://')}/api/matches/{match_id}/watch"
    [first] = socket_send(watch, [{"token": spectator, "request": {}}])
    assert "update" in first, first
    updates = list(
        league.arena.stub.WatchMatch(
            pb.WatchMatchRequest(match_id=match_id, omniscient=True),
            metadata=league.arena.auth,
            timeout=60,
        )
    )
    assert updates and any(update.HasField("events") for update in updates), updates


def test_bisca_web_given_the_league_store_replays_its_matches(
    league: League, tmp_path: Path
) -> None:
    finished = _finished_match(league)
    asked = f"api/matches/{finished.match_id}/replay"

    async def replay() -> tuple[int, Any]:
        async with (
            data_backend(tmp_path / "elsewhere", league.url) as backend,
            serving_web(backend, None, "127.0.0.1", 0) as url,
        ):
            return await asyncio.to_thread(call, f"{url}{asked}")

    status, body = asyncio.run(replay())
    assert status == 200, body
    _is_the_replay_of(body, finished)
