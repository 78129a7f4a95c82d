"""A version's page and the ladder's end of a match, at once: the page found no output in the
store, then no file beside the match, because the ladder had kept it and removed the file in
between (review s56, finding 4: the page said none was kept).  It reads the store again."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits, take_submission
from bisca.server.datadir import OutputStream
from bisca.server.store import SeatOutput, Store, VersionState
from bisca.server.web._ladder import NOT_KEPT, _output_text
from tests.accounts.support import archive
from tests.store.support import CLOCK


def test_a_page_that_finds_the_file_gone_reads_what_the_ladder_kept_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    uploads = store.data_dir / "submissions"
    version = take_submission(store, SubmissionLimits(), uploads, "alice", io.BytesIO(archive()))
    for state in (VersionState.CHECKING, VersionState.VALIDATING, VersionState.ACTIVE):
        version = store.versions.move(version.bot, version.version, state)
    store.matches.create("m1", "belote", {}, 1, [version.player, "x", "y", "z"], CLOCK)
    store.matches.mark_running("m1")
    match = store.matches.get("m1")
    assert match is not None
    store.logs.put_output([SeatOutput("m1", 0, b"kept as the match ended\n", b"")])
    kept = store.logs.output
    looks: list[str] = []

    def before_the_ladder_kept_it(match_id: str) -> dict[int, SeatOutput]:
        looks.append(match_id)
        return {} if len(looks) == 1 else kept(match_id)

    monkeypatch.setattr(store.logs, "output", before_the_ladder_kept_it)

    text = _output_text(store, version, match, OutputStream.STDERR)

    assert text == f"--- {version.player}, seat 0 ---\nkept as the match ended\n"
    assert looks == ["m1", "m1"]
    assert NOT_KEPT not in text
    store.close()
