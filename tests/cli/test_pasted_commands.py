"""The lines a command prints for pasting name ``bisca`` as it can be run: a user who ran
``.venv/bin/bisca`` without activating the environment has no ``bisca`` on ``PATH`` (a README
check pasted ``bisca check-bot ...`` and got "command not found"), and a replay hint names the
data directory whose key signed the log (without it the user's own log shows as untrusted)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from bisca.server.tournament import replay_command

#: The installed ``bisca`` script beside the interpreter running the tests (the venv's).
SCRIPT = Path(sys.executable).parent / "bisca"


def _next_lines(cwd: Path, folder: Path, path: str) -> list[str]:
    done = subprocess.run(
        [str(SCRIPT), "new-bot", "python", str(folder)],
        cwd=cwd,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [line.strip() for line in done.stdout.splitlines() if "check-bot --" in line]


def test_a_hint_names_bisca_as_it_was_run(tmp_path: Path) -> None:
    assert SCRIPT.is_file(), f"no bisca script beside {sys.executable}"
    bare = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if p != str(SCRIPT.parent)
    )
    # Run by a path, from a folder outside it: the whole path.
    [line] = _next_lines(tmp_path, tmp_path / "one", bare)
    assert shlex.split(line)[0] == str(SCRIPT.resolve()), line
    # From a folder above it: the path from there, as the README writes .venv/bin/bisca.
    above = SCRIPT.parent.parent.parent
    [line] = _next_lines(above, tmp_path / "two", bare)
    assert shlex.split(line)[0] == os.path.relpath(SCRIPT.resolve(), above.resolve()), line
    # With it on PATH: the plain name.
    [line] = _next_lines(tmp_path, tmp_path / "three", f"{SCRIPT.parent}{os.pathsep}{bare}")
    assert line.startswith("bisca check-bot -- "), line


def test_a_replay_hint_names_the_data_directory_that_signed_the_log() -> None:
    line = replay_command(".venv/bin/bisca", Path("my data/matches/m/m.binlog"), Path("my data"))
    assert shlex.split(line) == [
        ".venv/bin/bisca",
        "replay",
        "show",
        "my data/matches/m/m.binlog",
        "--data",
        "my data",
    ]
