"""The browser app's fixtures: one arena with a small rated league played into its data
directory, serving the app (``bisca serve --http``), and one headless chromium for the module.

The league is a real tournament (``bisca tournament run``) of the sample bots, so the
leaderboard, the standings and the replays are those of real matches and logs.  It is played
once per test run, and each worker's arena serves a copy of it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.support.arena import Arena, start_server, stop_arena
from tests.support.commands import bisca

from .support import app_url, copy_data_dir

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

LEAGUE = """\
name = "web-league"
game = "belote"
format = "round-robin"
matches_per_pairing = 3
concurrency = 3
seed = 11

[settings]
deals = 1

[clock]
move_ms = 5000
bank_ms = 10000
policy = "default"

[[bots]]
name = "greedy"
command = "greedy"

[[bots]]
name = "random"
command = "random"

[[bots]]
name = "greedy2"
command = "greedy"
"""


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test run's own temporary folder, which its xdist workers share (each worker's base
    folder is inside it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _league_played(folder: Path) -> Path:
    """The league's finished data directory in ``folder``, played by the first worker to ask
    (the others wait on the lock): ~16 s of CPU a worker, when each played its own."""
    folder.mkdir(exist_ok=True)
    with (folder / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = folder / "data"
        if not (folder / "played").exists():
            (folder / "league.toml").write_text(textwrap.dedent(LEAGUE))
            shutil.rmtree(data, ignore_errors=True)
            run = bisca(
                "tournament",
                "run",
                str(folder / "league.toml"),
                "--data",
                str(data),
                "--no-sandbox",
            )
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
            (folder / "played").touch()
    return data


@pytest.fixture(scope="package")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding a finished rated tournament: a copy of the run's, this
    worker's arena's own."""
    data = tmp_path_factory.mktemp("web-league") / "data"
    copy_data_dir(_league_played(_run_folder(tmp_path_factory) / "web-league"), data)
    return data


@pytest.fixture(scope="package")
def site(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Arena, str]]:
    """``bisca serve --http`` on the league's data directory: the arena and the app's URL."""
    tmp = tmp_path_factory.mktemp("web-serve")
    arena, _ = start_server(
        tmp,
        data_dir,
        *["-v", "serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"],
        *["--data", str(data_dir)],
    )
    url = app_url(arena)
    try:
        yield arena, url
    finally:
        stop_arena(arena)


@pytest.fixture(scope="package")
def artifacts() -> Path:
    """Where the browser tests keep their screenshots (git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium, headless, for the tests of a module.  Not one per worker for the
    whole session, though a launch costs about a second of CPU: while Playwright's sync API is
    open, its event loop counts as running in the thread, and the next module's
    ``asyncio.run()`` fails ("cannot be called from a running event loop": tried, three web
    tests failed)."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
