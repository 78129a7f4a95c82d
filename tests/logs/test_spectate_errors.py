"""Watching a finished match whose log is gone or is not a log: a clear refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from bisca.server.edge import open_watch
from bisca.server.errors import OperatorError
from bisca.server.referee import Referee
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb

CLOCK = {"move_ms": 1000, "bank_ms": 0, "policy": "default"}


@pytest.mark.parametrize("content", [None, b"not a log at all\n" * 4])
def test_a_log_that_cannot_be_read_is_refused_naming_it(
    tmp_path: Path, content: bytes | None
) -> None:
    store = Store.in_directory(tmp_path / "data")
    store.matches.create("m-1", "belote", {}, 1, ["a", "b", "c", "d"], CLOCK)
    store.matches.fail("m-1", "bots never came")
    path = tmp_path / "m-1.binlog"
    if content is not None:
        path.write_bytes(content)
    store.logs.record("m-1", str(path), None)
    pushed: list[pb.WatchUpdate | None] = []

    async def watch() -> None:
        await open_watch(Referee(store), pb.WatchMatchRequest(match_id="m-1"), pushed.append)

    with pytest.raises(OperatorError) as refused:
        trio.run(watch)
    assert refused.value.status == "FAILED_PRECONDITION"
    assert refused.value.message.startswith("the log of match m-1 cannot be read: ")
    assert str(path) in refused.value.message
    assert pushed == []
