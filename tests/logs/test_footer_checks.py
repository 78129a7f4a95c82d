"""What a signed log says of its seats' results is checked against its steps (review 53): a
server's key vouches that the server wrote a log, not that its record agrees with the game, so
``verify`` refuses a footer whose seats are not the header's, whose defaults and illegal moves
are not what the steps show, which gives results for a match the engine has not ended, or which
is followed by more of the match; and a legal action logged as a rejected illegal one."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bisca import wire
from bisca.engine.belote import Suit, Take
from bisca.server.cli import EXIT_DIVERGES, EXIT_OK, main
from bisca.server.logs import LogWriter, ServerKey, verify
from bisca.server.records import MatchStatus
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2
from tests.referee.test_core import Table

KEY = ServerKey.generate()
Forgery = Callable[[list[log_pb2.LogEntry], log_pb2.LogFooter], None]


@pytest.fixture(scope="module")
def played() -> Table:
    """A match in which the first seat's first answer is refused twice (an illegal bid, then
    no action at all) and one seat's clock runs out once."""
    table = Table()
    table.start()
    seat = table.to_act
    table.now += 0.125
    illegal = wire.encode_game_action("belote", Take(suit=Suit.CLUBS))  # seed 11 turns a ♦
    table.take(table.core.reply(seat, illegal, table.now))
    table.take(table.core.reply(seat, pb.GameAction(), table.now))
    table.answer()
    assert table.timer is not None
    table.now = table.timer
    table.take(table.core.deadline_passed(table.now))  # the next seat times out
    table.play_out()
    return table


def _signed(table: Table, folder: Path, forge: Forgery | None = None) -> Path:
    entries = [log_pb2.LogEntry.FromString(e.SerializeToString()) for e in table.log]
    assert table.finished is not None
    footer = table.core.footer(MatchStatus.FINISHED, "", table.finished.results, 1)
    if forge is not None:
        forge(entries, footer)
    path = folder / "m.binlog"
    writer = LogWriter(path, KEY)
    for entry in entries:
        writer.write_entry(entry.SerializeToString(deterministic=True))
    writer.complete(footer)
    return path


def test_the_genuine_log_verifies_with_its_counts(played: Table, tmp_path: Path) -> None:
    verdict = verify(_signed(played, tmp_path), KEY.public)
    assert verdict.ok and verdict.complete and verdict.trusted, verdict.lines()
    assert played.finished is not None
    counts = [(r.illegal_moves, r.defaults_played) for r in played.finished.results]
    assert sorted(counts, reverse=True)[:2] == [(2, 0), (0, 1)]


def _renamed(entries: list[log_pb2.LogEntry], footer: log_pb2.LogFooter) -> None:
    footer.seats[0].bot_name = "nobody"


def _more_illegal_moves(entries: list[log_pb2.LogEntry], footer: log_pb2.LogFooter) -> None:
    footer.seats[1].illegal_moves += 7


def _fewer_defaults(entries: list[log_pb2.LogEntry], footer: log_pb2.LogFooter) -> None:
    for seat in footer.seats:
        seat.defaults_played = 0


def _seats_reordered(entries: list[log_pb2.LogEntry], footer: log_pb2.LogFooter) -> None:
    seats = list(footer.seats)[::-1]
    del footer.seats[:]
    footer.seats.extend(seats)


def _legal_action_refused(entries: list[log_pb2.LogEntry], footer: log_pb2.LogFooter) -> None:
    step = next(e.step for e in entries[1:] if e.WhichOneof("kind") == "step" and e.step.step == 3)
    step.rejected.add(action=step.action, code=pb.REJECT_CODE_ILLEGAL_ACTION)


def _results_before_the_end(entries: list[log_pb2.LogEntry], footer: log_pb2.LogFooter) -> None:
    cut = next(
        i for i, e in enumerate(entries) if e.WhichOneof("kind") == "step" and e.step.step == 4
    )
    del entries[cut:]
    footer.status = pb.MATCH_STATUS_FAILED
    footer.steps = 4


def _a_footer_in_the_middle(entries: list[log_pb2.LogEntry], footer: log_pb2.LogFooter) -> None:
    cut = next(
        i for i, e in enumerate(entries) if e.WhichOneof("kind") == "step" and e.step.step == 4
    )
    chain = wire.LOG_GENESIS  # the footer's own hash right: only its place is wrong
    for entry in entries[:cut]:
        chain = wire.log_chain(chain, entry.SerializeToString(deterministic=True))
    middle = log_pb2.LogFooter(status=pb.MATCH_STATUS_FAILED, steps=4, final_hash=chain)
    entries.insert(cut, log_pb2.LogEntry(footer=middle))


@pytest.mark.parametrize(
    ("forge", "problem"),
    [
        (_renamed, "the results are not the header's seats"),
        (_seats_reordered, "the results are not the header's seats"),
        (_more_illegal_moves, "seat 1's result counts other defaults or illegal moves"),
        (_fewer_defaults, "result counts other defaults or illegal moves than its steps"),
        (_legal_action_refused, "a rejected answer was not illegal"),
        (_results_before_the_end, "the match is not over but the footer gives its results"),
        (_a_footer_in_the_middle, "a record after the footer"),
    ],
)
def test_a_signed_footer_that_contradicts_the_steps_diverges(
    played: Table, tmp_path: Path, forge: Forgery, problem: str
) -> None:
    verdict = verify(_signed(played, tmp_path, forge), KEY.public)
    assert not verdict.ok, verdict.lines()
    assert problem in verdict.lines()[0], verdict.lines()


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, out.getvalue()


def test_show_and_export_exit_as_verify_for_a_log_that_diverges(
    played: Table, tmp_path: Path
) -> None:
    """Review 53: ``show`` printed a forged result after its DIVERGES line and exited 0, and
    ``export`` printed it as JSON with no verdict at all."""
    key = KEY.public_text
    genuine = _signed(played, tmp_path)
    code, exported = _cli("replay", "export", str(genuine), "--key", key)
    assert code == EXIT_OK
    assert json.loads(exported)["verdict"] | {"says": ""} == {
        "agrees": True, "complete": True, "trusted": True, "says": ""
    }  # fmt: skip
    forged_folder = tmp_path / "forged"
    forged_folder.mkdir()
    forged = _signed(played, forged_folder, _more_illegal_moves)
    code, shown = _cli("replay", "show", str(forged), "--key", key)
    assert code == EXIT_DIVERGES and shown.splitlines()[0].startswith(f"{forged}: DIVERGES")
    code, exported = _cli("replay", "export", str(forged), "--key", key)
    verdict = json.loads(exported)["verdict"]
    assert code == EXIT_DIVERGES and not verdict["agrees"] and not verdict["trusted"]
    assert "DIVERGES" in verdict["says"]
