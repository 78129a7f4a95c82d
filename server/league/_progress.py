"""A tournament's live view on the terminal: a progress bar and the running standings."""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Sequence
from typing import TextIO

from bisca.server.store import LeaderboardRow, render_table

from ._tournament_file import TournamentSpec


class ProgressView:
    """The live view: a progress bar and the running standings.

    On a terminal the block is redrawn in place with two ANSI sequences (cursor up, clear to
    the end of the screen); otherwise (a pipe, a CI log) it prints one progress line at each
    tenth of the way and the table only at the end.
    """

    def __init__(self, spec: TournamentSpec, out: TextIO) -> None:
        self.spec = spec
        self.out = out
        self.tty = out.isatty()
        self.started = time.monotonic()
        self.total = 0
        self.resumed = 0
        self.drawn_lines = 0
        self.last_tenth = -1
        self.notes: list[str] = []

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

    def note(self, text: str) -> None:
        """A message that stays (a bot restarted, a match failed)."""
        if self.tty:
            self._erase()
            self._print(text)
        else:
            self.notes.append(text)
            self._print(text)

    def _bar(self, finished: int, running: int) -> str:
        total = max(self.total, 1)
        width = 30
        filled = int(width * finished / total)
        elapsed = time.monotonic() - self.started
        played = finished - self.resumed
        eta = ""
        if 0 < played < self.total - self.resumed:
            left = (self.total - finished) * elapsed / played
            eta = f", about {math.ceil(left)} s left"
        return (
            f"[{'#' * filled}{'.' * (width - filled)}] {finished}/{self.total} "
            f"({100 * finished // total}%), {running} running, {elapsed:.1f} s{eta}"
        )

    def _erase(self) -> None:
        if self.drawn_lines:
            self.out.write(f"\x1b[{self.drawn_lines}F\x1b[J")
            self.drawn_lines = 0

    def update(self, finished: int, running: int, standings: Sequence[LeaderboardRow]) -> None:
        if self.tty:
            columns = shutil.get_terminal_size((100, 24)).columns
            lines = [self._bar(finished, running), ""]
            lines += render_table(self.spec.game, standings)
            lines = [line[:columns] for line in lines]
            self._erase()
            self._print(*lines)
            self.drawn_lines = len(lines)
            return
        tenth = 10 * finished // max(self.total, 1)
        if tenth != self.last_tenth:
            self.last_tenth = tenth
            self._print(self._bar(finished, running))

    def finish(self, finished: int, leaderboard: Sequence[LeaderboardRow]) -> None:
        if self.tty:
            self._erase()
        lines = [self._bar(finished, 0), ""]
        lines += render_table(self.spec.game, leaderboard)
        self._print(*lines)
