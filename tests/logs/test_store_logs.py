"""``bisca replay verify|show MATCH_ID --store URL`` judges the log the store keeps for that
match: real matches played into a real PostgreSQL store, whose rows are then changed as
someone with a hand on the database could."""

from __future__ import annotations

import psycopg
import pytest

from bisca.server.cli import EXIT_OK, EXIT_UNTRUSTED, main
from tests.support.commands import bisca
from tests.support.postgres import PostgresServer
from tests.tournament.support import tournament_text

pytestmark = pytest.mark.postgres

GREEDY = (("g1", "greedy"), ("g2", "greedy"))


@pytest.fixture(scope="module")
def played(postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store holding two real matches, ``s-0001`` and ``s-0002``, with their logs."""
    folder = tmp_path_factory.mktemp("store-logs")
    url = postgres.new_database()
    path = folder / "s.toml"
    path.write_text(tournament_text(name="s", per_pairing=2, bots=GREEDY, extra="sandbox = false"))
    done = bisca("tournament", "run", str(path), "--store", url, "--data", str(folder / "data"))
    assert done.returncode == 0, done.stdout + done.stderr
    return url


def test_the_stored_logs_verify(played: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "verify", "s-0001", "s-0002", "--store", played]) == EXIT_OK
    assert capsys.readouterr().out.count(": OK,") == 2


def test_another_matchs_log_in_a_matchs_place_is_untrusted(
    played: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """s-0002's whole row (its bytes, hash and key) copied over s-0001's: the log verifies
    and is the one on record for s-0002, but it is not s-0001's."""
    with psycopg.connect(played, autocommit=True) as db:
        original = db.execute(
            "SELECT data, log_hash FROM match_logs WHERE match_id = 's-0001'"
        ).fetchone()
        assert original is not None
        db.execute(
            "UPDATE match_logs SET (data, log_hash) = (SELECT data, log_hash FROM match_logs"
            " WHERE match_id = 's-0002') WHERE match_id = 's-0001'"
        )
        try:
            assert main(["replay", "verify", "s-0001", "--store", played]) == EXIT_UNTRUSTED
            out = capsys.readouterr().out
            said = "UNTRUSTED: match s-0002: this is the log of match s-0002, put in the place of"
            assert said in out, out
            main(["replay", "show", "s-0001", "--store", played])
            assert (
                "UNTRUSTED: match s-0002: this is the log of match s-0002"
                in capsys.readouterr().out
            )
        finally:
            db.execute(
                "UPDATE match_logs SET data = %s, log_hash = %s WHERE match_id = 's-0001'",
                original,
            )


def test_a_result_changed_in_the_store_is_untrusted(
    played: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The winner and the loser of s-0001 swapped in ``match_seats`` (what the leaderboard
    and the standings count): its signed log says otherwise, and verify says so."""
    swap = "UPDATE match_seats SET score = -score, rank = 1 - rank WHERE match_id = 's-0001'"
    with psycopg.connect(played, autocommit=True) as db:
        db.execute(swap)
        try:
            assert main(["replay", "verify", "s-0001", "--store", played]) == EXIT_UNTRUSTED
            out = capsys.readouterr().out
            assert "the store records another result for match s-0001 than its signed log" in out
        finally:
            db.execute(swap)
    assert main(["replay", "verify", "s-0001", "--store", played]) == EXIT_OK


def test_a_match_id_that_is_a_path_is_refused(
    played: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The id names the folder the stored log is written in, for the replay to read: a path
    (``../x``) is refused before the store is asked."""
    assert main(["replay", "verify", "../../escape", "--store", played]) == 2
    assert "'../../escape' is not a match id" in capsys.readouterr().err
