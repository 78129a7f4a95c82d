"""The tournament's live view on a terminal (rich's live block) and through a pipe."""

from __future__ import annotations

import io

from bisca.server.store import Rating, leaderboard_row
from bisca.server.tournament import ProgressView, parse_tournament

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
