"""Every folder of a data directory is its owner's only (0700), not only the root: ``matches/``
holds every hand of every match, ``bot-logs/`` every bot's output."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from bisca.server.datadir import DataDir
from tests.support.arena import start_server, stop_server
from tests.support.commands import bisca


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_create_makes_every_folder_private(tmp_path: Path) -> None:
    layout = DataDir(tmp_path / "above" / "data")
    layout.create()
    for folder in (tmp_path / "above", layout.root, layout.matches, layout.bot_logs):
        assert _mode(folder) == 0o700, folder


def test_create_closes_folders_left_open(tmp_path: Path) -> None:
    layout = DataDir(tmp_path / "data")
    for folder in (layout.root, layout.matches, layout.bot_logs):
        folder.mkdir(mode=0o755)
        folder.chmod(0o755)
    layout.create()
    for folder in (layout.root, layout.matches, layout.bot_logs):
        assert _mode(folder) == 0o700, folder


@pytest.mark.system
def test_a_played_match_leaves_only_private_folders(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bisca(
        "match", "--game", "belote", *["--bot", "random"] * 4, "--deals", "1",
        "--no-sandbox", "--data", str(data), check=True,
    )  # fmt: skip
    layout = DataDir(data)
    folders = [layout.root, layout.matches, *layout.matches.iterdir()]
    assert len(folders) == 3
    for folder in folders:
        assert _mode(folder) == 0o700, folder


@pytest.mark.system
def test_a_server_whose_store_is_elsewhere_keeps_its_data_folder_private(tmp_path: Path) -> None:
    """Review s59c, F2: only a SQLite store inside it made a data directory private, so a
    PostgreSQL league's folder (its strangers' bots' sources in ``submissions/``) was readable
    by every user of the machine; a store named elsewhere is the same path of the code."""
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    store = f"sqlite:{tmp_path / 'elsewhere' / 'league.sqlite3'}"
    (tmp_path / "elsewhere").mkdir()
    arena, _ = start_server(
        tmp_path, data, *["serve", "--listen", "127.0.0.1:0", "--store", store, "--data", str(data)]
    )
    try:
        layout = DataDir(data)
        for folder in (layout.root, layout.matches, layout.bot_logs, layout.servers):
            assert _mode(folder) == 0o700, folder
    finally:
        stop_server(arena.process, [], tmp_path)
