"""The soak run's end checks (``bench/soak_checks.py``) on a small store of their own: a
tournament played for real into PostgreSQL passes them (its matches taken as a ladder's
rotations for the ladder's checks), and each kind of damage a long run could leave is
named."""

from __future__ import annotations

from pathlib import Path

import psycopg

from bench.soak_checks import QueuedPairing, check_ladder, check_store
from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.store import open_store
from tests.support.commands import bisca
from tests.support.postgres import PostgresServer
from tests.tournament.support import tournament_text


def test_the_checks_pass_a_sound_store_and_name_each_damage(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    path = tmp_path / "t.toml"
    bots = (("g1", "greedy"), ("g2", "greedy"), ("r1", "random"))
    path.write_text(tournament_text(name="t", per_pairing=1, bots=bots))
    done = bisca("tournament", "run", str(path), "--store", url, "--data", str(tmp_path / "d"))
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(url, tmp_path) as store:
        sound = check_store(store, ["t"])
        assert sound.ok, sound.problems
        assert sound.planned == sound.recorded == sound.logs_verified == sound.ratings_replayed
        assert sound.planned > 1
        first, second = (str(slot.match_id) for slot in store.tournaments.slots("t")[:2])
    with psycopg.connect(url) as db:
        db.execute("UPDATE ratings SET mu = mu + 0.5 WHERE bot = 'g1'")
        cut = "UPDATE match_logs SET data = substring(data from 1 for 200) WHERE match_id = %s"
        db.execute(cut, [first])
        # A second finished attempt of a planned match: recorded twice.
        db.execute(
            "INSERT INTO matches (id, game, settings, seed, status, bots, clock, created_at,"
            " finished_at) SELECT %s || '-r2', game, settings, seed, status, bots, clock,"
            " created_at, finished_at FROM matches WHERE id = %s",
            [second, second],
        )
    with open_store(url, tmp_path) as store:
        damaged = check_store(store, ["t", "missing"])
    text = "\n".join(damaged.problems)
    assert "g1 rated" in text
    assert f"match {first}: its log does not verify" in text
    assert f"finished attempts ['{second}', '{second}-r2']" in text
    assert "tournament missing: not in the store" in text


def test_the_ladder_checks_pass_a_sound_store_and_name_each_damage(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """Rated matches played for real, each taken as the one rotation of a queued ladder
    pairing (the checks know a rotation by its game, its deal's seed and its seating)."""
    url = postgres.new_database()
    path = tmp_path / "t.toml"
    bots = (("g1", "greedy"), ("g2", "greedy"), ("r1", "random"))
    path.write_text(tournament_text(name="t", per_pairing=2, bots=bots))
    done = bisca("tournament", "run", str(path), "--store", url, "--data", str(tmp_path / "d"))
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(url, tmp_path) as store:
        matches = sorted(store.matches.find(MatchStatus.FINISHED, None), key=lambda m: m.id)
    assert len(matches) >= 4
    first, second, third, *rest = matches

    def pairing(job: int, status: str, *played: MatchRecord) -> QueuedPairing:
        seatings = tuple(tuple(match.bots) for match in played)
        return QueuedPairing(
            job, status, False, played[0].game, seatings[0], played[0].seed, seatings
        )

    # The tournament's matches do not share seeds: a pairing per match, one seating each.
    queued = [pairing(n, "succeeded", match) for n, match in enumerate(matches)]
    with open_store(url, tmp_path) as store:
        sound = check_ladder(store, queued)
    assert sound.ok, sound.problems
    assert (
        sound.rotations == sound.recorded == sound.finished == sound.logs_verified == len(matches)
    )
    assert sound.ratings_replayed == len(matches)
    assert sound.incidents and all(seen.matches > 0 for seen in sound.incidents.values())

    unplayed = (*first.bots[1:], first.bots[0])
    damaged_queue = [
        # A rotation never played beside one recorded, and a job its dead worker still holds.
        QueuedPairing(90, "doing", False, first.game, tuple(first.bots), first.seed,
                      (tuple(first.bots), unplayed)),
        *(pairing(n, "succeeded", match) for n, match in enumerate(rest)),
    ]  # fmt: skip
    with psycopg.connect(url) as db:
        copy = (
            "INSERT INTO matches (id, game, settings, seed, status, bots, clock, created_at,"
            " finished_at, rated) SELECT %s, game, settings, seed, %s, bots, clock, created_at,"
            " finished_at, rated FROM matches WHERE id = %s"
        )
        # Recorded twice; an attempt left running; one failed without a reason.
        db.execute(copy, [f"{rest[0].id}-again", "finished", rest[0].id])
        db.execute(copy, [f"{rest[0].id}-open", "running", rest[0].id])
        db.execute(copy, [f"{rest[0].id}-failed", "failed", rest[0].id])
    with open_store(url, tmp_path) as store:
        damaged = check_ladder(store, damaged_queue)
    text = "\n".join(damaged.problems)
    assert "ladder job 90 ('" in text
    assert "still doing at the end (its worker gone), lost; 1 of its 2 rotations never" in text
    assert f"recorded 2 times: ['{rest[0].id}', '{rest[0].id}-again']" in text
    assert f"match {rest[0].id}-open: left running (created " in text
    assert f"match {rest[0].id}-failed: failed, without a reason" in text
    # The matches of the pairings no longer queued.
    assert f"match {second.id} " in text and f"match {third.id} " in text
    assert damaged.dropped == 1
