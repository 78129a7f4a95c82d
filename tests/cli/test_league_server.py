"""A league server for strangers, as its documentation runs it: ``bisca serve --registration
invite``, an invite from the operator, ``bisca account create``, ``bisca new-bot`` and
``bisca submit``, and the version through the server's own gate to ``active``; a second
account is refused the first one's steps.

Then the whole walk of issue 22 by the command line, on one ``bisca serve`` with its ladder
(the browser's is ``tests/web/test_league_pages.py``): a Python, a Node and a C++ starter
submitted, followed through ``building → checking → validating → active`` with ``bisca
submission``, rated by the ladder's matches (``bisca ladder show``), one match's stderr and stdout
read by its owner (``bisca ladder stderr``, ``stdout``), a second version rated beside the
first, and a second account refused the first one's output."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits
from bisca.server.cli import main
from bisca.server.hosting import Gate
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store
from tests.client.test_cpp_bot import ROOT, cpp_bot, node_random
from tests.support.arena import Arena, start_server, stop_arena
from tests.support.league import open_ladder_league
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

        passed = poll_until("the version passes the gate", state, timeout=240)
        _, out, _ = run(capsys, "submission", "adabot", "1", *server, "--token", token)
        assert passed == "active", out  # its steps' output: which check failed, and why
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


#: The gate's states, in order; a poll may miss a short one.
GATE = ["building", "checking", "validating", "active"]
#: Accounts whose connected bots (sample bots dialing in) fill the ladder's Belote tables
#: beside the stranger's versions, as in the browser's test: a table seats four different bots.
FILLERS = ("cy", "dee", "fay")
#: The ladder at a test's pace: a draw every half second, one match a draw, and a pace no
#: version reaches while the test runs (a one-deal match takes under a second on a quiet
#: machine, and the fillers play most of them: at a pace they reach, the stranger's three bots
#: would be left without a fourth).
LADDER = (
    *("--ladder", "matches_per_hour=100000", "--ladder", "duplicate=false"),
    *("--ladder", "poll_s=0.5"),
)
#: Where the stranger's SDK was, as their files name it (the league uses its own).
ELSEWHERE = "/home/stranger/bisca"
#: The gate takes the four versions one at a time: minutes on a loaded machine.
GATE_S = 480
#: The ladder rates a version within a match or two of its becoming active.
RATED_S = 300


def cli(*argv: str) -> tuple[int, str, str]:
    """A ``bisca`` command in process, as :func:`run` without ``capsys`` (for a module's
    fixture): its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@dataclass
class Walk:
    """The stranger's league: its server, grace's token, and every state of each version that
    ``bisca submit`` and ``bisca submission`` showed while the gate took it."""

    arena: Arena
    data: Path
    server: list[str]
    token: list[str]
    states: dict[str, list[str]]


def _submit(walk: Walk, folder: Path) -> None:
    code, out, err = cli("submit", str(folder), *walk.server, *walk.token)
    found = re.match(r"submitted (\w+ v\d+) \(\d+ bytes\): (\w+)", out)
    assert code == 0 and found, (out, err)
    walk.states[found.group(1)] = [found.group(2)]


def _follow(walk: Walk, bots: list[str], until: list[str]) -> None:
    """``bisca submission BOT`` for each of ``bots`` until the versions ``until`` are out of
    the gate, each version's new states kept in ``walk.states``."""

    def ended() -> bool:
        for bot in bots:
            code, out, err = cli("submission", bot, *walk.server, *walk.token)
            assert code == 0, err
            for label, state in re.findall(r"^(\w+ v\d+)\s+(\w+)", out, re.MULTILINE):
                seen = walk.states.setdefault(label, [])
                if not seen or seen[-1] != state:
                    seen.append(state)
        return all(walk.states[label][-1] in ("active", "failed") for label in until)

    poll_until(f"{', '.join(until)} through the gate", ended, timeout=GATE_S, interval=0.25)


@pytest.fixture(scope="module")
def walk(
    cpp_bot: Path, node_random: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Walk]:
    """A league open to strangers with its ladder and three connected fillers; grace signs up
    and submits the starters of ``bisca new-bot python|node|cpp`` (the Node and C++ ones
    naming the SDK of grace's own machine), and, once its first version is active, a second
    version of the Python one; all four through the gate.  ``cpp_bot`` makes (or reuses) the
    C++ SDK's build the league builds C++ bots with, ``node_random`` the Node SDK's packages."""
    tmp = tmp_path_factory.mktemp("league-walk")
    data = tmp / "league"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BISCA_PASSWORD", PASSWORD)
        patch.delenv("BISCA_ACCOUNT_TOKEN", raising=False)
        arena = open_ladder_league(tmp, data, FILLERS, LADDER)
        try:
            server = ["--server", app_url(arena)]
            code, created, err = cli("account", "create", "grace", *server)
            assert code == 0, err
            walk = Walk(arena, data, server, ["--token", created.splitlines()[2]], {})
            for language in ("python", "node", "cpp"):
                folder = tmp / f"{'py' if language == 'python' else language}bot"
                assert cli("new-bot", language, str(folder))[0] == 0
                for name in ("package.json", "CMakeLists.txt"):
                    if (folder / name).is_file():  # as written on the stranger's machine
                        text = (folder / name).read_text().replace(str(ROOT), ELSEWHERE)
                        assert ELSEWHERE in text
                        (folder / name).write_text(text)
                _submit(walk, folder)
            bots = ["pybot", "nodebot", "cppbot"]
            _follow(walk, bots, ["pybot v1"])
            assert walk.states["pybot v1"][-1] == "active", cli(
                "submission", "pybot", "1", *server, *walk.token
            )
            source = tmp / "pybot" / "my_bot.py"
            source.write_text(source.read_text() + "\n# version 2\n")
            _submit(walk, tmp / "pybot")
            _follow(walk, bots, ["nodebot v1", "cppbot v1", "pybot v2"])
            yield walk
        finally:
            stop_arena(arena)


@pytest.mark.system
def test_node_and_cpp_bots_are_built_by_the_league_and_become_active(walk: Walk) -> None:
    """A stranger's Python, Node and C++ starters, the Node and C++ ones naming the SDK of the
    stranger's own machine: the league builds each against its own SDKs (the Node SDK with
    its packages, the C++ SDK's build) in the sandbox, and each goes through the gate's states
    in order, as ``bisca submission`` shows them, to ``active``."""
    for label, seen in walk.states.items():
        # A string, not a tuple: pytest shortens a tuple's repr, and the steps' output (which
        # check failed, and why) is what a failure here needs.
        assert seen[0] == "building" and seen[-1] == "active", f"{label} {seen}:\n" + _steps(
            walk, label
        )
        assert seen == [state for state in GATE if state in seen], f"{label}: {seen}"
        assert len(seen) >= 3, f"{label}: the poll followed too little of the gate: {seen}"
    assert sorted(walk.states) == ["cppbot v1", "nodebot v1", "pybot v1", "pybot v2"]
    python = _steps(walk, "pybot v2")
    assert python.startswith("pybot v2: active") and "--- check: passed" in python
    node = _steps(walk, "nodebot v1")
    assert "checked 1 JavaScript files" in node and "--- validation: passed" in node
    cpp = _steps(walk, "cppbot v1")
    assert "built build/my_bot (" in cpp and "--- validation: passed" in cpp

    # What a later run of each version (a ladder match) starts from: its files, with the
    # program its build made, and the league's own Node SDK, never the stranger's path.
    data = walk.data
    with Store.in_directory(data) as store:
        gate = Gate(store, data / "submissions", SubmissionLimits(), SandboxPolicy(), data)
        nodebot, cppbot = (store.versions.get(bot, 1) for bot in ("nodebot", "cppbot"))
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
            assert ELSEWHERE not in (folder / "package.json").read_text()


def _steps(walk: Walk, label: str) -> str:
    """``bisca submission BOT VERSION``: the version's steps, its owner's."""
    bot, version = label.split(" v")
    return cli("submission", bot, version, *walk.server, *walk.token)[1]


def _ladder(walk: Walk, bot: str, version: int, *token: str) -> dict[str, object]:
    """``bisca ladder show BOT VERSION --json``, with ``token`` (``--token T``) or none."""
    code, out, err = cli("ladder", "show", bot, str(version), "--json", *walk.server, *token)
    assert code == 0, err
    found: dict[str, object] = json.loads(out)
    return found


def _finished(walk: Walk, bot: str, version: int) -> dict[str, object] | None:
    """The version's newest finished ladder match, once it is rated (owner's view)."""
    page = _ladder(walk, bot, version, *walk.token)
    matches = page["matches"]
    assert isinstance(matches, list)
    done = [match for match in matches if match["status"] == "finished"]
    return done[0] if page["ratings"] and done else None


@pytest.mark.system
def test_each_version_is_rated_by_the_ladder_and_its_owner_reads_its_output(
    walk: Walk,
) -> None:
    """``bisca ladder show``, ``bisca ladder stderr`` and ``stdout``, as grace runs them: each
    version rated by the ladder's matches (μ−3σ, its matches with their ids, its counts), one
    match's stderr and stdout of each, and the Python bot's two versions rated side by side."""
    for bot, version in (("pybot", 1), ("nodebot", 1), ("cppbot", 1), ("pybot", 2)):
        player = f"{bot}.v{version}"
        match = poll_until(
            f"{player} rated by a finished ladder match",
            lambda: _finished(walk, bot, version),  # noqa: B023 (called at once)
            timeout=RATED_S,
            interval=0.5,
        )
        assert player in match["players"] and len(match["players"]) == 4

        page = _ladder(walk, bot, version, *walk.token)
        [rating] = page["ratings"]  # type: ignore[misc]
        assert rating["game"] == "belote" and rating["matches"] >= 1
        counts = page["counts"]
        assert isinstance(counts, dict) and counts["matches"] >= 1
        assert counts["illegal_moves"] == 0, counts
        assert page["history"], page

        # The table, as a person reads it: the rating, the match and its id.
        code, out, err = cli("ladder", "show", bot, str(version), *walk.server, *walk.token)
        assert code == 0, err
        assert out.startswith(f"{bot} v{version}: active (hosted, owner grace)"), out
        assert "μ−3σ" in out and "belote" in out and match["match_id"] in out, out
        # The ladder plays on between the page read above and this command: as many or more.
        shown = re.search(r"in its (\d+) matches?: ", out)
        assert shown and int(shown.group(1)) >= counts["matches"], out
        assert " illegal moves, " in out, out
        assert f"bisca ladder stderr {bot} {version} MATCH" in out, out
        assert f"bisca ladder stdout {bot} {version} MATCH" in out, out

        # One match's stderr and stdout, its owner's: every seat of the version in that match.
        for stream in ("stderr", "stdout"):
            code, text, err = cli(
                "ladder", stream, bot, f"v{version}", match["match_id"], *walk.server, *walk.token
            )
            assert code == 0, err
            assert text.startswith(f"--- {player}, seat "), text[:500]

    # Both versions of the Python bot, side by side.
    code, out, err = cli("ladder", "show", "pybot", *walk.server, *walk.token)
    assert code == 0, err
    rows = {
        label: rating
        for label, rating in re.findall(
            r"^\s*(pybot v\d)\s+active\s+belote\s+(-?\d+\.\d\d)", out, re.M
        )
    }
    assert sorted(rows) == ["pybot v1", "pybot v2"], out
    assert "crashes" in out, out  # the owner sees the counts


@pytest.mark.system
def test_another_account_is_refused_a_versions_output(walk: Walk) -> None:
    """eve signs up and reads grace's ladder (public), but not its counts, and is refused the
    stderr and stdout of grace's version in a match it played: 403, named, exit 1."""
    code, created, err = cli("account", "create", "eve", *walk.server)
    assert code == 0, err
    eve = ["--token", created.splitlines()[2]]
    match = poll_until(
        "pybot v1 played", lambda: _finished(walk, "pybot", 1), timeout=RATED_S, interval=0.5
    )
    seen = _ladder(walk, "pybot", 1, *eve)
    assert seen["ratings"] and seen["counts"] is None
    seen_matches = seen["matches"]
    assert isinstance(seen_matches, list) and seen_matches
    assert all(m["stderr"] is None and m["stdout"] is None for m in seen_matches)
    code, out, err = cli("ladder", "show", "pybot", "1", *walk.server, *eve)
    assert code == 0 and "are its owner's alone" in out and match["match_id"] in out, out

    for stream in ("stderr", "stdout"):
        code, out, err = cli("ladder", stream, "pybot", "1", match["match_id"], *walk.server, *eve)
        assert code == 1 and out == "", out
        assert err.startswith(
            f"bisca ladder {stream}: pybot v1's {stream} in match {match['match_id']}: "
            "refused (403): "
        ), err
        assert "its owner's alone" in err and "Traceback" not in err
    code, out, err = cli(
        "ladder", "stderr", "pybot", "1", "no-such-match", *walk.server, *walk.token
    )
    assert code == 1 and "not found (404): pybot v1 played no match 'no-such-match'" in err, err
