"""A Node bot run before ``npm ci``: one line that names the missing module and says what to
run, printed once by ``bisca match``.

The Node client is copied without its ``node_modules`` (the repository's own is left alone),
so ``require`` finds none of its dependencies wherever it looks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_CLIENT = ROOT / "clients" / "node"


@pytest.fixture
def bare_client(tmp_path: Path) -> Path:
    """A copy of ``clients/node`` as a fresh clone has it: no ``node_modules``."""
    copy = tmp_path / "clients" / "node"
    shutil.copytree(NODE_CLIENT, copy, ignore=shutil.ignore_patterns("node_modules", "test"))
    return copy


def expected(client: Path) -> str:
    return f"bisca: cannot find module '@grpc/grpc-js': run `npm ci` in {client} first"


def test_the_bot_says_in_one_line_what_is_missing(bare_client: Path) -> None:
    node = shutil.which("node")
    assert node, "Node.js (node) is needed: `make test` installs the Node client's packages"
    env = {k: v for k, v in os.environ.items() if k != "NODE_PATH"}
    done = subprocess.run(
        [node, str(bare_client / "bots" / "random.js")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr == expected(bare_client) + "\n"


def test_bisca_match_prints_it_once(bare_client: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bisca.server.cli", "match", "--game", "belote"),
            *("--data", str(tmp_path / "data"), "--no-sandbox"),
            *("--bot", f"{node} {bare_client / 'bots' / 'random.js'}"),
            *("--bot", "random") * 3,
        ],
        env={k: v for k, v in os.environ.items() if k != "NODE_PATH"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert output.count("cannot find module") == 1, output
    assert expected(bare_client) in done.stdout.splitlines()
    assert "seat 0's bot exited with status 1 before the match started" in done.stdout
