"""A command that only reads a store leaves one an older Bisca left as it is: it refuses it,
naming both schema versions and what upgrades it, where it migrated it before (a newer
``bisca leaderboard`` run beside an older server upgraded that server's store, which the server
then refused: ``StoreTooNew``).  A command that writes (``bisca bots add``) still upgrades it,
as a server does, and the readers read it then."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.store import MIGRATIONS
from tests.store.support import old_data_dir

#: The schema the data directory is left at: the one before this Bisca's.
OLD = len(MIGRATIONS) - 1
#: Each command that only reads, as it names the store of the data directory ``DATA``
#: (``workers`` and ``tournament status`` refuse a SQLite store before they open it:
#: ``tests/tournament/test_distributed.py``).
READERS = (
    ["leaderboard", "--game", "belote", "--data", "DATA"],
    ["bots", "list", "--data", "DATA"],
    ["key", "--data", "DATA", "--store", "sqlite:DATA/bisca.sqlite3"],
)


def _schema(data: Path) -> int:
    db = sqlite3.connect(data / "bisca.sqlite3")
    try:
        version: int = db.execute("PRAGMA user_version").fetchone()[0]
        return version
    finally:
        db.close()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_reading_command_refuses_an_older_store_and_a_writing_one_upgrades_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = old_data_dir(tmp_path / "data", schema=OLD)
    for reader in READERS:
        code, out, err = _run(capsys, *(word.replace("DATA", str(data)) for word in reader))
        assert (code, out) == (1, ""), (reader, out, err)
        assert f"has schema version {OLD}, older than this Bisca's ({len(MIGRATIONS)})" in err
        assert "a command that only reads does not upgrade it" in err, err
        assert "Traceback" not in err
        assert _schema(data) == OLD, f"bisca {' '.join(reader)} upgraded the store"

    code, out, err = _run(capsys, "bots", "add", "newbot", "--data", str(data))
    assert code == 0, err
    assert _schema(data) == len(MIGRATIONS)
    code, out, err = _run(capsys, "bots", "list", "--data", str(data))
    assert code == 0 and "newbot" in out and "old" in out, (out, err)
    code, out, err = _run(capsys, "leaderboard", "--game", "belote", "--data", str(data))
    assert code == 0, err
