"""A bot whose files changed between two runs of one local tournament is named, not mixed in:
each finished match records the fingerprint of each bot's files, a resumed run with a bot
changed stops before it plays, naming the bot and the ways on, and ``--accept-changed``
goes on, recording the new fingerprint."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from bisca.server.datadir import DataDir
from bisca.server.tournament import FINGERPRINTS
from tests.support.commands import bisca

from .support import tournament_text


def recorded(data: Path) -> list[tuple[str, dict[str, str]]]:
    """Each recorded match and the fingerprints of its bots."""
    path = DataDir(data).tournament_bots("t") / FINGERPRINTS
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [(str(line["match"]), dict(line["bots"])) for line in lines]


def test_a_changed_bot_is_named_when_its_tournament_resumes(tmp_path: Path) -> None:
    assert bisca("new-bot", "python", str(tmp_path / "mine")).returncode == 0
    file = tmp_path / "t.toml"
    bots = (("mine", f"{sys.executable} mine/my_bot.py"), ("random", "random"))
    file.write_text(tournament_text(per_pairing=2, concurrency=1, bots=bots))
    data = tmp_path / "data"
    first = bisca("tournament", "run", str(file), "--data", str(data))
    assert first.returncode == 0, first.stdout + first.stderr
    lines = recorded(data)
    assert len(lines) == 2 and [list(bots) for _, bots in lines] == [["mine"], ["mine"]]
    before = lines[0][1]["mine"]

    # The run stopped with its last match unfinished, and the bot was edited meanwhile.
    with sqlite3.connect(data / "bisca.sqlite3") as db:
        db.execute("UPDATE matches SET status = 'failed' WHERE id = ?", (lines[-1][0],))
    db.close()
    refused = _edited_then_run(tmp_path / "mine", "# a better strategy, one day", file, data)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert (
        "bisca tournament: t: mine: the files changed since its matches of tournament 't' "
        "were played"
    ) in refused.stderr
    assert "a new name" in refused.stderr and "--accept-changed" in refused.stderr
    assert len(recorded(data)) == 2  # nothing played

    accepted = bisca("tournament", "run", str(file), "--data", str(data), "--accept-changed")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "mine: its files changed; going on with them" in accepted.stdout + accepted.stderr
    after = recorded(data)
    assert len(after) == 3 and after[-1][1]["mine"] != before
    again = bisca("tournament", "run", str(file), "--data", str(data))
    assert again.returncode == 0, again.stdout + again.stderr  # finished: results shown
    assert "changed since this tournament was played" not in again.stdout + again.stderr

    # Edited once the tournament is finished: its results are shown, and said to be the old
    # files' (review s58e: they came back as if the edit had been played).
    shown = _edited_then_run(tmp_path / "mine", "# the strategy of another day", file, data)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert (
        "mine: its files changed since this tournament was played: these results are of its "
        "old files (give the tournament a new `name` to play the new ones)"
    ) in shown.stdout + shown.stderr
    assert len(recorded(data)) == 3  # nothing played


def _edited_then_run(
    bot: Path, line: str, file: Path, data: Path
) -> subprocess.CompletedProcess[str]:
    """The bot's file edited (``line`` added), then the tournament run again."""
    with (bot / "my_bot.py").open("a") as edited:
        edited.write(line + "\n")
    return bisca("tournament", "run", str(file), "--data", str(data))
