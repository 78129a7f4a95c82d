"""A data directory whose logs were signed and whose ``server.key`` is gone gets no new key
without being asked for one (operator review): a server that made one in silence turned every
earlier log "untrusted" in ``replay verify`` and in the web app, and nobody was told why."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.datadir import DataDir
from bisca.server.errors import KeyFileError
from bisca.server.logs import LogWriter, ServerKey, data_key
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2
from tests.support.log_entries import belote_header


@pytest.fixture
def key_lost(tmp_path: Path) -> DataDir:
    """A data directory with one log its key signed, then its key gone."""
    data = DataDir(tmp_path / "league-data")
    data.create()
    path = data.match_log("m-signed")
    path.parent.mkdir(parents=True)
    writer = LogWriter(path, data_key(data))
    writer.write(belote_header("m-signed"))
    writer.complete(log_pb2.LogFooter(status=pb.MATCH_STATUS_FAILED, steps=0))
    data.server_key.rename(data.root.parent / "server.key.moved")
    return data


def _key_command(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["key", *argv])
    return code, out.getvalue(), err.getvalue()


def test_a_server_refuses_to_sign_with_a_new_key_beside_signed_logs(key_lost: DataDir) -> None:
    with pytest.raises(KeyFileError, match=r"is missing, but .* holds logs its key signed"):
        data_key(key_lost)
    assert not key_lost.server_key.exists()
    code, out, err = _key_command("--data", str(key_lost.root))
    assert code == 1 and out == "", out
    assert "restore it from its backup" in err and "bisca key --new --data" in err, err
    assert not key_lost.server_key.exists()


def test_a_new_key_is_made_when_asked_for_and_only_where_none_is(key_lost: DataDir) -> None:
    code, out, err = _key_command("--new", "--data", str(key_lost.root))
    assert code == 0 and out.startswith("ed25519:") and "a new key" in err, (out, err)
    assert data_key(key_lost).public_text == out.strip()  # the server signs with it now
    code, _, err = _key_command("--new", "--data", str(key_lost.root))
    assert code == 1 and "exists: --new makes a key only where it is missing" in err, err
    assert ServerKey.load(key_lost.server_key).public_text == out.strip()


def test_a_data_directory_without_logs_gets_its_first_key(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "fresh")
    data.create()
    assert data_key(data).public_text == ServerKey.load(data.server_key).public_text
