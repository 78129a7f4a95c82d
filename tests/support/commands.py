"""The ``bisca`` command line and the bots the tests run as processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: ``bisca`` as this interpreter runs it (the installed entry point may be another's).
BISCA = [sys.executable, "-m", "bisca.server.cli"]

#: The scripted bot that misbehaves on purpose (its docstring lists the behaviours).
ROGUE = Path(__file__).parent / "bots" / "rogue.py"


def bisca(
    *argv: str,
    timeout: float = 120,
    check: bool = False,
    input: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``bisca`` command line to its end, its output captured as text (in
    ``env``, else this process's environment)."""
    return subprocess.run(
        [*BISCA, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
        input=input,
        env=env,
    )


def sample_bot(name: str, *games: str, log_level: str | None = None) -> list[str]:
    """The command that runs sample bot ``name`` (``bisca bot``) for ``games``."""
    command = [*BISCA, "bot", name]
    for game in games:
        command += ["--game", game]
    if log_level is not None:
        command += ["--log-level", log_level]
    return command


def rogue(record: Path, *behaviour: str) -> list[str]:
    """The command that runs the rogue bot, recording what it receives in ``record``."""
    return [sys.executable, str(ROGUE), str(record), *behaviour]


def seat_rows(printed: str) -> list[dict[str, str]]:
    """The seat rows of the result table ``bisca match`` prints, by column name (``seat``,
    ``bot``, ``score``, ``place``, ``end``, ``crashes``, ``timeouts``, ``illegal``,
    ``defaults``): one place that knows the table's layout."""
    lines = printed.splitlines()
    header = next((line.split() for line in lines if line.split()[:2] == ["seat", "bot"]), None)
    assert header is not None, f"no result table in:\n{printed}"
    return [
        dict(zip(header, line.split(), strict=True))
        for line in lines
        if line.split() and line.split()[0].isdigit() and len(line.split()) == len(header)
    ]
