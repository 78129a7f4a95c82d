"""Spectators end to end: WatchMatch and ``bisca watch`` against a real server process."""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest

from bisca import wire
from bisca.engine import GAMES
from bisca.server.datadir import log_file
from bisca.server.logs import read_log
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import bestia_pb2
from tests.support.arena import Arena, clock
from tests.support.commands import BISCA, bisca
from tests.support.waiting import poll_until


def _start_match(
    arena: Arena, game: str, seats: int, hold: Path | None = None, **fields: Any
) -> str:
    """A match whose seat 0 answers slowly enough to watch it live; with ``hold``, it answers
    nothing until that file exists (with a minute per move to wait for it)."""
    name, token = arena.register("slow")
    if hold is None:
        arena.rogue(token, "sleep_ms=25")
        settings = clock(5000, 5000)
    else:
        arena.rogue(token, "sleep_ms=25", f"hold={hold}")
        settings = clock(60_000, 5000)
    names = [name]
    for _ in range(seats - 1):
        other, other_token = arena.register("watched")
        arena.sample_bot(other_token, "random", game)
        names.append(other)
    return arena.create(game, names, clock=settings, **fields)


def _watch(arena: Arena, token: str, **request: Any) -> list[pb.WatchUpdate]:
    call = arena.stub.WatchMatch(
        pb.WatchMatchRequest(**request),
        metadata=[("authorization", f"Bearer {token}")],
        timeout=120,
    )
    return list(call)


def _spectator_token(arena: Arena) -> str:
    return (arena.data_dir / "spectator.token").read_text().strip()


def _engine_events(arena: Arena, match_id: str) -> Any:
    """The match's engine state replayed from its log (the ground truth)."""
    path = log_file(arena.data_dir / "matches" / match_id, match_id)
    log = read_log(path)
    header = log.header
    assert header is not None
    game = wire.game_name(header.game)
    state = GAMES[game].new_match(wire.decode_game_settings(game, header.settings), header.seed)
    for entry in log.entries():
        if entry.WhichOneof("kind") == "step":
            state.apply(wire.decode_game_action(game, entry.step.action))
    return game, state


def _events(updates: list[pb.WatchUpdate]) -> list[Any]:
    return [
        wire.decode_game_event(watched.event)[1]
        for update in updates
        if update.WhichOneof("kind") == "events"
        for watched in update.events.events
    ]


@pytest.mark.parametrize(("game", "seats"), [("belote", 4), ("bestia", 5)])
def test_a_spectator_sees_the_public_view_live_and_never_a_hidden_card(
    arena: Arena, game: str, seats: int
) -> None:
    fields: dict[str, Any] = {"settings": pb.GameSettings(belote={"deals": 1})}
    if game == "bestia":
        fields = {"settings": pb.GameSettings(bestia=bestia_pb2.Settings(seats=seats, rounds=1))}
    match_id = _start_match(arena, game, seats, **fields)
    updates = _watch(arena, _spectator_token(arena), match_id=match_id)
    assert updates[0].start.live and not updates[0].start.omniscient
    assert updates[-1].end.status == pb.MATCH_STATUS_FINISHED
    _, state = _engine_events(arena, match_id)
    assert _events(updates) == state.public_events()
    assert all(w.audience == 0 for u in updates if u.HasField("events") for w in u.events.events)


def test_the_omniscient_view_needs_the_admin_token(arena: Arena) -> None:
    match_id = _start_match(arena, "belote", 4, settings=pb.GameSettings(belote={"deals": 1}))
    with pytest.raises(grpc.RpcError) as denied:
        _watch(arena, _spectator_token(arena), match_id=match_id, omniscient=True)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as unknown:
        _watch(arena, "bisca_nobody", match_id=match_id)
    assert unknown.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as missing:
        _watch(arena, _spectator_token(arena), match_id="m-none")
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    arena.wait(match_id)


def test_the_admin_omniscient_view_is_delayed_by_n_steps(arena: Arena) -> None:
    delay = 6
    match_id = _start_match(arena, "belote", 4, settings=pb.GameSettings(belote={"deals": 1}))
    checked: list[tuple[int, int]] = []
    updates: list[pb.WatchUpdate] = []
    call = arena.stub.WatchMatch(
        pb.WatchMatchRequest(match_id=match_id, omniscient=True, delay_steps=delay),
        metadata=arena.auth,
        timeout=120,
    )
    for update in call:
        updates.append(update)
        if update.HasField("events"):
            info = arena.stub.GetMatch(pb.GetMatchRequest(match_id=match_id), metadata=arena.auth)
            if info.status == pb.MATCH_STATUS_RUNNING:
                checked.append((update.events.after_step, info.steps))
    assert checked, "no batch arrived while the match was running"
    assert all(steps >= after + delay for after, steps in checked), checked
    _, state = _engine_events(arena, match_id)
    assert _events(updates) == [event for _, event in state.all_events()]
    audiences = [w.audience for u in updates if u.HasField("events") for w in u.events.events]
    assert audiences == [audience for audience, _ in state.all_events()]


def test_a_finished_match_is_watched_from_its_log(arena: Arena) -> None:
    match_id = _start_match(arena, "belote", 4, settings=pb.GameSettings(belote={"deals": 1}))
    arena.wait(match_id)
    updates = _watch(arena, _spectator_token(arena), match_id=match_id)
    assert not updates[0].start.live
    _, state = _engine_events(arena, match_id)
    assert _events(updates) == state.public_events()
    watch = ["watch", match_id, "--address", arena.address, "--data", str(arena.data_dir)]
    printed = bisca(*watch, timeout=60, check=True).stdout
    assert "finished, from its log" in printed and "end: finished" in printed
    assert "plays" in printed
    # `bisca watch ... | head -1`: the reader goes away early; no BrokenPipe traceback.
    piped = subprocess.run(
        f"{shlex.join([*BISCA, *watch])} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert piped.stdout.startswith(f"match {match_id}: belote") and piped.stdout.count("\n") == 1
    assert "Traceback" not in piped.stderr and "BrokenPipe" not in piped.stderr, piped.stderr


def test_a_finished_match_whose_log_moved_is_watched_from_the_data_directorys(
    arena: Arena, tmp_path: Path
) -> None:
    """The store names a log by its whole path; where nothing is there any more (the data
    directory moved, or restored from a backup elsewhere), the arena's data directory's copy
    of the match's log is watched; with neither, the watch says the log cannot be read, in
    the system's words, naming no folder of the server's."""
    match_id = _start_match(arena, "belote", 4, settings=pb.GameSettings(belote={"deals": 1}))
    arena.wait(match_id)
    with Store.in_directory(arena.data_dir) as store:
        record = store.matches.get(match_id)
        assert record is not None and record.log_path
        elsewhere = tmp_path / "old-home" / Path(record.log_path).name
        store.logs.record(match_id, str(elsewhere), record.log_hash)
    updates = _watch(arena, _spectator_token(arena), match_id=match_id)
    _, state = _engine_events(arena, match_id)
    assert not updates[0].start.live and _events(updates) == state.public_events()
    log_file(arena.data_dir / "matches" / match_id, match_id).unlink()
    with pytest.raises(grpc.RpcError) as refused:
        _watch(arena, _spectator_token(arena), match_id=match_id)
    details = str(refused.value.details())
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert details == f"the log of match {match_id} cannot be read: No such file or directory"


def test_bisca_watch_prints_a_live_match(arena: Arena, tmp_path: Path) -> None:
    # Seat 0 holds its first answer until `bisca watch` is watching: the match is still live
    # for it, however long the command takes to start on a loaded machine.
    watching = tmp_path / "watching"
    settings = pb.GameSettings(belote={"deals": 1})
    match_id = _start_match(arena, "belote", 4, hold=watching, settings=settings)
    lines: list[str] = []
    watch = ["watch", match_id, "--address", arena.address, "--data", str(arena.data_dir)]
    watcher = subprocess.Popen(
        [*BISCA, *watch],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},  # each line as soon as it is printed
    )
    stdout = watcher.stdout
    assert stdout is not None

    def read() -> None:
        for line in stdout:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    poll_until("bisca watch printed the match's start", lambda: lines, timeout=60)
    watching.touch()
    assert watcher.wait(timeout=120) == 0
    reader.join()
    assert "(public view, live)" in lines[0]
    assert lines[3].startswith("cards: rank then suit")  # the legend, under the seats
    assert any("plays" in line for line in lines) and lines[-5].startswith("end: finished")
