"""`make run`, the README's first command, as written: it sets up what it needs and plays the
demo league (here into a data directory of the test's own, through the Makefile's DEMO_DATA)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.shared_build import shared_build

ROOT = Path(__file__).resolve().parents[2]


def test_make_run_plays_the_demo_league(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    with shared_build():  # `make run` sets up first: the install, when it is out of date
        done = subprocess.run(
            ["make", "--no-print-directory", "run", f"DEMO_DATA={demo}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "40 of 40 planned matches played" in out, out[-3000:]
    for game in ("belote", "bestia"):
        assert f"{game} leaderboard" in out and f"{game} head to head" in out
        assert re.search(r"^\s+1\s+(greedy|random)\s", out.split(f"{game} leaderboard")[-1], re.M)
    assert f"match logs: {demo / 'matches'}/MATCH_ID/MATCH_ID.binlog" in out
    assert f"bisca web --data {demo}" in out  # how to browse it
    logs = sorted((demo / "matches").glob("*/*.binlog"))
    assert len(logs) == 80
