"""``bisca check-bot`` pieces that need no bot process: the error reports it finds in a bot's
stderr, and the temporary folder it leaves (none)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from bisca.client import _session
from bisca.server.cli import main
from bisca.server.conformance import check_bot
from bisca.server.conformance._checker import own_errors_check
from bisca.server.conformance._crashes import (
    NOT_AN_ACTION,
    count_error_reports,
    first_error_report,
)
from bisca.server.sandbox import BotStartError, SandboxPolicy

PYTHON = """\
12:00:01 INFO bisca.client: welcomed
bisca.client: the bot callable, on request r1 (match m1, seat 0) raised:
Traceback (most recent call last):
  File "/x/bot.py", line 9, in choose
    return pick(request)
ValueError: no card
bisca.client: keep_going: sending the first legal action instead (ValueError('no card'))
Traceback (most recent call last):
  File "/x/bot.py", line 9, in choose
ValueError: no card
"""

NODE = """\
/x/bot.js:3
TypeError: Cannot read properties of undefined (reading 'length')
    at choose (/x/bot.js:3:20)
    at Session.answer (/sdk/session.js:80:5)
"""

CPP = """\
terminate called after throwing an instance of 'std::out_of_range'
  what():  vector::_M_range_check
"""


def test_python_node_and_cpp_error_reports_are_found() -> None:
    python = first_error_report(PYTHON)
    assert python[0] == "Traceback (most recent call last):" and python[-1] == "ValueError: no card"
    assert count_error_reports(PYTHON) == 2
    assert (
        first_error_report(NODE)[0].startswith("TypeError") and len(first_error_report(NODE)) == 3
    )
    assert first_error_report(CPP)[-1].strip().startswith("what():")
    assert first_error_report("INFO welcomed\nWARNING connection lost; reconnecting\n") == []


def test_a_long_traceback_is_cut_in_the_middle() -> None:
    frames = "".join(f'  File "/x/f{n}.py", line 1, in f{n}\n    f{n + 1}()\n' for n in range(40))
    shown = first_error_report(
        f"Traceback (most recent call last):\n{frames}RecursionError: deep\n"
    )
    assert len(shown) == 30 and "lines)" in shown[1] and shown[-1] == "RecursionError: deep"


def test_the_own_errors_check_fails_with_the_traceback(tmp_path: Path) -> None:
    stderr = tmp_path / "bot.stderr.log"
    stderr.write_text(PYTHON)
    result = own_errors_check(stderr)
    assert not result.passed and "2 error report(s)" in result.text
    assert "  ValueError: no card" in result.details
    stderr.write_text("INFO all fine\n")
    assert own_errors_check(stderr).passed


#: What each SDK prints for an answer that is not an action of the game (their own tests hold
#: them to these words: tests/client/test_session.py, clients/node/test/session.test.js,
#: tests/client/test_cpp_bot.py).
NOT_AN_ACTION_LINES = {
    "python": "bisca.client: request r5 (match m1, seat 0): the bot returned None, which is not "
    "an action of the game (does every path of choose() return an action?)",
    "node": "2024-01-01T00:00:00.000Z ERROR bisca.client: request r5 (match m1, seat 0): the bot "
    "answered undefined, which is not an action of the game (does every path of the bot "
    "return an action?); keepGoing: sending a legal action instead",
    "cpp": "12:00:01.000 ERROR bisca.client: request r5 (match m1, seat 0): the bot answered {}, "
    "which is not an action of the game (an empty GameAction: does every path of the bot "
    "return one of request.legal_actions()?); ending the bot (with Options::keep_going it "
    "would go on)",
}


@pytest.mark.parametrize("sdk", sorted(NOT_AN_ACTION_LINES))
def test_an_answer_that_is_not_an_action_fails_the_own_errors_check(
    tmp_path: Path, sdk: str
) -> None:
    """The SDKs send a legal action in place of such an answer (with keep_going), so every
    other check passes: this one must not (a bot that never answered an action passed 13/13)."""
    line = NOT_AN_ACTION_LINES[sdk]
    stderr = tmp_path / "bot.stderr.log"
    stderr.write_text(f"INFO welcomed\n{line}\n{line}\nINFO match m1 finished\n")
    result = own_errors_check(stderr)
    assert not result.passed and "2 error report(s)" in result.text
    assert result.details == [f"  {line}"]


def test_the_phrase_looked_for_is_the_one_the_python_sdk_prints() -> None:
    assert _session.NOT_AN_ACTION == NOT_AN_ACTION == "which is not an action of the game"


def test_a_bot_that_never_got_past_its_hello_does_not_pass_the_own_errors_check(
    tmp_path: Path,
) -> None:
    """A clean stderr proves nothing when none of the bot's code ran (a Node bot without
    `npm ci` printed "PASS the bot's own errors" beside 29 failures)."""
    stderr = tmp_path / "bot.stderr.log"
    stderr.write_text("bisca-client: run `npm ci` in clients/node first\n")
    result = own_errors_check(stderr, ran=False)
    assert not result.passed and result.text.startswith("not judged, since the bot never got past")
    assert own_errors_check(stderr, ran=True).passed
    stderr.write_text(PYTHON)  # a traceback before the Hello is still quoted
    assert "  ValueError: no card" in own_errors_check(stderr, ran=False).details


def test_no_temporary_folder_is_left_when_the_bot_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(BotStartError):
        asyncio.run(
            check_bot(
                [str(tmp_path / "no-such-bot")],
                emit=lambda line: None,
                sandbox=SandboxPolicy(enabled=False),
            )
        )
    assert list(tmp_path.glob("bisca-check-bot-*")) == []


def test_move_ms_is_the_clock_option_and_usage_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-bot", "--move-ms", "0", "--", "true"]) == 2
    assert "--move-ms must be above 0" in capsys.readouterr().err
    assert main(["check-bot"]) == 2
    assert "[--move-ms MS]" in capsys.readouterr().err
