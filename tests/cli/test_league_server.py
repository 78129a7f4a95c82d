"""A league server for strangers, as its documentation runs it: ``bisca serve --registration
invite``, an invite from the operator, ``bisca account create``, ``bisca new-bot`` and
``bisca submit``, and the version through the server's own gate to ``active``; a second
account is refused the first one's steps."""

from __future__ import annotations

import json
import os
import re
import urllib.request
from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits
from bisca.server.cli import main
from bisca.server.hosting import Gate
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store
from tests.client.test_cpp_bot import ROOT, cpp_bot, node_random
from tests.support.arena import Arena, start_server, stop_arena
from tests.support.waiting import poll_until
from tests.web.support import app_url

PASSWORD = "a long enough password"
__all__ = ["cpp_bot", "node_random"]  # the fixtures that build the C++ SDK, install Node's


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """A ``bisca`` command in process (the server is the test's one process): its exit code,
    stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _league_server(
    tmp_path: Path, data: Path, registration: str, monkeypatch: pytest.MonkeyPatch
) -> Arena:
    """``bisca serve`` of a Belote league with ``--registration registration``; the
    commands of the test answer the password prompt with ``PASSWORD`` and have no token."""
    monkeypatch.setenv("BISCA_PASSWORD", PASSWORD)
    monkeypatch.delenv("BISCA_ACCOUNT_TOKEN", raising=False)
    arena, _ = start_server(
        tmp_path,
        data,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(data)],
        *["--registration", registration, "--league", "belote:deals=1"],
    )
    return arena


@pytest.mark.system
def test_an_invited_stranger_submits_a_python_bot_that_becomes_active(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "league"
    arena = _league_server(tmp_path, data, "invite", monkeypatch)
    try:
        url = app_url(arena)
        server = ["--server", url]
        _, invite, _ = run(capsys, "account", "invite", "--note", "ada", "--data", str(data))
        code = invite.splitlines()[1]
        _, created, _ = run(capsys, "account", "create", "ada", "--invite", code, *server)
        token = created.splitlines()[2]
        assert token.startswith("bisca_at_")
        assert run(capsys, "new-bot", "python", str(tmp_path / "adabot"))[0] == 0
        sent = run(capsys, "submit", str(tmp_path / "adabot"), *server, "--token", token)
        assert sent[0] == 0 and "submitted adabot v1" in sent[1], sent

        def state() -> str | None:
            ask = urllib.request.Request(
                f"{url}/api/bots/adabot/versions/1", headers={"Authorization": f"Bearer {token}"}
            )
            with urllib.request.urlopen(ask, timeout=30) as answer:
                found = str(json.loads(answer.read())["version"]["state"])
            return found if found in ("active", "failed") else None

        assert poll_until("the version passes the gate", state, timeout=240) == "active"
        _, out, _ = run(capsys, "submission", "adabot", "1", *server, "--token", token)
        assert out.startswith("adabot v1: active"), out
        assert "--- build: passed" in out and "--- check: passed" in out
        assert "--- validation: passed" in out

        _, other_code, _ = run(capsys, "account", "invite", "--data", str(data))
        _, other, _ = run(
            capsys, "account", "create", "eve", "--invite", other_code.splitlines()[1], *server
        )
        eve = other.splitlines()[2]
        refused = run(capsys, "submission", "adabot", "1", *server, "--token", eve)
        assert refused[0] == 1 and "its owner's alone" in refused[2]
        _, listed, _ = run(capsys, "account", "list", "--data", str(data))
        assert "ada " in listed and "adabot" in listed
    finally:
        stop_arena(arena)


@pytest.mark.system
def test_node_and_cpp_bots_are_built_by_the_league_and_become_active(
    cpp_bot: Path,
    node_random: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A stranger's Node and C++ starters, whose files name the SDK of the stranger's own
    machine: the league builds each against its own SDKs (the Node SDK with its packages,
    the C++ SDK's build, ``cpp_bot`` making or reusing it) in the sandbox, and both pass."""
    data = tmp_path / "league"
    arena = _league_server(tmp_path, data, "open", monkeypatch)
    try:
        server = ["--server", app_url(arena)]
        _, created, _ = run(capsys, "account", "create", "grace", *server)
        token = ["--token", created.splitlines()[2]]
        elsewhere = "/home/stranger/bisca"
        for language in ("node", "cpp"):
            folder = tmp_path / f"{language}bot"
            assert run(capsys, "new-bot", language, str(folder))[0] == 0
            for name in ("package.json", "CMakeLists.txt"):
                if (folder / name).is_file():  # as written on the stranger's machine
                    text = (folder / name).read_text().replace(str(ROOT), elsewhere)
                    assert elsewhere in text
                    (folder / name).write_text(text)
            sent = run(capsys, "submit", str(folder), *server, *token)
            assert sent[0] == 0 and f"submitted {language}bot v1" in sent[1], sent

        def states() -> list[str] | None:
            out = "".join(run(capsys, "submission", bot, *server, *token)[1] for bot in bots)
            found = re.findall(r"(?:node|cpp)bot v1\s+(\w+)", out)
            return found if all(state in ("active", "failed") for state in found) else None

        bots = ("nodebot", "cppbot")
        ended = poll_until("both versions pass the gate", states, timeout=300, interval=1)
        assert ended == ["active", "active"], [
            run(capsys, "submission", bot, "1", *server, *token) for bot in bots
        ]
        _, node, _ = run(capsys, "submission", "nodebot", "1", *server, *token)
        assert "checked 1 JavaScript files" in node and "--- validation: passed" in node
        _, cpp, _ = run(capsys, "submission", "cppbot", "1", *server, *token)
        assert "built build/my_bot (" in cpp and "--- validation: passed" in cpp

        # What a later run of each version (a ladder match) starts from: its files, with the
        # program its build made, and the league's own Node SDK, never the stranger's path.
        with Store.in_directory(data) as store:
            gate = Gate(store, data / "submissions", SubmissionLimits(), SandboxPolicy(), data)
            nodebot, cppbot = (store.versions.get(bot, 1) for bot in bots)
            assert cppbot is not None and nodebot is not None
            with gate.runnable(cppbot) as command:
                program = Path(command[0])
                kept = data / "builds" / "cppbot" / "v1" / "build" / "my_bot"
                assert os.access(program, os.X_OK) and program.read_bytes() == kept.read_bytes()
            assert not program.exists()
            with gate.runnable(nodebot) as command:
                folder = Path(command[1]).parent
                sdk = (folder / "node_modules" / "bisca-client").resolve()
                assert sdk == ROOT / "clients" / "node"
                assert elsewhere not in (folder / "package.json").read_text()
    finally:
        stop_arena(arena)
