"""The tournament's live view on a terminal (rich's live block) and through a pipe."""

from __future__ import annotations

import io
from pathlib import Path

from bisca.server.store import Rating, leaderboard_row, without_password
from bisca.server.tournament import ProgressView, Summary, parse_tournament
from bisca.server.tournament.distributed import distributed_summary_lines

from .support import tournament_text


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_live_block_and_a_pipe_gets_lines() -> None:
    spec = parse_tournament(tournament_text(per_pairing=10), "t.toml")
    rows = [leaderboard_row(1, "greedy", Rating(27.0, 5.0), 3, 80.0, 90.0)]
    for out, live in ((Terminal(), True), (io.StringIO(), False)):
        view = ProgressView(spec, out)
        view.start(10, 0)
        for finished in range(1, 11):
            view.update(finished, 2, rows)
        view.note("bot greedy exited; started again")
        view.finish(10, rows)
        text = out.getvalue()
        assert "tournament t: belote" in text and "started again" in text
        assert "[##############################] 10/10 (100%)" in text
        assert (text.count("belote leaderboard") > 1) is live  # redrawn as it goes
        assert ("\x1b[" in text) is live  # the live block is redrawn in place


def test_the_commands_a_distributed_run_prints_to_paste_hold_no_password() -> None:
    """Review s59c, F10: the last line of ``tournament run --distributed`` gave the store's
    URL with its password (the line above masked it): a pasted command reads it from
    ``~/.pgpass`` or ``PGPASSWORD`` instead."""
    summary = Summary("t", "belote", Path("d"), planned=4, finished=4, played_now=4)
    url = "postgresql://bisca:leaguepw@127.0.0.1:56633/league"
    lines = distributed_summary_lines(summary, url)
    assert not any("leaguepw" in line for line in lines), lines
    assert "--store postgresql://bisca@127.0.0.1:56633/league" in lines[-1], lines
    assert without_password("postgresql://u@h/db") == "postgresql://u@h/db"
    assert without_password("postgresql://u:p:q@h/db?x=1") == "postgresql://u@h/db?x=1"
