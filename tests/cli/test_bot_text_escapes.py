"""Text a bot chose (its stderr, quoted in a failed match's reason; its name and version) is
shown to people without its control characters: no terminal escape a bot writes reaches the
terminal of whoever runs ``bisca match`` or ``replay show``, nor the store's records."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from bisca.server.records import MatchRecord, MatchStatus, SeatEnd, SeatRecord
from bisca.server.text import printable
from tests.support.commands import bisca

#: A window title, a clipboard write (OSC 52), a line erased and a fake verdict overprinted.
ATTACK = "\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x1b\\\x1b[2K\x1b[1A\r\x9b31mmatch OK\x00\x7f"


def test_printable_strips_every_kind_of_control() -> None:
    assert printable(ATTACK) == "match OK"
    assert printable("line one\n\tline two, é ü ☃") == "line one\n\tline two, é ü ☃"
    assert printable("a\x1bcb\x85c\x1b(0d") == "abcd"


def test_records_keep_bot_text_cleaned() -> None:
    seat = SeatRecord(0, "b\x1b[31mot", "1\x1b]0;t\x07.0", 0, 0, SeatEnd.FORFEITED, ATTACK, 0, 0)
    assert (seat.bot_name, seat.bot_version, seat.forfeit_reason) == ("bot", "1.0", "match OK")
    match = MatchRecord(
        "m-1", "belote", {}, 1, MatchStatus.FAILED, ["x\x1b[2Jy"], {}, ATTACK, 0, "", None, []
    )
    assert match.reason == "match OK" and match.bots == ["xy"]


@pytest.mark.system
def test_bisca_match_prints_no_escape_from_a_bot_stderr(tmp_path: Path) -> None:
    script = tmp_path / "hostile.py"
    script.write_text(
        f"import sys\nsys.stderr.write({ATTACK!r} + '\\n')\nsys.stderr.flush()\nsys.exit(1)\n"
    )
    hostile = shlex.join([sys.executable, str(script)])
    result = bisca(
        "match", "--game", "belote", "--bot", hostile, *["--bot", "random"] * 3,
        "--deals", "1", "--no-sandbox", "--data", str(tmp_path / "data"),
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "match OK" in result.stdout, result.stdout  # the bot's text is shown, cleaned
    for control in ("\x1b", "\x07", "\x9b", "\x00", "\x7f", "\r"):
        assert control not in result.stdout, repr(result.stdout)
        assert control not in result.stderr, repr(result.stderr)
