"""``bisca account``: the operator's commands on the store, the competitor's over HTTP to a
league app (in process)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bisca.server.accounts import Registration
from bisca.server.cli import main

from .league_app import LeagueApp, league_app

PASSWORD = "a long enough password"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LeagueApp]:
    monkeypatch.setenv("BISCA_PASSWORD", PASSWORD)
    monkeypatch.delenv("BISCA_ACCOUNT_TOKEN", raising=False)
    with league_app(tmp_path / "data", Registration.INVITE) as running:
        yield running


def test_invite_create_token_suspend_delete(
    app: LeagueApp, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = ["--data", str(app.data)]
    server = ["--server", app.url]
    assert main(["account", "create", "alice", *server]) == 1
    assert "by invitation" in capsys.readouterr().err

    assert main(["account", "invite", "--note", "for alice", *data]) == 0
    code = capsys.readouterr().out.splitlines()[1]
    assert main(["account", "create", "alice", "--invite", code, *server]) == 0
    out = capsys.readouterr().out
    token = out.splitlines()[2]
    assert "account alice created" in out and token.startswith("bisca_at_")

    monkeypatch.setenv("BISCA_ACCOUNT_TOKEN", token)
    assert main(["account", "token", "create", "alice", "--label", "laptop", *server]) == 0
    second = capsys.readouterr().out.splitlines()[1]
    assert main(["account", "token", "list", *server]) == 0
    listed = capsys.readouterr().out
    assert "laptop" in listed and second not in listed and token not in listed
    second_id = second.removeprefix("bisca_at_")[:16]
    assert main(["account", "token", "revoke", second_id, *server]) == 0
    assert main(["account", "token", "list", "--token", second, *server]) == 1
    assert "sign in first" in capsys.readouterr().err

    assert main(["account", "list", *data]) == 0
    assert "alice" in capsys.readouterr().out
    assert main(["account", "suspend", "alice", *data]) == 0
    assert "its bots stop playing" in capsys.readouterr().out
    assert main(["account", "token", "list", *server]) == 1
    assert main(["account", "reinstate", "alice", *data]) == 0
    assert main(["account", "token", "list", *server]) == 0
    assert main(["account", "delete", "alice", *data]) == 0
    assert main(["account", "token", "list", *server]) == 1
    assert main(["account", "reinstate", "alice", *data]) == 1
    assert "cannot come back" in capsys.readouterr().err
    assert main(["account", "suspend", "nobody", *data]) == 1
    assert "no account named 'nobody'" in capsys.readouterr().err

    monkeypatch.delenv("BISCA_ACCOUNT_TOKEN")
    assert main(["account", "token", "list", *server]) == 1
    assert "no API token" in capsys.readouterr().err
    assert main(["account", "token", "list", "--server", "http://127.0.0.1:1"]) == 1


# `bisca serve`'s group loads the worker's queue: croniter, which procrastinate imports, runs
# `file` on the interpreter as it is imported (in a worker where no test loaded it before).
@pytest.mark.system
def test_serve_refuses_registration_without_the_app_the_sandbox_or_good_limits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--registration", "open", "--data", str(tmp_path)])
    assert "--registration needs --http" in capsys.readouterr().err
    for bad, words in (("files", "expected KEY=VALUE"), ("files=0", "whole number from 1")):
        with pytest.raises(SystemExit):
            main(["serve", "--registration", "open", "--http", "127.0.0.1:0",
                  "--submission-limit", bad, "--data", str(tmp_path)])  # fmt: skip
        assert words in capsys.readouterr().err
    with pytest.raises(SystemExit):  # strangers' bots are never run unsandboxed
        main(["serve", "--http", "127.0.0.1:0", "--registration", "open", "--no-sandbox",
              "--data", str(tmp_path)])  # fmt: skip
    assert "--registration builds and runs strangers' bots: it needs the sandbox" in (
        capsys.readouterr().err
    )
