"""The gate, with the real sandbox: a Python bot that does not compile fails at its build,
one that does not speak the protocol fails at check-bot with the report, neither plays, and
nothing of the gate's scratch is left behind (the way to active: the league server's test,
``tests/cli/test_league_server.py``)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits, pack_folder, take_submission
from bisca.server.cli import main
from bisca.server.hosting import Gate
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store, VersionState, VersionStep

pytestmark = pytest.mark.system


def submitted(store: Store, folder: Path) -> Gate:
    limits = SubmissionLimits(build_s=60)
    uploads = store.data_dir / "submissions"
    take_submission(store, limits, uploads, "alice", io.BytesIO(pack_folder(folder)))
    return Gate(store, uploads, limits, SandboxPolicy(), store.data_dir / "gate")


def test_a_bot_that_does_not_build_or_speak_the_protocol_fails_with_why(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    bot = tmp_path / "mybot"
    assert main(["new-bot", "python", str(bot)]) == 0
    # The way to active is the league server's test (tests/cli/test_league_server.py).
    (bot / "my_bot.py").write_text("def broken(:\n")
    [unbuilt] = submitted(store, bot).run_pending()
    assert unbuilt.state is VersionState.FAILED and unbuilt.reason.startswith("build failed")
    build = store.versions.steps("mybot", 1)[-1]
    assert build.step is VersionStep.BUILD and "SyntaxError" in build.output

    (bot / "my_bot.py").write_text("import sys\nprint('no protocol here', file=sys.stderr)\n")
    [mute] = submitted(store, bot).run_pending()
    assert mute.state is VersionState.FAILED and mute.reason.startswith("check failed")
    check = store.versions.steps("mybot", 2)[-1]
    assert check.step is VersionStep.CHECK and "FAIL" in check.output
    assert store.versions.playing() == []

    # A version a stopped server left half-way through goes through the gate again.
    (bot / "my_bot.py").write_text("def broken(:\n")
    gate = submitted(store, bot)
    store.versions.move("mybot", 3, VersionState.CHECKING)
    [resumed] = gate.run_pending()
    assert (resumed.version, resumed.state) == (3, VersionState.FAILED)
    assert resumed.reason.startswith("build failed")
    assert list((store.data_dir / "gate").iterdir()) == []
    store.close()
