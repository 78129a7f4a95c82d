"""Fixtures of the tournaments' tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import TournamentFile, tournament_text


@pytest.fixture
def tournament_file(tmp_path: Path) -> TournamentFile:
    """Write a tournament file (arguments as :func:`tournament_text`) and return its path."""

    def write(filename: str = "t.toml", **fields: object) -> Path:
        path = tmp_path / filename
        path.write_text(tournament_text(**fields))  # type: ignore[arg-type]
        return path

    return write
