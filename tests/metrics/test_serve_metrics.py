"""``bisca serve --metrics``: a real server's page, scraped before and after real matches of
bots as processes, moves exactly as the matches' logs say."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bisca.server.datadir import log_file
from bisca.server.logs import read_log
from bisca.v1 import arena_pb2 as pb
from tests.support.arena import Arena, clock, start_arena, stop_arena
from tests.support.waiting import poll_until

from .scrape import scrape, total


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Arena, str]]:
    arena, _ = start_arena(tmp_path_factory.mktemp("metrics"), "--metrics", "127.0.0.1:0")
    assert arena.process.stdout is not None
    lines = [arena.process.stdout.readline() for _ in range(2)]
    url = next(line.split("metrics on ", 1)[1].strip() for line in lines if "metrics on" in line)
    yield arena, url
    stop_arena(arena)


def _match(arena: Arena, *behaviour: str, **fields: object) -> tuple[pb.MatchInfo, Path]:
    """A Belote deal: seat 0 a rogue bot behaving so, the others random sample bots."""
    names = []
    rogue_name, rogue_token = arena.register("rogue")
    arena.rogue(rogue_token, *behaviour)
    names.append(rogue_name)
    for _ in range(3):
        name, token = arena.register("filler")
        arena.sample_bot(token, "random", "belote")
        names.append(name)
    match_id = arena.create(
        "belote", names, seed=11, settings=pb.GameSettings(belote={"deals": 1}), **fields
    )
    info = arena.wait(match_id)
    assert info.status == pb.MATCH_STATUS_FINISHED
    return info, log_file(arena.data_dir / "matches" / match_id, match_id)


def test_the_counters_move_as_the_match_log_says(served: tuple[Arena, str]) -> None:
    arena, url = served
    before = scrape(url)
    # Two illegal answers before the legal one on every request: rejected, then accepted.
    info, path = _match(arena, "illegal=2", clock=clock(2000, 2000))
    after = scrape(url)
    log = read_log(path)
    steps = [entry.step for entry in log.entries() if entry.WhichOneof("kind") == "step"]
    rejected = sum(len(step.rejected) for step in steps)

    def moved(name: str, **labels: str) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    assert steps and rejected == 2 * sum(1 for s in steps if s.seat == 0 and not s.substituted)
    assert moved("bisca_decisions_total", game="belote") == len(steps) == info.steps
    assert moved("bisca_decisions_total", source="default") == sum(s.substituted for s in steps)
    assert moved("bisca_rejections_total") == rejected
    assert moved("bisca_decision_seconds_count", game="belote") == len(steps)
    assert moved("bisca_matches_finished_total", game="belote") == 1
    assert moved("bisca_matches_failed_total") == 0
    assert total(after, "bisca_matches_running") == 0
    assert moved("bisca_log_bytes_written_total") == path.stat().st_size
    # The match's four bots stay connected between matches (its seats' bots are the server's).
    assert total(after, "bisca_bots_connected") >= 4


def test_a_bot_that_never_answers_times_out_and_forfeits(served: tuple[Arena, str]) -> None:
    arena, url = served
    before = scrape(url)
    info, path = _match(arena, "never_answer", clock=clock(100, 0, "forfeit"))
    after = scrape(url)
    assert info.results[0].end == pb.SEAT_END_FORFEITED
    steps = [e.step for e in read_log(path).entries() if e.WhichOneof("kind") == "step"]
    assert total(after, "bisca_timeouts_total") - total(before, "bisca_timeouts_total") == 1
    forfeits = total(after, "bisca_forfeits_total", cause="timeouts")
    assert forfeits - total(before, "bisca_forfeits_total", cause="timeouts") == 1
    defaults = total(after, "bisca_decisions_total", source="default")
    assert defaults - total(before, "bisca_decisions_total", source="default") == sum(
        s.substituted for s in steps
    )


def test_connected_bots_fall_when_they_leave(served: tuple[Arena, str]) -> None:
    arena, url = served
    for bot in arena.bots:
        bot.kill()
        bot.wait()
    poll_until(
        "no bot connected",
        lambda: total(scrape(url), "bisca_bots_connected") == 0 or None,
        30,
        interval=0.1,
    )
