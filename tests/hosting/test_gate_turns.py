"""The gate takes accounts in turn (``Gate.run_pending``): a version may hold it for minutes
(its build, its check step, its validation match), and oldest first one account's twenty
uploads of the day kept every other owner's version waiting behind them for hours."""

from __future__ import annotations

from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits
from bisca.server.hosting import Gate
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import BotVersionRecord, Store, VersionKind, VersionState
from tests.support.league import PASSWORD


def test_accounts_take_turns_at_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    for account in ("ann", "bob", "cy"):
        store.accounts.create(account, PASSWORD)
    for _ in range(3):
        store.versions.add("ann", "annbot", VersionKind.HOSTED, "", "")
    store.versions.add("bob", "bobbot", VersionKind.HOSTED, "", "")
    order: list[str] = []

    def run(gate: Gate, version: BotVersionRecord) -> BotVersionRecord:
        order.append(version.label)
        if len(order) == 1:  # cy uploads while the gate works on ann's first
            store.versions.add("cy", "cybot", VersionKind.HOSTED, "", "")
        return store.versions.move(version.bot, version.version, VersionState.FAILED, "tested")

    monkeypatch.setattr(Gate, "run", run)
    gate = Gate(store, tmp_path / "uploads", SubmissionLimits(), SandboxPolicy(), tmp_path / "gate")
    done = gate.run_pending()

    assert order == ["annbot v1", "bobbot v1", "cybot v1", "annbot v2", "annbot v3"]
    assert [version.state for version in done] == [VersionState.FAILED] * 5
    assert gate.run_pending() == []
    store.close()
