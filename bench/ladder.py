"""A league for strangers: seconds from an upload to an active version (the gate: unpack,
build in the sandbox, check-bot, one validation match), for ``bisca new-bot python``'s
starter, in process; seconds from an upload to its first rated ladder match (the gate and the
ladder running as ``bisca serve`` runs them, a thread and a task, beside three active
versions: Belote needs four); the ladder's matches per hour among 8 active versions with its
one in-process worker, paced without limit (1-deal Belote, duplicate deals, the sandbox); how
fast the ladder draws its pairings among 8 active versions; and, when the league has played a
month of matches, what a draw reads of the store for each version (its pace over the last hour,
its rest over the last week) and what a version's page costs its owner's view (its counts, its
newest matches, its rating history).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import sqlite3
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bisca.engine import GAMES
from bisca.server.accounts import SubmissionLimits, pack_folder, take_submission
from bisca.server.cli import main as bisca
from bisca.server.edge import ServerConfig
from bisca.server.hosting import Gate, Ladder, gate_running, ladder_running
from bisca.server.league import (
    LadderEntrant,
    LadderSettings,
    in_pace_window,
    next_pairing,
    resting,
)
from bisca.server.records import MatchStatus
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import BotVersionRecord, Store, VersionKind, VersionState, stamp
from bisca.server.tournament import running_arena
from bisca.server.web import version_ladder_page


def _upload_to_active(folder: Path) -> float:
    with contextlib.redirect_stdout(io.StringIO()):
        assert bisca(["new-bot", "python", str(folder / "benchbot")]) == 0
    with Store(folder / "data" / "bisca.sqlite3") as store:
        store.accounts.create("bench", "a long enough password")
        limits = SubmissionLimits()
        uploads = folder / "data" / "submissions"
        gate = Gate(store, uploads, limits, SandboxPolicy(), folder / "data" / "gate")
        start = time.perf_counter()
        archive = io.BytesIO(pack_folder(folder / "benchbot"))
        version = take_submission(store, limits, uploads, "bench", archive)
        done = gate.run(version)
        elapsed = time.perf_counter() - start
        assert done.state is VersionState.ACTIVE, store.versions.steps(done.bot, done.version)
    return elapsed


_BELOTE = {"belote": GAMES["belote"].settings({"deals": 1})}
#: As fast as the bench can: no pace, a short look again.
_FAST = LadderSettings(matches_per_hour=10**6, poll_s=0.1)


def _league(folder: Path, versions: int) -> tuple[ServerConfig, list[Path]]:
    """A data directory with ``versions`` active versions of the starter, one per account."""
    data = folder / "data"
    bots = []
    with Store(data / "bisca.sqlite3") as store:
        for index in range(versions):
            with contextlib.redirect_stdout(io.StringIO()):
                assert bisca(["new-bot", "python", str(folder / f"bot{index}")]) == 0
            store.accounts.create(f"owner{index}", "a long enough password")
            archive = io.BytesIO(pack_folder(folder / f"bot{index}"))
            version = take_submission(
                store, SubmissionLimits(), data / "submissions", f"owner{index}", archive
            )
            for state in (VersionState.CHECKING, VersionState.VALIDATING, VersionState.ACTIVE):
                store.versions.move(version.bot, version.version, state)
            bots.append(folder / f"bot{index}")
    config = ServerConfig(data_dir=data, listen=["127.0.0.1:0"], admin_token="b" * 32)
    return config, bots


async def _upload_to_first_rated_match(folder: Path) -> float:
    config, _ = _league(folder, 3)
    with contextlib.redirect_stdout(io.StringIO()):
        assert bisca(["new-bot", "python", str(folder / "newbot")]) == 0
    async with running_arena(config, SandboxPolicy()) as (server, launcher):
        store = server.referee.store
        uploads = config.data_dir / "submissions"
        limits = SubmissionLimits()
        gate = Gate(store, uploads, limits, SandboxPolicy(), config.data_dir / "gate")
        ladder = Ladder(store, uploads, _BELOTE, _FAST)
        with gate_running(gate, poll_s=0.1):
            async with ladder_running(ladder, server, launcher):
                start = time.perf_counter()
                store.accounts.create("newcomer", "a long enough password")
                archive = io.BytesIO(pack_folder(folder / "newbot"))
                take_submission(store, limits, uploads, "newcomer", archive)
                while not store.ratings.history("belote", "newbot.v1"):
                    await asyncio.sleep(0.1)
                return time.perf_counter() - start


async def _matches_per_hour(folder: Path, matches: int) -> float:
    config, _ = _league(folder, 8)
    async with running_arena(config, SandboxPolicy()) as (server, launcher):
        store = server.referee.store
        ladder = Ladder(store, config.data_dir / "submissions", _BELOTE, _FAST)
        played = 0
        start = time.perf_counter()
        while played < matches:
            played += len(await ladder.play_next(server, launcher))
        elapsed = time.perf_counter() - start
        finished = store.matches.find(MatchStatus.FINISHED, None)
        assert len(finished) == played and all(match.rated for match in finished)
    return played * 3600 / elapsed


def _pairings_per_second(seconds: float) -> float:
    rng = random.Random(0)
    entrants = [LadderEntrant(f"bot{i}.v1", f"bot{i}", 15.0 + 2 * i, 2.0, 50, 0) for i in range(8)]
    settings = LadderSettings(matches_per_hour=10**9)
    drawn = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        next_pairing(entrants, 2, settings, rng)
        drawn += 1
    return drawn / (time.perf_counter() - start)


#: A month of a busy league's matches (one every 13 s), among 200 versions.
_HISTORY_MATCHES = 200_000
_HISTORY_VERSIONS = 200


def _history_reads_ms(folder: Path) -> tuple[float, float]:
    """Milliseconds of a draw's reads of one version's matches (its pace and its rest), and of
    its page as its owner sees it, the medians over 8 versions, in a store holding a month of
    matches with their seats."""
    path = folder / "bisca.sqlite3"
    Store(path).close()
    rng = random.Random(0)
    now = datetime.now(UTC)
    month = timedelta(days=30)
    rows, seats = [], []
    for n in range(_HISTORY_MATCHES):
        created = now - month + month * n / _HISTORY_MATCHES
        players = [f"bot{rng.randrange(_HISTORY_VERSIONS)}.v1" for _ in range(4)]
        rows.append(
            (
                f"m-{n}",
                "belote",
                "{}",
                n,
                "finished",
                json.dumps(players),
                "{}",
                stamp(created),
                stamp(created + timedelta(seconds=20)),
            )
        )
        seats += [(f"m-{n}", number, bot, 0, number + 1, 0) for number, bot in enumerate(players)]
    with sqlite3.connect(path) as db:  # written straight: the store's way takes a sync each
        db.executemany(
            "INSERT INTO matches (id, game, settings, seed, status, bots, clock, created_at,"
            " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "INSERT INTO match_seats (match_id, seat, bot_name, score, rank, forfeited)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            seats,
        )
    draws, pages = [], []
    with Store(path) as store:
        for version in range(8):
            start = time.perf_counter()
            in_pace_window(store, f"bot{version}.v1", now)
            resting(store, f"bot{version}.v1", now)
            draws.append(time.perf_counter() - start)
            start = time.perf_counter()
            version_ladder_page(store, _version_record(f"bot{version}", stamp(now)), owner=True)
            pages.append(time.perf_counter() - start)
    return statistics.median(draws) * 1e3, statistics.median(pages) * 1e3


def _version_record(bot: str, at: str) -> BotVersionRecord:
    """Version 1 of ``bot``, active, as the store would hold it."""
    manifest = f'name = "{bot}"\ngames = ["belote"]\nlanguage = "python"\ncommand = "python b.py"\n'
    return BotVersionRecord(
        bot, "ada", 1, VersionKind.HOSTED, "sha256:0", manifest, VersionState.ACTIVE, "", at, at
    )


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    # One upload: the gate takes seconds of two cores, and its parts are each measured already
    # (the sandbox lines, check-bot's own run).
    with tempfile.TemporaryDirectory() as directory:
        gate_s = _upload_to_active(Path(directory))
    with tempfile.TemporaryDirectory() as directory:
        first_s = asyncio.run(_upload_to_first_rated_match(Path(directory)))
    with tempfile.TemporaryDirectory() as directory:
        hourly = asyncio.run(_matches_per_hour(Path(directory), 8))
    drawn = _pairings_per_second(seconds)
    with tempfile.TemporaryDirectory() as directory:
        reads_ms, page_ms = _history_reads_ms(Path(directory))
    return [
        f"ladder: seconds from upload to active (build, check-bot, validation): {gate_s:.1f} s",
        f"ladder: seconds from upload to first rated match: {first_s:.1f} s",
        f"ladder: matches per hour, 8 active versions, 1 worker: {hourly:.0f} /h",
        f"ladder: pairings drawn per second, 8 active versions: {drawn:.0f} /s",
        f"ladder: a draw's reads of one version's matches, 200,000 in the store: {reads_ms:.2f} ms",
        f"ladder: a version's page for its owner, 200,000 matches in the store: {page_ms:.1f} ms",
    ]
