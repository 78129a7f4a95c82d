"""The gate, with the real sandbox: a Python bot goes building -> checking -> validating ->
active with every step's output kept; one that does not compile fails at its build, one that
does not speak the protocol fails at check-bot with the report; nothing of the gate's scratch
is left behind."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits, take_submission
from bisca.server.cli import main
from bisca.server.cli._submit import pack
from bisca.server.hosting import Gate
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store, VersionState, VersionStep

pytestmark = pytest.mark.system


def submitted(store: Store, folder: Path) -> Gate:
    limits = SubmissionLimits(build_s=60)
    uploads = store.data_dir / "submissions"
    take_submission(store, limits, uploads, "alice", io.BytesIO(pack(folder)))
    return Gate(store, uploads, limits, SandboxPolicy(), store.data_dir / "gate")


def test_a_python_bot_goes_through_the_gate_and_broken_ones_fail_with_why(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    good = tmp_path / "mybot"
    assert main(["new-bot", "python", str(good)]) == 0
    gate = submitted(store, good)
    [done] = gate.run_pending()
    assert done.state is VersionState.ACTIVE, store.versions.steps("mybot", 1)
    steps = {step.step: step for step in store.versions.steps("mybot", 1)}
    assert list(steps) == [
        VersionStep.UNPACK,
        VersionStep.BUILD,
        VersionStep.CHECK,
        VersionStep.VALIDATION,
    ]
    assert "compiled 1 Python files" in steps[VersionStep.BUILD].output
    assert "check-bot: " in steps[VersionStep.CHECK].output
    assert "0 failed" in steps[VersionStep.CHECK].output
    assert "belote, finished" in steps[VersionStep.VALIDATION].output

    (good / "my_bot.py").write_text("def broken(:\n")
    [unbuilt] = submitted(store, good).run_pending()
    assert unbuilt.state is VersionState.FAILED and unbuilt.reason.startswith("build failed")
    build = store.versions.steps("mybot", 2)[-1]
    assert build.step is VersionStep.BUILD and "SyntaxError" in build.output

    (good / "my_bot.py").write_text("import sys\nprint('no protocol here', file=sys.stderr)\n")
    [mute] = submitted(store, good).run_pending()
    assert mute.state is VersionState.FAILED and mute.reason.startswith("check failed")
    check = store.versions.steps("mybot", 3)[-1]
    assert check.step is VersionStep.CHECK and "FAIL" in check.output
    assert [v.player for v in store.versions.playing()] == ["mybot.v1"]
    assert list((store.data_dir / "gate").iterdir()) == []
    store.close()
