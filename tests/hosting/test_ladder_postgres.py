"""The ladder of a PostgreSQL league: ``bisca serve`` queues its pairings as procrastinate jobs
and ``bisca worker`` (a process of its own, its own data directory) plays them, rated, in
the shared store, launching the hosted versions from the serving machine's files."""

from __future__ import annotations

from pathlib import Path

from bisca.server.records import MatchStatus
from bisca.server.store import open_store
from tests.support.arena import start_server, stop_arena
from tests.support.league import PASSWORD, active_version, starter_bot
from tests.support.postgres import PostgresServer
from tests.support.waiting import poll_until
from tests.tournament.test_distributed import Workers

BOTS = ("ada", "bob", "cy", "dee")


def test_bisca_worker_plays_the_ladder_a_postgresql_league_queues(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    data = tmp_path / "league"
    with open_store(url, data) as store:
        for name in BOTS:
            store.accounts.create(name, PASSWORD)
            active_version(store, data / "submissions", name, starter_bot(tmp_path / f"{name}bot"))
    workers = Workers(url, tmp_path)
    arena, _ = start_server(
        tmp_path,
        data,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(data)],
        *["--store", url, "--registration", "open", "--league", "belote:deals=1"],
        *[
            "--ladder",
            "matches_per_hour=1",
            "--ladder",
            "duplicate=false",
            "--ladder",
            "poll_s=0.5",
        ],
    )
    try:
        worker = workers.start("w1")
        with open_store(url, tmp_path / "reader") as store:

            def rated() -> list[str] | None:
                found = store.matches.find(MatchStatus.FINISHED, None)
                return [match.id for match in found if match.rated] or None

            [match_id, *_] = poll_until("the worker plays a ladder match", rated, timeout=240)
            match = store.matches.get(match_id)
            assert match is not None
            assert sorted(match.bots) == [f"{name}bot.v1" for name in BOTS]
            assert {update.bot for update in store.ratings.history("belote")} == set(match.bots)
        # Its bots' stderr is on the worker's disk, beside its copy of the match.
        assert (tmp_path / "w1" / "matches" / match_id / "seat0.stderr.log").is_file()
        assert "job failed" not in worker.output()
    finally:
        workers.stop()
        stop_arena(arena)
