"""Attacks on what the web shows of a match: a live deal's seed, and replays as a CPU weapon.

A seed deals every hidden hand, so no interface may show it while a match dealt from it is not
over: the HTTP list and detail, ``bisca web`` over the same data directory, the replay of a
finished duplicate-deal twin, gRPC.  And the public replay endpoint, asked many times at once,
must not starve the bots of a live match.  Each against real ``bisca serve --http`` processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bisca import wire
from bisca.engine import GAMES
from bisca.server.store import Store
from bisca.server.web import Problem, _replays
from bisca.v1 import arena_pb2 as pb
from tests.support.arena import Arena, clock, start_server, stop_arena
from tests.support.commands import BISCA
from tests.support.waiting import poll_until

from .support import app_url, call

#: A finished match of the league the package's data directory holds (its twin is dealt here).
FINISHED = "web-league-0001"
#: Another one, dealt from another seed: its seed stays public.
OTHER = "web-league-0002"
#: Replay requests sent at once, in each of a few waves, while a match of quick bots is live.
REPLAY_REQUESTS = 24
#: The live match's bank: a seat times out only if its reply waits this long (and its 300 ms
#: move) for the server, as it would behind replays built on the referee's loop.
STARVED_MS = 5_000


@pytest.fixture
def own_site(data_dir: Path, tmp_path: Path) -> Iterator[tuple[Arena, str]]:
    """``bisca serve --http`` on a copy of the league's data (its tables stay its own)."""
    data = tmp_path / "data"
    shutil.copytree(data_dir, data)
    arena, _ = start_server(
        tmp_path,
        data,
        *["-v", "serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(data)],
    )
    url = app_url(arena)
    try:
        yield arena, url
    finally:
        stop_arena(arena)


@contextlib.contextmanager
def bisca_web(data: Path) -> Iterator[str]:
    """``bisca web`` over ``data`` (no arena of its own); yields its URL."""
    process = subprocess.Popen(
        [*BISCA, "web", "--data", str(data), "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("browser app on http://"), line + (
            process.stderr.read() if process.stderr else ""
        )
        yield line.split()[3].rstrip("/")
    finally:
        process.terminate()
        process.wait(timeout=15)


def _seed_of(data: Path, match_id: str) -> int:
    with Store.in_directory(data) as store:
        record = store.matches.get(match_id)
    assert record is not None
    return record.seed


def _shown_seeds(url: str, running: str, state: str = "running") -> dict[str, str]:
    """Every seed a web app shows of the match not over (listed among those ``state``) and of
    the finished twin and other."""
    shown: dict[str, str] = {}
    status, listed = call(f"{url}/api/matches?status={state}")
    assert status == 200, listed
    matches = {info["matchId"]: info for info in listed["list"]["matches"]}
    assert running in matches, f"{running} is not listed as {state}: {listed}"
    shown["list running"] = matches[running]["seed"]
    status, listed = call(f"{url}/api/matches?pageSize=100")
    assert status == 200, listed
    every = {info["matchId"]: info["seed"] for info in listed["list"]["matches"]}
    shown["list twin"] = every[FINISHED]
    for match_id, what in ((running, "detail running"), (FINISHED, "detail twin")):
        status, detail = call(f"{url}/api/matches/{match_id}")
        assert status == 200, detail
        shown[what] = detail["match"]["seed"]
    status, detail = call(f"{url}/api/matches/{OTHER}")
    assert status == 200, detail
    shown["other"] = detail["match"]["seed"]
    return shown


def _open_table(url: str, seed: int) -> str:
    """A person's table dealt from ``seed``, running (the bots join, the person's turn
    waits): its id."""
    table = {
        "request": {
            "game": "GAME_BELOTE",
            "settings": {"belote": {"deals": 1}},
            "bots": ["", "greedy", "random", "greedy"],
            "seed": str(seed),
        }
    }
    status, opened = call(f"{url}/api/tables", table)
    assert status == 201, opened
    return str(opened["matchId"])


def _wait_running(arena: Arena, match_id: str) -> None:
    poll_until(
        f"{match_id} running",
        lambda: arena.info(match_id).status == pb.MATCH_STATUS_RUNNING,
        timeout=30,
    )


def test_no_interface_shows_a_seed_a_live_match_is_dealt_from(
    own_site: tuple[Arena, str],
) -> None:
    arena, url = own_site
    seed = _seed_of(arena.data_dir, FINISHED)
    other_seed = _seed_of(arena.data_dir, OTHER)
    assert seed != other_seed and seed != 0
    # The operator deals a match from the finished match's seed (its bots never join: it
    # waits), and the finished match is now its duplicate-deal twin.
    name, _ = arena.register("twin")
    running = arena.create("belote", [name] * 4, seed=seed, join_timeout_ms=600_000)
    assert arena.info(running).status == pb.MATCH_STATUS_WAITING
    expected = {
        "list running": "0",
        "list twin": "0",
        "detail running": "0",
        "detail twin": "0",
        "other": str(other_seed),
    }
    # The arena's own app; and bisca web over its data directory, which sees the match
    # waiting in the store.
    assert _shown_seeds(url, running, "waiting") == expected
    with bisca_web(arena.data_dir) as data_url:
        assert _shown_seeds(data_url, running, "waiting") == expected
        status, refused = call(f"{data_url}/api/matches/{FINISHED}/replay")
        assert (
            status == 403
            and f"match {running} is being played with the same deal" in (refused["error"])
        )
    status, refused = call(f"{url}/api/matches/{FINISHED}/replay")
    assert (
        status == 403
        and f"match {running} is being played with the same deal" in (refused["error"])
    )
    # gRPC: even the admin's GetMatch and ListMatches hold the seed back.
    assert arena.info(running).seed == 0
    assert arena.info(FINISHED).seed == 0
    assert arena.info(OTHER).seed == other_seed
    listed = arena.stub.ListMatches(pb.ListMatchesRequest(limit=1000), metadata=arena.auth)
    seeds = {info.match_id: info.seed for info in listed.matches}
    assert (seeds[running], seeds[FINISHED], seeds[OTHER]) == (0, 0, other_seed)


def test_a_persons_table_dealt_from_a_finished_matchs_seed_keeps_no_replay_closed(
    own_site: tuple[Arena, str],
) -> None:
    """Review 48: a visitor chose a finished match's (public) seed for a table, and that
    match's replay answered 403 while the table ran, again and again at will.  The table's
    own seed stays hidden while it runs; the finished match's seed and replay stay open."""
    arena, url = own_site
    seed = _seed_of(arena.data_dir, FINISHED)
    other_seed = _seed_of(arena.data_dir, OTHER)
    running = _open_table(url, seed)
    _wait_running(arena, running)
    expected = {
        "list running": "0",
        "list twin": str(seed),
        "detail running": "0",
        "detail twin": str(seed),
        "other": str(other_seed),
    }
    assert _shown_seeds(url, running) == expected
    with bisca_web(arena.data_dir) as data_url:
        assert _shown_seeds(data_url, running) == expected
        status, replay = call(f"{data_url}/api/matches/{FINISHED}/replay")
        assert status == 200, replay
    status, replay = call(f"{url}/api/matches/{FINISHED}/replay")
    assert status == 200 and replay["match"]["matchId"] == FINISHED, replay
    assert (arena.info(running).seed, arena.info(FINISHED).seed) == (0, seed)


def _replay_lines(arena: Arena, match_id: str) -> list[re.Match[str]]:
    text = (arena.tmp / "server.log").read_text()
    pattern = rf"replay of {match_id} built \((\d+) built, at most (\d+) at once of (\d+)\)"
    return list(re.finditer(pattern, text))


def test_replays_asked_at_once_are_built_once_a_few_at_a_time_and_starve_no_match(
    own_site: tuple[Arena, str],
) -> None:
    arena, url = own_site
    names = []
    for _ in range(4):
        name, token = arena.register("quick")
        arena.sample_bot(token, "greedy", "belote")
        names.append(name)
    live = arena.create(
        "belote",
        names,
        settings=wire.encode_game_settings("belote", GAMES["belote"].settings({"deals": 8})),
        # A timeout is a stall of the server's loop of seconds (replays built on it, one after
        # another), not a quick bot waiting for a core: a bank of 600 ms once saw one on a
        # loaded 2-core machine (CI, 2026-12-07), the bot's own wait, not the server's.
        clock=clock(move_ms=300, bank_ms=STARVED_MS, policy="strikes", strikes=100),
    )
    replayed = [FINISHED, OTHER, "web-league-0003"]

    def ask(match_id: str) -> tuple[int, Any]:
        return call(f"{url}/api/matches/{match_id}/replay")

    answers: list[tuple[int, Any]] = []
    with ThreadPoolExecutor(REPLAY_REQUESTS) as pool:
        for _ in range(3):  # waves while the match is played
            answers += pool.map(ask, [replayed[i % 3] for i in range(REPLAY_REQUESTS)])
    ended = arena.wait(live)
    assert ended.status == pb.MATCH_STATUS_FINISHED, ended
    assert [seat.timeouts for seat in ended.results] == [0, 0, 0, 0]
    assert {status for status, _ in answers} == {200}
    for match_id in replayed:
        lines = _replay_lines(arena, match_id)
        assert len(lines) == 1, f"the replay of {match_id} was built {len(lines)} times"
    every = [line for match_id in replayed for line in _replay_lines(arena, match_id)]
    assert all(int(line.group(2)) <= int(line.group(3)) for line in every)


@pytest.mark.system  # the replays are built in a worker process
def test_replays_beyond_the_waiting_bound_get_503_and_a_built_one_is_kept(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_replays, "BUILDERS", 1)
    monkeypatch.setattr(_replays, "WAITING", 2)
    match_ids = [f"web-league-000{n}" for n in range(1, 7)]

    async def ask_all() -> tuple[list[object], _replays.Replays]:
        replays = _replays.Replays()
        try:

            async def ask(match_id: str) -> object:
                path = data_dir / "matches" / match_id / f"{match_id}.binlog"
                key = _replays.replay_key(match_id, None, path)
                try:
                    return await replays.replay(key, path, None, {})
                except Problem as problem:
                    return problem

            answers = list(await asyncio.gather(*(ask(m) for m in match_ids)))
            # Asked again, the first is kept: no new build.
            answers.append(await ask(match_ids[0]))
            return answers, replays
        finally:
            replays.close()

    answers, replays = asyncio.run(ask_all())
    # One building, two waiting for it; the three after them are refused, saying why.
    refused = [answer for answer in answers if isinstance(answer, Problem)]
    assert [problem.status for problem in refused] == [503, 503, 503]
    assert all("replays are waiting to be built" in problem.message for problem in refused)
    assert [isinstance(answer, dict) for answer in answers] == [True] * 3 + [False] * 3 + [True]
    assert (replays.built, replays.most_at_once) == (3, 1)
