"""Bad input on the command line gets one clear sentence naming what was wrong, never a
Python traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_cli import bisca

FOUR_RANDOM = ["--bot", "random"] * 4


@pytest.fixture
def not_a_directory(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory\n")
    return path


@pytest.fixture
def not_a_database(tmp_path: Path) -> Path:
    path = tmp_path / "garbage"
    path.mkdir()
    (path / "bisca.sqlite3").write_bytes(b"this is not an SQLite database\n" * 8)
    return path


def _refused(result: object, code: int, *needles: str) -> None:
    stderr = result.stderr  # type: ignore[attr-defined]
    assert result.returncode == code, stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr, stderr
    for needle in needles:
        assert needle in stderr, stderr


def test_a_data_directory_that_is_a_file_is_named(not_a_directory: Path) -> None:
    data = str(not_a_directory)
    _refused(bisca("bots", "add", "x", "--data", data), 1, data, "not a directory")
    _refused(
        bisca("match", "--game", "belote", *FOUR_RANDOM, "--data", data), 2, data, "not a directory"
    )


def test_a_store_that_is_not_a_database_is_named(not_a_database: Path) -> None:
    data = str(not_a_database)
    store = str(not_a_database / "bisca.sqlite3")
    _refused(bisca("bots", "list", "--data", data), 1, store, "not a database")
    _refused(bisca("leaderboard", "--game", "belote", "--data", data), 1, store, "not a database")
    _refused(bisca("serve", "--listen", "127.0.0.1:0", "--data", data), 1, store, "not a database")
