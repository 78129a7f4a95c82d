"""``bisca new-bot`` writes a manifest, ``bisca submit`` sends the folder to a league app (in
process), ``bisca submission`` shows it to its owner; the upload endpoint bounds a body
before it looks at who sent it, and a second account gets 403 on the first one's steps."""

from __future__ import annotations

import http.client
import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bisca.server.accounts import Registration, SubmissionLimits
from bisca.server.cli import main
from bisca.server.store import TokenKind

from .league_app import LeagueApp, league_app

LIMIT = 64 * 1024


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LeagueApp]:
    monkeypatch.delenv("BISCA_ACCOUNT_TOKEN", raising=False)
    with league_app(
        tmp_path / "data", Registration.OPEN, SubmissionLimits(archive_bytes=LIMIT)
    ) as running:
        for name in ("alice", "bob"):
            running.accounts.store.accounts.create(name, "a long enough password")
        yield running


def token_of(app: LeagueApp, account: str) -> str:
    return app.accounts.store.accounts.new_token(account, TokenKind.API, "test")[1]


def raw_post(app: LeagueApp, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    where = urlsplit(app.url)
    connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=60)
    try:
        connection.request("POST", "/api/submissions", body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, str(json.loads(answer.read()).get("error", ""))
    finally:
        connection.close()


def test_new_bot_submit_and_show(
    app: LeagueApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mybot"
    assert main(["new-bot", "python", str(folder)]) == 0
    manifest = (folder / "bisca-bot.toml").read_text()
    assert 'name = "mybot"' in manifest and 'command = "python my_bot.py"' in manifest
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "junk.pyc").write_bytes(b"left out")
    server = ["--server", app.url]
    alice = ["--token", token_of(app, "alice")]
    capsys.readouterr()

    assert main(["submit", str(folder), *server, *alice]) == 0
    assert "submitted mybot v1" in capsys.readouterr().out
    assert main(["submit", str(folder), *server, *alice]) == 0
    assert main(["submission", "mybot", *server, *alice]) == 0
    out = capsys.readouterr().out
    assert "mybot v1" in out and "mybot v2" in out and "building" in out
    assert main(["submission", "mybot", "1", *server, *alice]) == 0
    out = capsys.readouterr().out
    assert "--- unpack: passed" in out and "2 files" in out  # no __pycache__

    bob = ["--token", token_of(app, "bob")]
    assert main(["retire", "mybot", "2", *server, *bob]) == 1  # not bob's
    assert "its owner's alone" in capsys.readouterr().err
    assert main(["retire", "mybot", "2", *server, *alice]) == 0
    assert "mybot v2: retired" in capsys.readouterr().out
    assert main(["retire", "mybot", "2", *server, *alice]) == 1
    assert "mybot v2 is retired: it cannot become retired" in capsys.readouterr().err
    assert main(["submission", "mybot", *server, *bob]) == 0  # versions are public
    assert main(["submission", "mybot", "1", *server, *bob]) == 1
    assert "its owner's alone" in capsys.readouterr().err
    assert main(["submit", str(folder), *server, *bob]) == 1
    assert "'mybot' is taken" in capsys.readouterr().err
    assert main(["submission", "mybot", "1", *server]) == 1
    assert "no API token" in capsys.readouterr().err
    # The versions side by side are public: no token asked (review s58e U9).
    assert main(["submission", "mybot", *server]) == 0
    assert "mybot v2" in capsys.readouterr().out

    (folder / "link").symlink_to("/etc/passwd")
    assert main(["submit", str(folder), *server, *alice]) == 1
    assert "symbolic link" in capsys.readouterr().err
    (folder / "link").unlink()
    (folder / "bisca-bot.toml").unlink()
    assert main(["submit", str(folder), *server, *alice]) == 1
    assert "has no bisca-bot.toml" in capsys.readouterr().err


def test_the_follow_it_hint_says_how_the_token_was_given_without_printing_it(
    app: LeagueApp,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Review 45 (L2): after ``submit --token T`` the printed ``bisca submission ...`` had no
    token, and failed as printed; the token itself is never printed again."""
    folder = tmp_path / "mybot"
    assert main(["new-bot", "python", str(folder)]) == 0
    token = token_of(app, "alice")
    capsys.readouterr()
    assert main(["submit", str(folder), "--server", app.url, "--token", token]) == 0
    out = capsys.readouterr().out
    assert (
        f"follow it: bisca submission mybot 1 --server {app.url} "
        "(with your --token, or BISCA_ACCOUNT_TOKEN set)"
    ) in out
    assert token not in out
    monkeypatch.setenv("BISCA_ACCOUNT_TOKEN", token)  # then the printed command works as it is
    assert main(["submit", str(folder), "--server", app.url]) == 0
    out = capsys.readouterr().out
    assert f"follow it: bisca submission mybot 2 --server {app.url}\n" in out
    follow = out.split("follow it: ")[1].split()
    assert main(follow[1:]) == 0  # run as printed (the token from the variable)


def test_the_upload_is_bounded_before_its_sender_is_looked_up(app: LeagueApp) -> None:
    gzip_type = {"Content-Type": "application/gzip"}
    status, error = raw_post(app, b"x" * (LIMIT + 1), gzip_type)
    assert status == 413 and f"over the limit of {LIMIT} bytes" in error
    status, error = raw_post(app, b"x" * 10, gzip_type)
    assert status == 401 and "sign in first" in error
    bearer = {"Authorization": f"Bearer {token_of(app, 'alice')}"}
    status, error = raw_post(app, b"x" * 10, {"Content-Type": "text/plain", **bearer})
    assert status == 403 and "Content-Type must be application/json" in error

    # A hostile archive, through the endpoint: refused with the unpacker's own sentence.
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        link = tarfile.TarInfo("bisca-bot.toml")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/shadow"
        tar.addfile(link)
    status, error = raw_post(app, buffer.getvalue(), {**gzip_type, **bearer})
    assert status == 400 and "a symbolic link (to '/etc/shadow')" in error
    status, error = raw_post(app, b"not gzip at all", {**gzip_type, **bearer})
    assert status == 400 and "not a gzipped tar" in error


def test_a_manifest_the_league_would_refuse_is_refused_before_it_is_sent(
    app: LeagueApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review s59b, M10: every mistake in ``bisca-bot.toml`` was an upload, and a refused
    upload counts against the account's day (17 of them turned a good bot away for 24 hours).
    ``bisca submit`` checks the manifest as the league does, and sends nothing; a manifest that
    starts with a byte-order mark is taken, here and by the league, as other files are."""
    folder = tmp_path / "typo"
    assert main(["new-bot", "python", str(folder)]) == 0
    manifest = folder / "bisca-bot.toml"
    good = manifest.read_text()
    server = ["--server", app.url, "--token", token_of(app, "alice")]
    uploads = app.accounts.store.versions.submitted_since
    capsys.readouterr()
    (folder / "build").mkdir()
    (folder / "build" / "my_bot.py").write_text("")
    for wrong, said in (
        # (a folder the submission leaves out: review s59d, F7)
        (good.replace("python my_bot.py", "python build/my_bot.py"), "leaves out"),
        (good.replace('"belote"', '"belot"'), "unknown game 'belot'"),
        (good.replace("python my_bot.py", "python missing.py"), "missing.py"),
        (good + "colour = 1\n", "unknown key 'colour'"),
    ):
        manifest.write_text(wrong)
        assert main(["submit", str(folder), *server]) == 1
        err = capsys.readouterr().err
        assert said in err and "nothing was sent" in err, err
    assert uploads("alice", "2000-01-01T00:00:00") == 0
    manifest.write_bytes(b"\xef\xbb\xbf" + good.encode())
    assert main(["submit", str(folder), *server]) == 0
    assert "submitted typo v1" in capsys.readouterr().out
