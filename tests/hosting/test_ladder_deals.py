"""The deals of a ladder pairing's rotations: sealed until the last rotation is over, never
handed twice to a version that can remember them, and never left recorded as waiting."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest

import bisca.server.hosting._ladder as ladder_module  # its runnable_copy, patched
from bisca.engine import GAMES
from bisca.server.accounts import LeagueAccounts, Registration, SubmissionLimits, connect_version
from bisca.server.edge import ServerConfig
from bisca.server.hosting import Ladder
from bisca.server.hosting._ladder import DrawnPairing, LadderJob, rotation_seeds
from bisca.server.league import (
    FAILING_STREAK,
    UNPLAYED_LADDER_ROTATION,
    LadderPairing,
    LadderSettings,
    Resting,
    not_played_ladder_match,
    resting,
    unplayed_ladder_rotation,
)
from bisca.server.records import MatchStatus
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import BotVersionRecord, Store
from bisca.server.tournament import running_arena
from bisca.server.web import Backend, serving_web
from tests.support.league import PASSWORD, active_version, starter_bot

NAMES = ("ada", "bob", "cy", "dee")
ONE_DEAL = {"belote": GAMES["belote"].settings({"deals": 1})}
DUPLICATE = LadderSettings(matches_per_hour=50, newcomer_matches=1, duplicate=True)


def _hosted(tmp: Path, store: Store, uploads: Path) -> None:
    for name in NAMES:
        store.accounts.create(name, PASSWORD)
        active_version(store, uploads, name, starter_bot(tmp / f"{name}bot"))


def _rotations(versions: list[BotVersionRecord]) -> DrawnPairing:
    players = tuple(version.player for version in versions)
    seatings = tuple(players[i:] + players[:i] for i in range(len(players)))
    by_player = {version.player: version for version in versions}
    return DrawnPairing("belote", LadderPairing(players, 1234, seatings), by_player)


def test_a_pairing_with_a_connected_version_deals_each_rotation_its_own_deal(
    tmp_path: Path,
) -> None:
    """A connected version runs on its owner's machine: it could remember the deal of one
    rotation (every card is played) and know every hand in the next.  Hosted versions start
    afresh in the sandbox at every match, with nothing kept: they share one deal."""
    with Store(tmp_path / "bisca.sqlite3") as store:
        uploads = tmp_path / "submissions"
        _hosted(tmp_path, store, uploads)
        hosted = [store.versions.get(f"{name}bot", 1) for name in NAMES]
        assert all(version is not None for version in hosted)
        hosted_only = _rotations([v for v in hosted if v is not None])
        assert rotation_seeds(hosted_only) == [1234] * 4

        store.accounts.create("eve", PASSWORD)
        connected, _ = connect_version(store, SubmissionLimits(), "eve", "evebot")
        mixed = _rotations([*[v for v in hosted[:3] if v is not None], connected])
        seeds = rotation_seeds(mixed)
        assert len(set(seeds)) == 4 and 1234 not in seeds
        assert seeds == rotation_seeds(mixed), "a pairing played again deals the same deals"
        assert all(0 <= seed < 2**63 for seed in seeds)


def _fetch(url: str) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.system
def test_no_rotations_end_shows_the_deal_before_the_last_rotation_is_over(tmp_path: Path) -> None:
    """Every rotation is recorded, waiting, before the first plays: between two rotations
    the public API seals the seed of the one just over and refuses its replay (its frames
    hold every hand, the cards of the rotations still to play); after the last, both show."""
    between: list[tuple[int, object, int]] = []
    after: list[tuple[object, int]] = []

    async def scenario() -> list[str]:
        data = tmp_path / "data"
        config = ServerConfig(data_dir=data, listen=["127.0.0.1:0"], admin_token="t" * 32)
        async with running_arena(config, SandboxPolicy()) as (server, launcher):
            store = server.referee.store
            uploads = data / "submissions"
            _hosted(tmp_path, store, uploads)
            backend = Backend.of_server(server)
            backend.accounts = LeagueAccounts(store, Registration.OPEN, uploads=uploads)
            ladder = Ladder(store, uploads, ONE_DEAL, DUPLICATE, random.Random(11))
            async with serving_web(backend, None, "127.0.0.1", 0) as url:
                keep = ladder.keep_output

                def keep_then_look(match_id: str, match_dir: Path, seats: list[int]) -> None:
                    keep(match_id, match_dir, seats)
                    _, info = _fetch(f"{url}api/matches/{match_id}")
                    replay, _ = _fetch(f"{url}api/matches/{match_id}/replay")
                    record = store.matches.get(match_id)
                    assert record is not None
                    between.append((record.seed, info["match"]["seed"], replay))  # type: ignore[index]

                ladder.keep_output = keep_then_look  # type: ignore[method-assign]
                played = await ladder.play_next(server, launcher)
                for match_id in played:  # (asked from a thread: the web answers on this loop)
                    _, info = await asyncio.to_thread(_fetch, f"{url}api/matches/{match_id}")
                    replay, _ = await asyncio.to_thread(
                        _fetch, f"{url}api/matches/{match_id}/replay"
                    )
                    after.append((info["match"]["seed"], replay))  # type: ignore[index]
                return played

    played = asyncio.run(scenario())
    assert len(played) == 4 and len({seed for seed, _, _ in between}) == 1  # one deal
    seed = between[0][0]
    # The last rotation's own end has no twin left: only the first three are sealed.
    assert [(shown, replay) for _, shown, replay in between[:3]] == [("0", 403)] * 3
    assert after == [(str(seed), 200)] * 4


@pytest.mark.system
def test_rotations_a_pairing_could_not_play_are_marked_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rotations are recorded ahead; when the pairing stops before playing them (here a
    version's files cannot be copied out), none is left waiting: each is failed, saying why."""

    def lost_files(*_: object) -> object:
        raise OSError("the version's files are gone")

    monkeypatch.setattr(ladder_module, "runnable_copy", lost_files)

    async def scenario() -> list[MatchStatus | str]:
        data = tmp_path / "data"
        config = ServerConfig(data_dir=data, listen=["127.0.0.1:0"], admin_token="t" * 32)
        async with running_arena(config, SandboxPolicy()) as (server, launcher):
            store = server.referee.store
            _hosted(tmp_path, store, data / "submissions")
            ladder = Ladder(store, data / "submissions", ONE_DEAL, DUPLICATE, random.Random(3))
            drawn = await asyncio.to_thread(ladder.draw, {})
            assert drawn is not None
            with pytest.raises(OSError, match="files are gone"):
                await ladder.play_pairing(server, launcher, drawn)
            deal = store.matches.find(None, None, game="belote", seed=drawn.pairing.seed)
            assert len(deal) == 4
            return [match.status for match in deal] + [match.reason for match in deal]

    outcome = asyncio.run(scenario())
    # Each says what stopped the pairing (finding 3: hundreds of rows said only that it
    # stopped), and is still not counted as played.
    said = unplayed_ladder_rotation("the version's files are gone")
    assert outcome == [MatchStatus.FAILED] * 4 + [said] * 4
    assert not_played_ladder_match(said)


def test_a_ladder_job_names_its_submissions_folder_absolutely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 3: ``--data league-data`` queued ``league-data/submissions``, and a worker
    started in another working directory failed every job: the job names the folder from the
    root, as the serving machine sees it when it queues."""
    monkeypatch.chdir(tmp_path)
    drawn = _rotations([])
    job = LadderJob.of(drawn, ONE_DEAL["belote"], Path("league-data") / "submissions")
    assert job.uploads == str(tmp_path / "league-data" / "submissions")


@pytest.mark.system
def test_a_version_that_dies_before_its_matches_fails_them_and_rests(tmp_path: Path) -> None:
    """A version whose process ends before the match starts fails the match; the match's
    reason is public (its info, the listings), its stderr its owner's alone: the reason says
    which seat's bot ended, the stderr is kept for the owner's page only.  Review 52: the
    failed rotation ends its pairing (the next would fail the same way: a connected version
    gone offline held the ladder a join timeout per rotation), and a version whose bot fails
    its last three matches before they start rests (never rated, it stayed a newcomer, the
    anchor of every pairing, and stopped the whole ladder); its page says until when."""

    async def scenario() -> tuple[list[tuple[str, bytes]], list[object], Resting | None]:
        data = tmp_path / "data"
        config = ServerConfig(data_dir=data, listen=["127.0.0.1:0"], admin_token="t" * 32)
        async with running_arena(config, SandboxPolicy()) as (server, launcher):
            store = server.referee.store
            uploads = data / "submissions"
            for name in (*NAMES, "eve"):
                store.accounts.create(name, PASSWORD)
                folder = starter_bot(tmp_path / f"{name}bot")
                if name == "ada":
                    (folder / "my_bot.py").write_text(
                        "import sys\nsys.stderr.write('ada owner-only secret\\n')\nsys.exit(3)\n"
                    )
                active_version(store, uploads, name, folder)
            ladder = Ladder(store, uploads, ONE_DEAL, DUPLICATE, random.Random(7))
            kept, pairings = [], []
            for _ in range(FAILING_STREAK):
                # ada's version, never rated, is the anchor of every pairing while it plays.
                [match_id] = await ladder.play_next(server, launcher)
                record = store.matches.get(match_id)
                assert record is not None and record.status is MatchStatus.FAILED
                seat = record.bots.index("adabot.v1")
                kept.append((record.reason, store.logs.output(match_id)[seat].stderr))
                deal = store.matches.find(None, None, game="belote", seed=record.seed)
                pairings.append(sorted((match.status, match.reason) for match in deal))
            rest = resting(store, "adabot.v1", datetime.now(UTC))
            # The ladder plays on without it: four bots are left, all of them starting.
            played = await ladder.play_next(server, launcher)
            records = [store.matches.get(match_id) for match_id in played]
            assert len(records) == 4
            assert all(m is not None and m.status is MatchStatus.FINISHED for m in records)
            assert all("adabot.v1" not in m.bots for m in records if m is not None)
            return kept, pairings, rest

    kept, pairings, rest = asyncio.run(scenario())
    assert len(kept) == FAILING_STREAK
    for said, stderr in kept:
        assert "before the match started" in said and "secret" not in said, said
        assert b"ada owner-only secret" in stderr
    for pairing, (said, _) in zip(pairings, kept, strict=True):  # one played, three not
        unplayed = (MatchStatus.FAILED, UNPLAYED_LADDER_ROTATION)
        assert pairing == sorted([(MatchStatus.FAILED, said), *[unplayed] * 3])
    assert rest is not None and rest.streak == FAILING_STREAK
    assert rest.reason.startswith(
        "waiting: its bot failed its last 3 matches before they started (the last, m-"
    )
    assert "secret" not in rest.reason


def test_a_ladder_draws_its_deals_from_the_systems_randomness(tmp_path: Path) -> None:
    """Review 48: the seeds finished pairings reveal came from one Mersenne Twister, whose
    state its outputs rebuild: the next pairings' seeds could be foreseen."""
    with Store.in_directory(tmp_path / "data") as store:
        ladder = Ladder(store, tmp_path / "data" / "submissions", ONE_DEAL)
        assert isinstance(ladder.rng, random.SystemRandom)
