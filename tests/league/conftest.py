"""Helpers for the league tests: tournament files, the ``bisca`` command."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

TournamentFile = Callable[..., Path]


def tournament_text(
    game: str = "belote",
    *,
    name: str = "t",
    per_pairing: int = 2,
    duplicate: bool = False,
    concurrency: int = 2,
    settings: str = "deals = 1",
    bots: tuple[tuple[str, str], ...] = (("greedy", "greedy"), ("random", "random")),
    extra: str = "",
) -> str:
    lines = [
        f'name = "{name}"',
        f'game = "{game}"',
        f"matches_per_pairing = {per_pairing}",
        f"duplicate = {'true' if duplicate else 'false'}",
        f"concurrency = {concurrency}",
        "seed = 7",
        extra,
        "",
        "[settings]",
        settings,
        "",
        "[clock]",
        "move_ms = 3000",
        "bank_ms = 10000",
        "join_timeout_s = 30",
    ]
    for bot, command in bots:
        lines += ["", "[[bots]]", f'name = "{bot}"', f'command = "{command}"']
    return "\n".join(lines) + "\n"


@pytest.fixture
def tournament_file(tmp_path: Path) -> TournamentFile:
    """Write a tournament file (arguments as :func:`tournament_text`) and return its path."""

    def write(filename: str = "t.toml", **fields: object) -> Path:
        path = tmp_path / filename
        path.write_text(tournament_text(**fields))  # type: ignore[arg-type]
        return path

    return write


def bisca(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real ``bisca`` command line."""
    return subprocess.run(
        [sys.executable, "-m", "bisca.server.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
