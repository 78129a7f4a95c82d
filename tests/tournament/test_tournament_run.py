"""Tournaments for real: the ``bisca`` command, an in-process arena, bots as processes."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bisca.engine import GAMES
from bisca.engine.belote import BeloteState
from bisca.server.cli import main
from bisca.server.datadir import log_file
from bisca.server.errors import StoreUnavailable
from bisca.server.logs import read_log
from bisca.server.store import Store, TournamentRepository
from tests.support.commands import BISCA, bisca
from tests.support.waiting import poll_until

from .support import tournament_text


def query(data: Path, sql: str, *values: object) -> list[tuple]:
    db = sqlite3.connect(f"file:{data / 'bisca.sqlite3'}?mode=ro", uri=True)
    try:
        return db.execute(sql, values).fetchall()
    finally:
        db.close()


@dataclass
class Played:
    data: Path
    output: str


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """One run of two tournaments, both games, through the command line."""
    tmp = tmp_path_factory.mktemp("tournaments")
    belote = tmp / "belote.toml"
    belote.write_text(tournament_text(name="tb", per_pairing=4, duplicate=True, concurrency=3))
    bestia = tmp / "bestia.toml"
    bestia.write_text(
        tournament_text(
            "bestia",
            name="tx",
            per_pairing=2,
            settings="seats = 4\nrounds = 1",
            bots=(("greedy", "greedy"), ("random", "random"), ("other", "random")),
            concurrency=3,
        )
    )
    data = tmp / "data"
    done = bisca("tournament", "run", str(belote), str(bestia), "--data", str(data))
    assert done.returncode == 0, done.stdout + done.stderr
    yield Played(data, done.stdout)


def test_tournaments_of_both_games_play_every_planned_match(played: Played) -> None:
    counts = dict(
        query(
            played.data,
            "SELECT game, count(*) FROM matches WHERE status = 'finished' GROUP BY game",
        )
    )
    # Belote: 1 pairing x 4; Bestia: 3 bots in pairs over 4 seats, 3 pairings x 2.
    assert counts == {"belote": 4, "bestia": 6}
    assert query(played.data, "SELECT count(*) FROM matches WHERE status != 'finished'") == [(0,)]
    planned = query(
        played.data, "SELECT tournament, count(*) FROM tournament_matches GROUP BY tournament"
    )
    assert sorted(planned) == [("tb", 4), ("tx", 6)]
    store = Store.in_directory(played.data)
    belote = {row.bot: row.matches for row in store.ratings.leaderboard("belote")}
    bestia = {row.bot: row.matches for row in store.ratings.leaderboard("bestia")}
    store.close()
    assert belote == {"greedy": 4, "random": 4}
    assert bestia == {"greedy": 4, "random": 4, "other": 4}
    output = played.output
    assert "4 of 4 planned matches played" in output and "6 of 6 planned" in output
    assert "leaderboards" in output and "belote leaderboard" in output
    assert "bestia leaderboard" in output and ".binlog" in output
    assert "[##############################] 6/6 (100%)" in output  # the progress bar
    for match_id in ("tb-0001", "tx-0006"):
        assert log_file(played.data / "matches" / match_id, match_id).exists()
    bots = played.data / "bot-logs" / "tb"
    assert f"bot logs: {bots}/;" in output  # the folder it prints is where they are
    assert sorted(p.name for p in bots.iterdir()) == [
        "greedy.stderr.log",
        "greedy.stdout.log",
        "random.stderr.log",
        "random.stdout.log",
    ]


def test_duplicate_deals_give_every_bot_every_hand(played: Played) -> None:
    rows = query(
        played.data,
        "SELECT t.slot, t.seed, t.bots, m.id FROM tournament_matches t"
        " JOIN matches m ON m.id = t.match_id WHERE t.tournament = 'tb' ORDER BY t.slot",
    )
    assert len(rows) == 4
    settings = GAMES["belote"].settings({"deals": 1})
    for first in (0, 2):
        deal_set = rows[first : first + 2]
        seeds = set()
        held: dict[str, set[tuple[str, ...]]] = {"greedy": set(), "random": set()}
        for _, seed, bots_text, match_id in deal_set:
            header = read_log(log_file(played.data / "matches" / match_id, match_id)).header
            assert header is not None and header.seed == seed
            seeds.add(header.seed)
            bots = json.loads(bots_text)
            assert [s.bot_name for s in header.seats] == bots
            # The cards the engine deals from that seed: each seat's first five, and the
            # team a bot sat in.
            state = BeloteState(settings, header.seed)
            for _, event in state.all_events():
                if type(event).__name__ == "CardsDealt":
                    held[bots[event.seat]].add(tuple(sorted(map(str, event.cards))))
        assert len(seeds) == 1, "a duplicate set is one deal"
        # Over the set each bot held all four hands: both of its own seats and the others'.
        assert len(held["greedy"]) == len(held["random"]) == 4
        assert held["greedy"] == held["random"]
    assert rows[0][1] != rows[2][1], "two sets, two deals"


def test_leaderboard_command_reads_the_store(played: Played) -> None:
    table = bisca("leaderboard", "--game", "bestia", "--data", str(played.data))
    words = " ".join(table.stdout.split())  # the caption wraps where the terminal ends
    assert table.returncode == 0, table.stderr
    assert "mean chips per match" in words and "won minus paid" in words, table.stdout
    assert "bestia head to head" in table.stdout
    as_json = json.loads(
        bisca(
            "leaderboard", "--game", "belote", "--data", str(played.data), "--format", "json"
        ).stdout
    )
    rows = {row["bot"]: row for row in as_json["rows"]}
    assert set(rows) == {"greedy", "random"}
    # Two bots, one team each: every match is one's win and the other's loss, or a draw.
    greedy, random = rows["greedy"], rows["random"]
    assert greedy["wins"] + greedy["draws"] + greedy["losses"] == greedy["matches"] == 4
    assert (greedy["wins"], greedy["draws"]) == (random["losses"], random["draws"])
    assert greedy["mean_margin"] == pytest.approx(-random["mean_margin"])
    versus = as_json["head_to_head"]["greedy"]["random"]
    assert (versus["wins"], versus["losses"]) == (greedy["wins"], greedy["losses"])
    as_csv = bisca("leaderboard", "--game", "belote", "--data", str(played.data), "--format", "csv")
    header = as_csv.stdout.splitlines()[0]
    assert header.startswith("rank,bot,conservative,mu,sigma")
    assert "wins,draws,losses,mean_margin,crashes,timeouts,illegal_moves,defaults_played" in header
    text = bisca("leaderboard", "--game", "belote", "--data", str(played.data)).stdout
    assert "mean margin" in text and "points = what the bot's team scored" in text
    greedy_line = next(line for line in text.splitlines() if line.split()[1:2] == ["greedy"])
    assert f" {greedy['wins']} " in greedy_line and f" {greedy['losses']} " in greedy_line
    again = bisca(
        "tournament", "run", str(played.data.parent / "belote.toml"), "--data", str(played.data)
    )
    assert again.returncode == 0
    assert "all 4 matches were played already" in again.stdout


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_tournament_killed_with_sigkill_resumes_without_duplicates(tmp_path: Path) -> None:
    planned = 24
    path = tmp_path / "kill.toml"
    path.write_text(
        tournament_text(name="k", per_pairing=planned, settings="deals = 2", concurrency=2)
    )
    data = tmp_path / "data"
    command = ["tournament", "run", str(path), "--data", str(data)]
    process = subprocess.Popen(
        [*BISCA, *command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )

    def counts() -> tuple[int, int]:
        """The matches finished and those under way (waiting or running)."""
        if not (data / "bisca.sqlite3").exists():
            return 0, 0
        try:
            row = query(
                data,
                "SELECT count(*) FILTER (WHERE status = 'finished'),"
                " count(*) FILTER (WHERE status IN ('waiting', 'running')) FROM matches",
            )[0]
        except sqlite3.OperationalError:  # the schema is being created
            return 0, 0
        return int(row[0]), int(row[1])

    def finished() -> int:
        return counts()[0]

    def mid_way() -> bool:
        done, under_way = counts()
        return done >= 4 and under_way >= 1

    # Both slots' matches are alike and end together: the kill waits for a moment when one
    # is under way again, so that there is a match to cut off (not the gap between two).
    poll_until("four matches finished and one under way", mid_way, timeout=60, interval=0.02)
    bots = children_of(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert 4 <= finished() < planned, "kill it mid-way"
    assert len(bots) == 2
    poll_until("the bots die with the tournament", lambda: not any(map(alive, bots)), timeout=5)
    cut = query(data, "SELECT count(*) FROM matches WHERE status IN ('waiting', 'running')")[0][0]

    done = bisca(*command)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resuming:" in done.stdout
    slots = query(
        data,
        "SELECT t.planned_id, t.seed, t.bots, m.id, m.status, m.seed, m.bots"
        " FROM tournament_matches t JOIN matches m ON m.id = t.match_id ORDER BY t.slot",
    )
    assert len(slots) == planned
    for planned_id, seed, bots_text, match_id, status, match_seed, match_bots in slots:
        assert status == "finished"
        assert match_id.startswith(planned_id)
        assert (match_seed, json.loads(match_bots)) == (seed, json.loads(bots_text))
    finished_ids = [row[0] for row in query(data, "SELECT id FROM matches WHERE status='finished'")]
    assert len(finished_ids) == planned
    assert len({match_id.split("-r")[0] for match_id in finished_ids}) == planned
    failed = query(data, "SELECT id, reason FROM matches WHERE status = 'failed'")
    assert len(failed) == cut >= 1, "the matches cut off mid-way were replayed"
    assert all("cut off" in reason for _, reason in failed)
    assert all(f"{match_id}-r2" in finished_ids for match_id, _ in failed)
    assert query(data, "SELECT count(*), count(DISTINCT match_id) FROM rating_history") == [
        (2 * planned, planned)
    ]
    assert query(data, "SELECT bot, matches FROM ratings ORDER BY bot") == [
        ("greedy", planned),
        ("random", planned),
    ]


def test_a_tournament_without_a_seed_keeps_the_one_it_drew(tmp_path: Path) -> None:
    """Its deals come from a seed drawn when it is first run (review 48: derived from the
    name, which every match id shows, a bot computed every hand); run again in its data
    directory it resumes on the same plan, and elsewhere it is dealt anew."""
    path = tmp_path / "secret.toml"
    path.write_text(tournament_text(name="secret", per_pairing=1).replace("seed = 7\n", ""))

    def run_in(data: Path) -> list[int]:
        result = bisca("tournament", "run", str(path), "--data", str(data))
        assert result.returncode == 0, result.stderr
        with Store.in_directory(data) as store:
            stored = store.tournaments.get("secret")
            assert stored is not None and stored.seed is not None
            return [slot.seed for slot in store.tournaments.slots("secret")]

    here = run_in(tmp_path / "here")
    assert run_in(tmp_path / "here") == here  # resumed: nothing to play, no other plan
    assert set(run_in(tmp_path / "elsewhere")).isdisjoint(here)


@pytest.mark.system
def test_a_store_lost_under_a_run_ends_it_in_a_line_and_the_same_command_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review s59a, F2: a SQLite store locked for 8 s by another writer ended a run with a
    nursery's traceback of 98 lines.  It ends in one line naming the store and saying how to
    go on; the same command then plays what is left, nothing twice."""
    path = tmp_path / "locked.toml"
    path.write_text(tournament_text(name="locked", per_pairing=3, concurrency=1))
    data = tmp_path / "data"
    start_attempt = TournamentRepository.start_attempt
    calls = [0]

    def locked_after_two(self: TournamentRepository, *args: Any) -> bool:
        calls[0] += 1
        if calls[0] > 2:
            raise StoreUnavailable(f"the store {data} failed: database is locked")
        return start_attempt(self, *args)

    monkeypatch.setattr(TournamentRepository, "start_attempt", locked_after_two)
    argv = ["tournament", "run", str(path), "--data", str(data), "--no-sandbox"]
    assert main(argv) == 1
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert "database is locked" in said and "continues where it stopped" in said, said
    assert "once the store answers" in said, said
    monkeypatch.setattr(TournamentRepository, "start_attempt", start_attempt)
    assert main(argv) == 0
    with Store.in_directory(data) as store:
        slots = store.tournaments.slots("locked")
        assert len(slots) == 3 and all(slot.status == "finished" for slot in slots), slots
        assert len(store.matches.find(None, None, tournament="locked")) == 3
