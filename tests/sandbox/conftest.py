"""Fixtures of the sandbox's tests: the tournament files of the tournaments' tests."""

from __future__ import annotations

from tests.tournament.conftest import tournament_file

__all__ = ["tournament_file"]
