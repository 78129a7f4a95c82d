"""A tournament's live view on the terminal: a progress bar and the running standings.

Drawn with rich.  On a terminal the bar and the table are one live block, redrawn in place;
through a pipe (a CI log, ``| tee``) the view prints one progress line at each tenth of the way
and the tables only at the end, so that a log stays readable.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from bisca.server.store import LeaderboardRow, Standings, leaderboard_table, render_table

from ._tournament_file import TournamentSpec


class ProgressView:
    """The live view: a progress bar and the running standings."""

    def __init__(self, spec: TournamentSpec, out: TextIO) -> None:
        self.spec = spec
        self.out = out
        self.console = Console(file=out, highlight=False)
        self.tty = self.console.is_terminal
        self.started = time.monotonic()
        self.total = 0
        self.resumed = 0
        self.last_tenth = -1
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            console=self.console,
        )
        self.task: TaskID | None = None
        self.live: Live | None = None

    def _print(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out)
        self.out.flush()

    def start(self, total: int, finished: int) -> None:
        spec = self.spec
        self.total = total
        self.resumed = finished
        self.started = time.monotonic()
        pairing = "pairing" if len(spec.pairings()) == 1 else "pairings"
        lines = [
            f"tournament {spec.name}: {spec.game}, {spec.format}, {len(spec.bots)} bots "
            f"({', '.join(b.name for b in spec.bots)}), {len(spec.pairings())} {pairing} x "
            f"{spec.matches_per_pairing} = {total} match{'es' if total != 1 else ''}"
            + (", duplicate deals" if spec.duplicate else "")
            + f", {spec.concurrency} at once"
        ]
        if finished == total:
            lines.append(f"all {total} matches were played already (nothing to resume)")
        elif finished:
            lines.append(f"resuming: {finished} of {total} matches were played already")
        self._print(*lines)
        if self.tty:
            self.task = self.progress.add_task(
                spec.name, total=max(total, 1), completed=finished, status=""
            )
            self.live = Live(self.progress, console=self.console, auto_refresh=False)
            self.live.start()

    def note(self, text: str) -> None:
        """A message that stays (a bot restarted, a match failed)."""
        if self.live is not None:
            self.live.console.print(text, markup=False)
        else:
            self._print(text)

    def _status(self, finished: int, running: int) -> str:
        elapsed = time.monotonic() - self.started
        played = finished - self.resumed
        eta = ""
        if 0 < played < self.total - self.resumed:
            left = (self.total - finished) * elapsed / played
            eta = f", about {math.ceil(left)} s left"
        return f"{running} running, {elapsed:.1f} s{eta}"

    def _line(self, finished: int, running: int) -> str:
        """The progress as one line of text, for a pipe."""
        total = max(self.total, 1)
        width = 30
        filled = int(width * finished / total)
        return (
            f"[{'#' * filled}{'.' * (width - filled)}] {finished}/{self.total} "
            f"({100 * finished // total}%), {self._status(finished, running)}"
        )

    def update(self, finished: int, running: int, standings: Sequence[LeaderboardRow]) -> None:
        if self.live is not None and self.task is not None:
            self.progress.update(
                self.task, completed=finished, status=self._status(finished, running)
            )
            self.live.update(
                Group(self.progress, leaderboard_table(self.spec.game, standings)), refresh=True
            )
            return
        tenth = 10 * finished // max(self.total, 1)
        if tenth != self.last_tenth:
            self.last_tenth = tenth
            self._print(self._line(finished, running))

    def finish(
        self,
        finished: int,
        leaderboard: Sequence[LeaderboardRow],
        standings: Standings | None = None,
    ) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        lines = [self._line(finished, 0), ""]
        lines += render_table(self.spec.game, leaderboard, standings)
        self._print(*lines)
