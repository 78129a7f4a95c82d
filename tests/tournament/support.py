"""Helpers of the tournaments' tests: tournament files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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
