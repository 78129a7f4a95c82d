"""A lost ``server.key`` on a PostgreSQL league (operator re-test): the league keeps its logs
in the store, and a server's data directory may hold none in ``matches/``; ``bisca serve``
made a new key there in silence.  Now the store is asked too: a directory that is not new
and whose key is gone is refused when the store holds signed logs written in its
``matches/`` (a shared store holds every machine's logs, each signed by its own directory's
key: only those are this key's).  A new directory, or another directory's logs, still give
a first key; ``bisca key`` asks the store as the server does.  Real matches played into a real
PostgreSQL store by ``bisca tournament run``."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from bisca.server.datadir import DataDir
from bisca.server.errors import KeyFileError
from bisca.server.logs import ServerKey, data_key
from bisca.server.store import note_store_used, open_store
from tests.support.commands import BISCA, bisca
from tests.support.postgres import PostgresServer
from tests.support.waiting import poll_until
from tests.tournament.support import tournament_text

pytestmark = pytest.mark.postgres

GREEDY = (("g1", "greedy"), ("g2", "greedy"))


@dataclass(frozen=True)
class KeyLostInAStore:
    """A store holding the signed logs a data directory wrote, then that directory's
    ``matches/`` emptied out (the store keeps the logs) and its key gone."""

    url: str
    data: DataDir
    #: The public key that signed the logs (the one that is gone).
    signer: str


def lose_the_key(url: str, folder: Path, *, logs_kept_here: bool = False) -> KeyLostInAStore:
    """A real tournament played into the store ``url`` with the data directory
    ``folder/league-data``, then that directory's key gone; its ``matches/`` too unless
    ``logs_kept_here``."""
    path = folder / "s.toml"
    path.write_text(tournament_text(name="s", per_pairing=1, bots=GREEDY, extra="sandbox = false"))
    data = DataDir(folder / "league-data")
    done = bisca("tournament", "run", str(path), "--store", url, "--data", str(data.root))
    assert done.returncode == 0, done.stdout + done.stderr
    signer = ServerKey.load(data.server_key).public_text
    if not logs_kept_here:
        shutil.rmtree(data.matches)
    data.server_key.rename(folder / "server.key.old")
    return KeyLostInAStore(url, data, signer)


@pytest.fixture
def key_lost(postgres: PostgresServer, tmp_path: Path) -> KeyLostInAStore:
    return lose_the_key(postgres.new_database(), tmp_path)


def refused_at_start(argv: list[str], started: str, folder: Path) -> tuple[int, str]:
    """Run a standing ``bisca`` command until it ends (its exit code, and what it said on
    stdout and stderr) or says ``started``: then it was not refused, it is stopped and the
    test fails at once, with what it said."""
    output = folder / f"{argv[0]}.output"
    with output.open("w") as sink:
        process = subprocess.Popen([*BISCA, *argv], stdout=sink, stderr=sink, text=True)
    try:
        poll_until(
            f"`bisca {argv[0]}` to end, or to start",
            lambda: process.poll() is not None or started in output.read_text(),
            120,
        )
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(60)
    said = output.read_text()
    assert started not in said, said
    return process.returncode, said


def refusal_names_the_store_and_the_way_on(said: str, lost: KeyLostInAStore) -> None:
    assert f"{lost.data.server_key} is missing, but the store " in said, said
    assert f"holds logs its key signed in {lost.data.matches} (match s-0001, by " in said, said
    assert lost.signer in said, said  # the key the earlier logs verify with
    assert f"bisca key --new --data {lost.data.root}" in said, said


def test_bisca_serve_refuses_a_new_key_beside_the_logs_its_store_keeps(
    key_lost: KeyLostInAStore,
) -> None:
    argv = ["serve", "--listen", "127.0.0.1:0", "--store", key_lost.url]
    argv += ["--data", str(key_lost.data.root)]
    code, said = refused_at_start(argv, "bisca serving on", key_lost.data.root.parent)
    assert code == 1, said
    refusal_names_the_store_and_the_way_on(said, key_lost)
    assert "Traceback" not in said
    assert not key_lost.data.server_key.exists()
    # `bisca key` given the store asks it as the server does.
    root = str(key_lost.data.root)
    asked = bisca("key", "--data", root, "--store", key_lost.url)
    assert asked.returncode == 1, asked.stdout + asked.stderr
    refusal_names_the_store_and_the_way_on(asked.stderr, key_lost)
    assert not key_lost.data.server_key.exists() and not asked.stdout
    # Asked for, the new key is made (and the server would sign with it).
    made = bisca("key", "--new", "--data", str(key_lost.data.root))
    assert made.returncode == 0 and made.stdout.startswith("ed25519:"), made.stderr
    assert made.stdout.strip() != key_lost.signer


def test_the_store_is_asked_whatever_the_directory_is_called(
    key_lost: KeyLostInAStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store records each log's path as its server spelled it (here whole): the folder
    named relative to where the server now runs is the same folder."""
    monkeypatch.chdir(key_lost.data.root.parent)
    relative = DataDir(Path(key_lost.data.root.name))
    with open_store(key_lost.url, relative.root) as store, pytest.raises(KeyFileError) as refused:
        data_key(relative, kept=store.logs)
    assert "holds logs its key signed in league-data/matches (match s-0001" in str(refused.value)
    assert not relative.server_key.exists()


def test_a_directory_whose_logs_the_store_does_not_keep_gets_its_key(
    key_lost: KeyLostInAStore, tmp_path: Path
) -> None:
    """Another machine's folder (a worker's): its key signs its own logs."""
    other = DataDir(tmp_path / "worker-data")
    other.create()  # (its folders: not a new one)
    with open_store(key_lost.url, other.root) as store:
        assert data_key(other, kept=store.logs).public_text != key_lost.signer
    assert other.server_key.exists()


def test_a_new_directory_where_one_was_gets_its_first_key(key_lost: KeyLostInAStore) -> None:
    """A folder made anew (nothing of a server's in it: a fresh machine, or a worker's fresh
    volume at the path an older one had) is not one that lost its key."""
    shutil.rmtree(key_lost.data.root)
    with open_store(key_lost.url, key_lost.data.root) as store:
        assert data_key(key_lost.data, kept=store.logs).public_text != key_lost.signer


def test_bisca_key_names_the_store_a_servers_folder_notes_before_making_a_key(
    key_lost: KeyLostInAStore,
) -> None:
    """A server on a PostgreSQL store notes it in its folder: ``bisca key --data`` alone, on
    that folder without its key, names the store to give (it cannot ask the folder's own
    SQLite file about the league's logs), and makes no key."""
    with open_store(key_lost.url, key_lost.data.root) as store:
        note_store_used(store, key_lost.data.root)  # what `bisca serve --store` does
    alone = bisca("key", "--data", str(key_lost.data.root))
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert "keeps its store in postgresql://" in alone.stderr, alone.stderr
    assert "give --store with that URL" in alone.stderr
    assert not key_lost.data.server_key.exists() and not alone.stdout


def test_a_tournament_on_the_store_refuses_a_new_key_beside_its_logs(
    key_lost: KeyLostInAStore,
) -> None:
    """Every arena asks the store (not only ``bisca serve``): the tournament that wrote those
    logs, run again with its folder's key gone, is refused the same way and makes no key."""
    spec = key_lost.data.root.parent / "s.toml"
    again = bisca(
        "tournament", "run", str(spec), "--store", key_lost.url, "--data", str(key_lost.data.root)
    )
    assert again.returncode == 1, again.stdout + again.stderr
    refusal_names_the_store_and_the_way_on(again.stderr, key_lost)
    assert "Traceback" not in again.stderr
    assert not key_lost.data.server_key.exists()
