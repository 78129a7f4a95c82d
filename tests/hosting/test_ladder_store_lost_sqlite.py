"""A served ladder (``bisca serve --ladder`` on a SQLite league) whose disk fills while a pairing
is played (operator review 55, finding 9): a rotation fails, and the store can record nothing,
neither that failure nor the rotations the pairing will not play.  Once the disk has room
again, the ladder closes those rotations itself, saying why, without a restart (they stayed
waiting for good, and kept their deal's finished replays and stderr sealed), and leaves the
finished rotation's result as it was."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from pathlib import Path

import pytest

from bisca.server.edge import ArenaServer, ServerConfig
from bisca.server.hosting import ladder_running
from bisca.server.league import UNPLAYED_LADDER_ROTATION, not_played_ladder_match
from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.sandbox import BotLauncher, SandboxPolicy
from bisca.server.store import Store
from bisca.server.tournament import running_arena
from tests.support.league import on_rotation_end, one_pairing_ladder
from tests.support.waiting import loop_until

pytestmark = pytest.mark.system

#: SQLite's own words for a full disk (``SQLITE_FULL``).
DISK_FULL = "database or disk is full"
#: What the served loop says after its first pass that reached the store again.
ANSWERS_AGAIN = "the ladder: the store answers again"


class FullDisk:
    """The data directory's disk, which fills on :meth:`fill`: SQLite then refuses every write
    (reads still answer, as they do on a full disk), and the store says so as it would, a
    ``StoreError`` naming it; :meth:`free` gives the room back."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self._full = threading.Event()  # (the store is written from worker threads)
        # The store's own SQLite back end: its error goes through the store's translation.
        backend = store._database._backend
        begin = backend.begin

        def begin_unless_full(*, flushed: bool = True) -> None:
            if self._full.is_set():
                raise sqlite3.OperationalError(DISK_FULL)
            begin(flushed=flushed)

        monkeypatch.setattr(backend, "begin", begin_unless_full)

    @property
    def full(self) -> bool:
        return self._full.is_set()

    def fill(self) -> None:
        self._full.set()

    def free(self) -> None:
        self._full.clear()


def _deal(store: Store, seed: int) -> list[MatchRecord]:
    return store.matches.find(None, None, game="belote", seed=seed)


def test_the_rotations_a_full_disk_left_open_are_closed_once_it_has_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bisca.ladder")

    async def scenario() -> tuple[list[MatchRecord], MatchRecord | None, list[MatchRecord]]:
        data = tmp_path / "data"
        config = ServerConfig(data_dir=data, listen=["127.0.0.1:0"], admin_token="t" * 32)
        async with running_arena(config, SandboxPolicy()) as (server, launcher):
            store = server.referee.store
            ladder = one_pairing_ladder(store, tmp_path)
            disk = FullDisk(store, monkeypatch)
            played: list[MatchRecord] = []  # each rotation played, as its end left it

            def note_then_fill(record: MatchRecord) -> None:
                played.append(record)
                disk.fill()  # from the first rotation's end on, the disk is full

            on_rotation_end(ladder, note_then_fill)
            passes_while_full = 0  # the served loop's passes that ended with the disk full
            play_next = ladder.play_next

            async def play_next_counted(server: ArenaServer, launcher: BotLauncher) -> list[str]:
                nonlocal passes_while_full
                try:
                    return await play_next(server, launcher)
                finally:
                    if disk.full:
                        passes_while_full += 1

            ladder.play_next = play_next_counted  # type: ignore[method-assign]
            async with ladder_running(ladder, server, launcher):
                # The pairing's pass ends, then two more while the disk is still full.
                await loop_until(
                    lambda: passes_while_full >= 3, "the ladder's passes with the disk full", 180
                )
                seed = played[0].seed
                assert any(m.status is MatchStatus.WAITING for m in _deal(store, seed))
                disk.free()
                await loop_until(
                    lambda: all(m.status.is_over for m in _deal(store, seed)),
                    "every rotation of the pairing closed once the disk had room",
                    timeout=180,
                )
                await loop_until(
                    lambda: ANSWERS_AGAIN in caplog.messages, "the ladder's pass after", 180
                )
            return played, store.matches.get(played[0].id), _deal(store, seed)

    played, after, deal = asyncio.run(scenario())
    before = played[0]
    assert before.status is MatchStatus.FINISHED
    assert after == before, "the finished rotation's result is untouched"
    assert len(played) == 2 and len(deal) == 4  # the second failed: the pairing stopped
    [failed] = [m for m in deal if m.id == played[1].id]
    unplayed = [m for m in deal if m.id not in {match.id for match in played}]
    # The rotation the full disk failed records its own failure (its runner, late) ...
    assert failed.status is MatchStatus.FAILED and DISK_FULL in failed.reason, failed
    assert not not_played_ladder_match(failed.reason)
    # ... and the two the pairing never came to say so, closed by the ladder.
    assert [(m.status, m.reason) for m in unplayed] == [
        (MatchStatus.FAILED, UNPLAYED_LADDER_ROTATION)
    ] * 2
    said = [(r.levelname, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    ladder_lines = [r for r in caplog.records if r.name == "bisca.ladder"]
    assert not [r for r in ladder_lines if r.exc_info], "the lost store, in one line each"
    loop_lines = [line for line in said if line[1].startswith("the ladder")]
    # The outage is said once, not a traceback a pass; then that the store answers again.
    assert [(level, exc) for level, _, exc in loop_lines] == [("WARNING", False)] * 2, said
    assert "lost the store" in loop_lines[0][1] and DISK_FULL in loop_lines[0][1]
    assert loop_lines[1][1] == ANSWERS_AGAIN
    closed = [m for _, m, _ in said if "left open while the store was lost" in m]
    assert len(closed) == 1 and all(m.id in closed[0] for m in unplayed), said
