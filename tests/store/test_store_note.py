"""A server whose store is not its data directory's own SQLite file notes which it is
(``DATA/store``, no password): the operator's commands given ``--data`` alone then name that
store instead of opening an empty one of the folder's own (operator review: on a PostgreSQL
league, ``bisca account invite --data league-data`` printed an invite no server knew, ``account
list`` said "no accounts")."""

from __future__ import annotations

import asyncio
import contextlib
import io
from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.datadir import DataDir
from bisca.server.errors import StoreError
from bisca.server.store import Store, note_store_used, open_store
from bisca.server.web import data_backend
from tests.store.conftest import OpenStore


def _command(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_commands_given_the_folder_alone_name_the_store_its_server_uses(
    new_store: OpenStore, store_url: str, tmp_path: Path
) -> None:
    data = tmp_path / "league-data"
    DataDir(data).create()
    with new_store() as store:
        note_store_used(store, data)
    noted = DataDir(data).store_note.read_text().strip()
    with pytest.raises(StoreError, match="keeps its store in"):
        open_store(None, data)
    assert not DataDir(data).store.exists()  # no empty store of the folder's own was made
    code, out, err = _command("account", "list", "--data", str(data))
    assert code != 0 and out == "", out
    assert noted in err and "give --store with that URL" in err, err
    code, out, err = _command("account", "list", "--data", str(data), "--store", store_url)
    assert code == 0, err
    # The leaderboard and the web app given the folder name the store too (re-test of the
    # review: "no Bisca data", and a stale SQLite store served in silence).
    code, _, err = _command("leaderboard", "--game", "belote", "--data", str(data))
    assert code == 1 and noted in err, err
    with pytest.raises(StoreError, match="keeps its store in"):
        asyncio.run(_open_web_backend(data))


async def _open_web_backend(data: Path) -> None:
    async with data_backend(data):
        pass


def test_a_server_on_its_folders_own_store_notes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Store.in_directory(data) as store:
        note_store_used(store, data)
    assert not DataDir(data).store_note.exists()
    open_store(None, data).close()
    # A note left by a server on another store goes when one serves on the folder's own.
    DataDir(data).store_note.write_text("postgresql://bisca@db.example/league\n")
    with open_store(f"sqlite:{DataDir(data).store}", data) as store:
        note_store_used(store, data)
    assert not DataDir(data).store_note.exists()
