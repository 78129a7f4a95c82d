"""The soak run's end checks (``bench/soak_checks.py``) on a small store of their own: a
tournament played for real into PostgreSQL passes them, and each kind of damage a long run
could leave is named."""

from __future__ import annotations

from pathlib import Path

import psycopg

from bench.soak_checks import check_store
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
