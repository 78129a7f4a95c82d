"""``bisca check-bot`` pieces that need no bot process: the error reports it finds in a bot's
stderr, and the temporary folder it leaves (none)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.conformance import check_bot
from bisca.server.conformance._checker import own_errors_check
from bisca.server.conformance._crashes import count_error_reports, first_error_report
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
