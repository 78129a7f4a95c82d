"""``bisca replay verify`` trusts no key it finds beside a log: a forger who ships a log in a
data directory with their own ``server.key`` gets UNTRUSTED, not OK.  Only a key the user
names (``--key``, ``--data``) or the store's (``--store``) is trusted, and ``replay show``
prints that verdict before the match, warning when the log is not trusted."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import threading
from pathlib import Path

import pytest

from bisca.server.cli import EXIT_OK, EXIT_UNTRUSTED, main
from bisca.server.datadir import DataDir
from bisca.server.logs import LogWriter, ServerKey
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2
from tests.support.log_entries import belote_header

MATCH = "m-forged"


@pytest.fixture
def forged(tmp_path: Path) -> Path:
    """A forger's data directory: their own key, and a log they signed with it in its place."""
    data = DataDir(tmp_path / "shipped")
    data.create()
    forger = ServerKey.load_or_create(data.server_key)
    path = data.match_log(MATCH)
    path.parent.mkdir(parents=True)
    writer = LogWriter(path, forger)
    writer.write(belote_header(MATCH))
    writer.complete(log_pb2.LogFooter(status=pb.MATCH_STATUS_FAILED, steps=0))
    return path


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_a_forged_log_shipped_with_the_forgers_key_is_untrusted(forged: Path) -> None:
    code, out, _ = _run("replay", "verify", str(forged))
    assert code == EXIT_UNTRUSTED, out
    assert "UNTRUSTED" in out and "no key to trust was given" in out, out
    assert "not trusted for being beside the log" in out, out


def test_a_key_the_user_names_is_trusted(forged: Path) -> None:
    data = forged.parents[2]
    code, out, _ = _run("replay", "verify", str(forged), "--data", str(data))
    assert code == EXIT_OK and ": OK," in out, out
    published = ServerKey.load(DataDir(data).server_key).public_text
    code, out, _ = _run("replay", "verify", str(forged), "--key", published)
    assert code == EXIT_OK and ": OK," in out, out
    code, out, _ = _run("replay", "verify", str(forged), "--key", ServerKey.generate().public_text)
    assert code == EXIT_UNTRUSTED and "signed by an unknown key" in out, out


def test_a_servers_private_key_file_is_refused_as_a_key_and_never_printed(forged: Path) -> None:
    """Review 53: ``--key DATA/server.key`` read the server's private key (64 hex digits, as a
    public key's) as a public key, and the verdict printed it."""
    private = DataDir(forged.parents[2]).server_key
    secret = private.read_text().strip()
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        pytest.raises(SystemExit) as refused,
    ):
        main(["replay", "verify", str(forged), "--key", str(private)])
    assert refused.value.code == 2
    assert "holds no public key as `bisca key` prints it" in err.getvalue(), err.getvalue()
    assert "server.key is its private key" in err.getvalue(), err.getvalue()
    assert secret not in out.getvalue() + err.getvalue()
    published = private.with_name("published.key")
    published.write_text(ServerKey.load(private).public_text + "\n")
    code, out, _ = _run("replay", "verify", str(forged), "--key", str(published))
    assert code == EXIT_OK and ": OK," in out, out


def test_show_prints_the_verdict_first_and_warns(forged: Path) -> None:
    code, out, _ = _run("replay", "show", str(forged))
    assert code == EXIT_OK
    first, second = out.splitlines()[:2]
    assert first.startswith(f"{forged}: UNTRUSTED:"), out
    assert second.startswith("WARNING: this log is not trusted"), out
    code, out, _ = _run("replay", "show", str(forged), "--data", str(forged.parents[2]))
    assert out.splitlines()[0].startswith(f"{forged}: OK,"), out
    assert "WARNING" not in out, out


def _signed_log(path: Path, key: ServerKey, reason: str) -> bytes:
    writer = LogWriter(path, key)
    writer.write(belote_header(MATCH))
    writer.complete(log_pb2.LogFooter(status=pb.MATCH_STATUS_FAILED, steps=0, reason=reason))
    return path.read_bytes()


def _writer_end(fifo: Path) -> int | None:
    """The writing end of ``fifo`` if a reader has it open now, else ``None``."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as problem:
        assert problem.errno == errno.ENXIO, problem
        return None


def _hand_out(fifo: Path, contents: list[bytes], stop: threading.Event) -> None:
    """Write each of ``contents`` to a reading of ``fifo`` of its own: the next once the
    reader of the one before has closed it."""
    for data in contents:
        while not stop.is_set() and (descriptor := _writer_end(fifo)) is None:
            stop.wait(0.01)  # no reader yet
        if stop.is_set():
            return
        os.set_blocking(descriptor, True)
        with open(descriptor, "wb") as pipe:
            pipe.write(data)
        while not stop.is_set() and (still := _writer_end(fifo)) is not None:
            os.close(still)  # its reader has not closed it yet
            stop.wait(0.01)


def test_show_shows_the_log_it_verified(tmp_path: Path) -> None:
    """Review 48: ``replay show`` read the file to verify it and again to show it; a pipe
    handing out a genuine log and then a forgery (re-signed by another key) showed the
    forgery under the genuine log's "OK"."""
    server = ServerKey.generate()
    genuine = _signed_log(tmp_path / "genuine.binlog", server, "the genuine end")
    forged = _signed_log(tmp_path / "forged.binlog", ServerKey.generate(), "a forged end")
    fifo = tmp_path / f"{MATCH}.binlog"
    os.mkfifo(fifo)
    stop = threading.Event()
    writer = threading.Thread(target=_hand_out, args=(fifo, [genuine, forged], stop))
    writer.start()
    try:
        code, out, err = _run("replay", "show", str(fifo), "--key", server.public_text)
    finally:
        stop.set()
        writer.join(10)
    assert code == EXIT_OK, err
    assert out.startswith(f"{fifo}: OK, match {MATCH},"), out
    assert "the genuine end" in out and "a forged end" not in out, out


def test_a_data_directory_without_a_key_is_named_as_such(forged: Path, tmp_path: Path) -> None:
    """Review 53: ``--data`` naming a folder with no ``server.key`` was told "no key to trust
    was given", as if ``--data`` had not been."""
    elsewhere = tmp_path / "not-a-data-directory"
    code, out, _ = _run("replay", "verify", str(forged), "--data", str(elsewhere))
    assert code == EXIT_UNTRUSTED, out
    assert f"--data {elsewhere}: no server key at {elsewhere / 'server.key'}" in out, out
