"""Matches left unfinished by a server that is gone are failed when a server starts on the same
data directory; those of a server that still runs (another process sharing the directory) are
left alone."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bisca.server.edge import ServerConfig, ServerLease, running_server
from bisca.server.store import Store

CLOCK = {"move_ms": 1000, "bank_ms": 0, "policy": "default"}
BOTS = ["a", "b", "c", "d"]


def _start_and_stop(data: Path) -> None:
    async def run() -> None:
        async with running_server(ServerConfig(data_dir=data, listen=["127.0.0.1:0"])):
            pass

    asyncio.run(run())


def test_only_the_matches_of_servers_that_are_gone_are_failed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = Store.in_directory(data)
    alive = ServerLease(data)  # another server, still running
    store.owner = alive.id
    store.matches.create("m-alive", "belote", {}, 1, BOTS, CLOCK)
    store.matches.mark_running("m-alive")
    gone = ServerLease(data)
    store.owner = gone.id
    store.matches.create("m-waiting", "belote", {}, 2, BOTS, CLOCK)
    store.matches.create("m-running", "belote", {}, 3, BOTS, CLOCK)
    store.matches.mark_running("m-running")
    partial = data / "matches" / "m-running" / "m-running.binlog.partial"
    partial.parent.mkdir(parents=True)
    partial.write_bytes(b"")
    store.matches.create("m-failed", "belote", {}, 4, BOTS, CLOCK)
    store.matches.fail("m-failed", "bots never came")
    gone.release()  # as the kernel does when a server dies

    _start_and_stop(data)

    def status(match_id: str) -> tuple[str, str, str | None]:
        record = store.matches.get(match_id)
        assert record is not None
        return record.status, record.reason, record.log_path

    assert status("m-alive") == ("running", "", None)
    for match_id in ("m-waiting", "m-running"):
        assert status(match_id)[0] == "failed"
        assert status(match_id)[1].startswith("cut off: the server process running it stopped")
    assert status("m-running")[2] == str(partial)
    assert status("m-waiting")[2] is None
    assert status("m-failed") == ("failed", "bots never came", None)
    assert sorted(p.name for p in (data / "servers").iterdir()) == [f"{alive.id}.lock"]

    alive.release()
    _start_and_stop(data)
    assert status("m-alive")[0] == "failed"
    assert list((data / "servers").iterdir()) == []
    store.close()
