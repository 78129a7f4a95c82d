"""An ended version's files (failed, retired) are removed by the gate's sweep once no match
that is not over seats it: a version never runs again once it ended, and an account's kept
files count against its budget (review s56b).  Its record, steps and results stay."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bisca.server.accounts import (
    DiskFull,
    SubmissionLimits,
    kept_bytes,
    take_submission,
    version_folder,
)
from bisca.server.hosting import Gate, gate_running
from bisca.server.hosting._copies import built_folder
from bisca.server.records import MatchStatus
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import BotVersionRecord, Store, VersionState
from tests.accounts.support import archive, manifest_of
from tests.store.support import CLOCK


def _version(
    store: Store, bot: str, state: VersionState, sent_from: str | None = None
) -> BotVersionRecord:
    uploads = store.data_dir / "submissions"
    data = io.BytesIO(archive(manifest=manifest_of(bot)))
    version = take_submission(store, SubmissionLimits(), uploads, "alice", data, sent_from)
    path = {
        VersionState.FAILED: [VersionState.FAILED],
        VersionState.RETIRED: [VersionState.RETIRED],
        VersionState.ACTIVE: [VersionState.CHECKING, VersionState.VALIDATING, VersionState.ACTIVE],
        VersionState.BUILDING: [],
    }[state]
    for step in path:
        version = store.versions.move(version.bot, version.version, step)
    return version


def test_the_sweep_removes_ended_versions_files_once_no_unfinished_match_seats_them(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    uploads = store.data_dir / "submissions"
    failed = _version(store, "failing", VersionState.FAILED)
    retired = _version(store, "retiring", VersionState.RETIRED)
    active = _version(store, "playing", VersionState.ACTIVE)
    built = built_folder(uploads, retired)
    built.mkdir(parents=True)
    (built / "my_bot").write_bytes(b"\x7fELF")
    # The retired version is seated in a rotation its pairing recorded ahead, not played yet.
    store.matches.create("m1", "belote", {}, 1, [retired.player, "x", "y", "z"], CLOCK)
    gate = Gate(store, uploads, SubmissionLimits(), SandboxPolicy(), tmp_path / "gate")

    assert gate.forget_ended_files() == 1
    assert not version_folder(uploads, failed.bot, failed.version).exists()
    assert version_folder(uploads, retired.bot, retired.version).is_dir() and built.is_dir()

    store.matches.mark_running("m1")
    assert gate.forget_ended_files() == 0  # still seated
    store.matches.fail("m1", "its bots left")
    assert gate.forget_ended_files() == 1
    assert not version_folder(uploads, retired.bot, retired.version).exists()
    assert not built.exists()
    assert version_folder(uploads, active.bot, active.version).is_dir()  # it plays on
    # The store's record of what is kept follows: only the active version's files count.
    assert store.versions.kept_bytes_of("alice") == kept_bytes(uploads, active) > 0
    match = store.matches.get("m1")
    assert match is not None and match.status is MatchStatus.FAILED
    states = {v.bot: v.state for v in store.versions.of_account("alice")}
    assert states == {
        "failing": VersionState.FAILED,
        "retiring": VersionState.RETIRED,
        "playing": VersionState.ACTIVE,
    }
    assert gate.forget_ended_files() == 0
    store.close()


def test_the_served_gate_sweeps_the_ended_versions_files_as_it_starts(tmp_path: Path) -> None:
    """``bisca serve``'s gate thread sweeps at its first pass, then every
    ``ENDED_FILES_SWEEP_S``: files a server of an earlier release left go too."""
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    uploads = store.data_dir / "submissions"
    failed = _version(store, "failing", VersionState.FAILED)
    gate = Gate(store, uploads, SubmissionLimits(), SandboxPolicy(), tmp_path / "gate")
    with gate_running(gate, poll_s=0.05) as passed:
        assert passed.wait(timeout=60)
    assert not version_folder(uploads, failed.bot, failed.version).exists()
    store.close()


@pytest.mark.parametrize(
    ("limits", "said_first", "said_then"),
    [
        (
            SubmissionLimits(account_bytes=64 * 1024),  # (the upload: 8 KiB at most)
            "alice's versions keep 1.0 MiB of files with what",
            "this build made, more than the account's 0.0625 MiB (account_bytes)",
        ),
        (
            SubmissionLimits(address_bytes=64 * 1024),
            "the versions sent from your address, by any account, keep 1.0 MiB of files with what",
            "this build made, more than an address's 0.0625 MiB (address_bytes)",
        ),
    ],
    ids=["account", "address"],
)
def test_what_a_build_made_counts_against_its_accounts_and_its_addresss_budgets(
    tmp_path: Path, limits: SubmissionLimits, said_first: str, said_then: str
) -> None:
    """Review s56d: the budget counted the uploaded files only, and a C++ build's program (up
    to the sandbox's ``file_mb``) was kept beside them for good.  What a build made counts:
    past ``account_bytes``, or past ``address_bytes`` for the address the version was sent
    from, the version fails its build step, saying so (the gate then removes its files, the
    program with them)."""
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    uploads = store.data_dir / "submissions"
    version = _version(store, "compiled", VersionState.ACTIVE, sent_from="203.0.113.7")
    gate = Gate(store, uploads, limits, SandboxPolicy(), tmp_path / "gate")
    assert gate.over_budget_after_build(version) is None
    built = built_folder(uploads, version)
    built.mkdir(parents=True)
    (built / "my_bot").write_bytes(b"\x7fELF" + bytes(1 << 20))

    said = gate.over_budget_after_build(version)

    assert said is not None and said.startswith(said_first), said
    assert said_then in said
    store.close()


def test_a_builds_program_is_not_kept_while_the_disk_keeps_less_than_its_reserve(
    tmp_path: Path,
) -> None:
    """Review s57: the reserve was checked at upload only, and a C++ build's program (up to
    ``file_mb``) was kept below it.  The gate checks it before keeping a build's program: the
    build fails, its log saying the league's disk is nearly full."""
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    uploads = store.data_dir / "submissions"
    version = _version(store, "compiled", VersionState.BUILDING)
    limits = SubmissionLimits(disk_reserve_mb=2**40)
    gate = Gate(store, uploads, limits, SandboxPolicy(), tmp_path / "gate")
    with pytest.raises(DiskFull, match="the league's disk is nearly full"):
        gate._keep_program(version, tmp_path / "program.tar", tmp_path / "work")
    assert not built_folder(uploads, version).exists()
    store.close()
