"""``bisca serve --metrics``: a real server's page, scraped before and after a real match of
bots as processes, moves exactly as the match's log says."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bisca.server.datadir import log_file
from bisca.server.logs import read_log
from bisca.v1 import arena_pb2 as pb
from tests.support.arena import Arena, clock, start_arena, stop_arena
from tests.support.waiting import poll_until

from .scrape import Samples, scrape, total


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Arena, str]]:
    arena, _ = start_arena(tmp_path_factory.mktemp("metrics"), "--metrics", "127.0.0.1:0")
    assert arena.process.stdout is not None
    lines = [arena.process.stdout.readline() for _ in range(2)]
    url = next(line.split("metrics on ", 1)[1].strip() for line in lines if "metrics on" in line)
    yield arena, url
    stop_arena(arena)


def test_the_counters_move_as_the_match_log_says(served: tuple[Arena, str]) -> None:
    """Seat 0 sends two illegal answers before each legal one, seat 1 never answers (and
    forfeits, the policy being ``forfeit``), seats 2 and 3 are random sample bots."""
    arena, url = served
    names = []
    for behaviour in ("illegal=2", "never_answer"):
        name, token = arena.register("rogue")
        arena.rogue(token, behaviour)
        names.append(name)
    for _ in range(2):
        name, token = arena.register("filler")
        arena.sample_bot(token, "random", "belote")
        names.append(name)
    before = scrape(url)
    match_id = arena.create(
        "belote",
        names,
        seed=11,
        settings=pb.GameSettings(belote={"deals": 1}),
        clock=clock(300, 1000, "forfeit"),
    )
    poll_until(
        "the match counted running",
        lambda: total(scrape(url), "bisca_matches_running", game="belote") == 1 or None,
        60,
        interval=0.05,
    )
    info = arena.wait(match_id)
    after = scrape(url)
    assert info.status == pb.MATCH_STATUS_FINISHED
    path = log_file(arena.data_dir / "matches" / match_id, match_id)
    steps = [e.step for e in read_log(path).entries() if e.WhichOneof("kind") == "step"]

    def moved(name: str, **labels: str) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    asked = [s for s in steps if s.request_id]
    timed_out = [s for s in steps if "no legal action within" in s.substitution_reason]
    forfeited = [r for r in info.results if r.end == pb.SEAT_END_FORFEITED]
    assert steps and len(steps) == info.steps
    assert moved("bisca_decisions_total", game="belote") == len(steps)
    assert moved("bisca_decisions_total", source="default") == sum(s.substituted for s in steps)
    assert moved("bisca_decision_seconds_count", game="belote") == len(asked)
    rejected = sum(len(s.rejected) for s in steps)
    assert rejected >= 2 and moved("bisca_rejections_total") == rejected
    assert moved("bisca_rejections_total", code="REJECT_CODE_ILLEGAL_ACTION") == rejected
    assert len(timed_out) >= 1 and moved("bisca_timeouts_total") == len(timed_out)
    assert moved("bisca_forfeits_total") == len(forfeited) >= 1
    assert moved("bisca_matches_finished_total", game="belote") == 1
    assert moved("bisca_matches_failed_total") == 0
    assert total(after, "bisca_matches_running") == 0
    assert moved("bisca_log_bytes_written_total") == path.stat().st_size
    assert total(after, "bisca_bots_connected") == 4
    _connected_bots_fall_when_they_leave(arena, url)


def _connected_bots_fall_when_they_leave(arena: Arena, url: str) -> None:
    for bot in arena.bots:
        bot.kill()
        bot.wait()

    def none_connected(samples: Samples) -> bool:
        return total(samples, "bisca_bots_connected") == 0

    poll_until("no bot connected", lambda: none_connected(scrape(url)) or None, 30, interval=0.1)


def test_every_games_failure_series_is_there_before_its_first_failure(
    served: tuple[Arena, str],
) -> None:
    """Review s59c, F5: a counter born with its first event left the documented failure
    ratio (failed over finished) with no data on a healthy league."""
    _, url = served
    samples = scrape(url)
    for game in ("belote", "bestia"):
        for name in ("bisca_matches_failed_total", "bisca_matches_finished_total"):
            assert (name, frozenset({("game", game)})) in samples, (name, game)
        for source in ("bot", "default"):
            labels = frozenset({("game", game), ("source", source)})
            assert ("bisca_decisions_total", labels) in samples, (game, source)
    for cause in ("timeouts", "rejections", "bot_gone"):
        assert ("bisca_forfeits_total", frozenset({("cause", cause)})) in samples, cause
