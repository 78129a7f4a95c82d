"""A server killed mid-match: the next server on its data directory marks the match failed
(keeping its partial log); it never stays 'running' forever."""

from __future__ import annotations

from pathlib import Path

from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.arena import start_arena, stop_arena
from tests.support.waiting import poll_until


def test_a_match_cut_off_by_kill_9_is_failed_by_the_next_server(tmp_path: Path) -> None:
    arena, _ = start_arena(tmp_path)
    try:
        bots = [arena.register() for _ in range(4)]
        for _, token in bots:
            arena.rogue(token, "never_answer")
        match_id = arena.create(
            "belote",
            [name for name, _ in bots],
            clock=pb.ClockSettings(move_ms=60_000, bank_ms=0),
        )
        partial = arena.data_dir / "matches" / match_id / f"{match_id}.binlog.partial"
        poll_until("the match started", partial.exists, timeout=30)
    finally:
        arena.process.kill()  # kill -9: no chance to record anything
        arena.process.wait()
        for bot in arena.bots:
            bot.kill()
            bot.wait()
    store = Store.in_directory(arena.data_dir)
    record = store.matches.get(match_id)
    store.close()
    assert record is not None and record.status == "running"

    again, _ = start_arena(tmp_path)
    try:
        info = again.info(match_id)
        assert info.status == pb.MATCH_STATUS_FAILED
        assert info.reason.startswith("cut off:")
        assert info.finished_at
    finally:
        stop_arena(again)
    store = Store.in_directory(again.data_dir)
    record = store.matches.get(match_id)
    store.close()
    assert record is not None and record.log_path == str(partial) and partial.exists()
