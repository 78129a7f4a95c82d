"""Versions of a league's accounts made active without the gate (its own tests take them
through it: ``tests/hosting/test_gate.py``, ``tests/cli/test_league_server.py``), for the tests
of what active versions do: the ladder."""

from __future__ import annotations

import io
from pathlib import Path

from bisca.server.accounts import SubmissionLimits, pack_folder, take_submission
from bisca.server.cli import main
from bisca.server.store import BotVersionRecord, Store, VersionState

PASSWORD = "a long enough password"


def starter_bot(folder: Path, language: str = "python") -> Path:
    """``bisca new-bot LANGUAGE FOLDER``: the starter bot, named after its folder."""
    assert main(["new-bot", language, str(folder)]) == 0
    return folder


def active_version(store: Store, uploads: Path, account: str, folder: Path) -> BotVersionRecord:
    """``account``'s next version of the bot in ``folder``, submitted and made active."""
    version = take_submission(
        store, SubmissionLimits(), uploads, account, io.BytesIO(pack_folder(folder))
    )
    for state in (VersionState.CHECKING, VersionState.VALIDATING, VersionState.ACTIVE):
        version = store.versions.move(version.bot, version.version, state)
    return version
