"""In-process matches (``bisca.client.local``): the arena's requests and hooks, seeded
reproducibility, strict answers, and logs that ``bisca replay`` verifies."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from bisca.client import MatchEnd, MatchStart, Request
from bisca.client.local import IllegalAnswer, MalformedAnswer, Player, play_match
from bisca.engine import GAMES, belote
from bisca.server.cli._replay import EXIT_OK, EXIT_UNTRUSTED, verify_logs
from bisca.server.logs import ServerKey, log_frames, read_log, verify

SEATS = {"belote": ["greedy", "random", "greedy", "random"], "bestia": ["greedy"] + ["random"] * 4}
SHORT = {"belote": {"deals": 1}, "bestia": {"seats": 5, "rounds": 1}}


def first(request: Request[Any, Any]) -> Any:
    return request.legal_actions[0]


@pytest.mark.parametrize("game", sorted(SEATS))
def test_a_seeded_match_is_the_same_match_every_time(game: str) -> None:
    one = play_match(game, SEATS[game], settings=SHORT[game], seed=11)
    two = play_match(game, SEATS[game], settings=SHORT[game], seed=11)
    assert one.scores == two.scores and one.steps == two.steps > 0
    assert one.names == tuple(SEATS[game]) and one.match_id == f"local-{game}-11"
    assert sum(play_match(game, SEATS[game], settings=SHORT[game], seed=s).steps for s in (1, 2))


@pytest.mark.parametrize("game", sorted(SEATS))
def test_every_request_is_the_arena_s_request_of_that_moment(game: str) -> None:
    """Kept requests (their observation built when the callback returns) and read ones are the
    observation and legal actions of the state they were made in."""
    kept: list[Request[Any, Any]] = []
    read: list[Any] = []

    def keeper(request: Request[Any, Any]) -> Any:
        kept.append(request)  # kept, never read here: built when the callback returns
        return request.legal_actions[-1]

    def reader(request: Request[Any, Any]) -> Any:
        read.append(request.observation)
        return request.legal_actions[0]

    seats: list[Any] = [keeper, reader] * 2 + ([reader] if game == "bestia" else [])
    result = play_match(game, seats, settings=SHORT[game], seed=4)
    # Replay the engine with the same actions and compare each seat's view.
    state = GAMES[game].new_match(result.state.settings, 4)
    kept_views = iter(kept)
    read_views = iter(read)
    while (seat := state.to_act) is not None:
        if seat % 2 == 0 and seat != 4:
            request = next(kept_views)
            assert isinstance(request, Request) and request.seat == seat
            assert request.observation == state.observation(seat)
            assert request.legal_actions == tuple(state.legal_actions())
            assert dataclasses.replace(request, attempt=2).observation == request.observation
            state.apply(request.legal_actions[-1])
        else:
            assert next(read_views) == state.observation(seat)
            state.apply(state.legal_actions()[0])
    assert state.outcome == result.outcome


def test_hooks_see_the_start_every_event_of_their_seat_and_the_end() -> None:
    seen: list[Any] = []

    def on_event(match_id: str, seat: int, event: Any) -> None:
        seen.append(event)

    starts: list[MatchStart] = []
    ends: list[MatchEnd] = []
    player = Player(first, "mine", on_match_start=starts.append, on_event=on_event)
    watcher = Player(first, on_match_end=ends.append)
    result = play_match("belote", [player, "random", watcher, first], settings=SHORT["belote"])
    assert starts[0].seat == 0 and starts[0].seats[0].bot_name == "mine"
    assert seen == result.state.events_for(0)
    assert isinstance(seen[-1], belote.MatchEnded)
    assert ends[0].seat == 2 and [s.score for s in ends[0].seats] == list(result.scores)
    assert result.names == ("mine", "random", "seat2", "first")


def test_an_illegal_answer_stops_the_match_naming_the_seat_and_the_rule(tmp_path: Path) -> None:
    def cheater(request: Request[Any, Any]) -> Any:
        observation = request.observation
        if observation.phase is belote.Phase.PLAYING:
            held = set(observation.hand)
            return belote.PlayCard(next(c for c in belote.DECK if c not in held))
        return request.legal_actions[0]

    log = tmp_path / "m.binlog"
    refusal = r"seat (\d) \(cheater\) at step \d+: seat \1 does not hold"
    with pytest.raises(IllegalAnswer, match=refusal):
        play_match("belote", ["greedy", cheater, "greedy", cheater], seed=2, log=log)
    assert not log.exists() and (tmp_path / "m.binlog.partial").exists()
    with pytest.raises(MalformedAnswer, match=r"seat 0 .* str is not a belote action"):
        play_match("belote", [lambda request: "pass", first, first, first])


def test_a_bot_s_exception_comes_out_as_it_is() -> None:
    def broken(request: Request[Any, Any]) -> Any:
        raise KeyError("my bug")

    with pytest.raises(KeyError, match="my bug"):
        play_match("bestia", [first, first, broken, first], settings={"seats": 4})


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown game 'poker'"):
        play_match("poker", [])
    with pytest.raises(ValueError, match="has 4 seats, got 3"):
        play_match("belote", [first] * 3)
    with pytest.raises(ValueError, match="no bot 'clever'"):
        play_match("belote", ["clever"] * 4)
    with pytest.raises(TypeError, match="seat 2: a Player"):
        play_match("belote", [first, first, 3, first])  # type: ignore[list-item]


@pytest.mark.parametrize("game", sorted(SEATS))
def test_the_log_replays_in_bisca_replay(game: str, tmp_path: Path, capsys: Any) -> None:
    key = ServerKey.generate()
    unsigned = play_match(game, SEATS[game], settings=SHORT[game], seed=5, log=tmp_path / "u")
    signed = play_match(
        game, SEATS[game], settings=SHORT[game], seed=5, log=tmp_path / "s", signer=key.sign
    )
    assert unsigned.log == tmp_path / "u" and unsigned.log_hash
    verdict = verify(tmp_path / "u")
    assert verdict.ok and verdict.complete and verdict.steps == unsigned.steps
    assert "not signed" in verdict.untrusted
    assert verify(tmp_path / "s", key.public).trusted
    assert verify_logs([tmp_path / "s"], key.public) == EXIT_OK
    assert verify_logs([tmp_path / "u"]) == EXIT_UNTRUSTED
    frames = list(log_frames(read_log(tmp_path / "s").entries(), None))
    assert any(frame.step == signed.steps - 1 for frame in frames)
    assert "OK" in capsys.readouterr().out
    with pytest.raises(FileExistsError, match="not written over"):
        play_match(game, SEATS[game], settings=SHORT[game], seed=5, log=tmp_path / "u")
