"""A hosted bot's output on the ladder, with the real sandbox: its stdout and stderr go to files
beside each match, bounded only by the sandbox's file size limit (``file_mb``, 64 MiB each), and
the ladder plays on without end, so what a loud bot writes in every match would fill the
server's disk.  Once the match is over, what its owner may read (the last
``MAX_SEAT_OUTPUT`` bytes of each) is in the store, and the files beside the match are removed
(whether the store could keep them or not)."""

from __future__ import annotations

import asyncio
import ctypes
import os
import random
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bisca.engine import GAMES
from bisca.server.datadir import DataDir
from bisca.server.edge import ServerConfig, fail_cut_off_matches
from bisca.server.hosting import Ladder, ladder_running
from bisca.server.hosting import _ladder as ladder_module
from bisca.server.league import LadderSettings
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import MAX_SEAT_OUTPUT, SeatOutput, Store, StoreError
from bisca.server.textfiles import cut_to_tail
from bisca.server.tournament import running_arena
from tests.store.support import CLOCK, output_kept_at
from tests.support.league import PASSWORD, active_version
from tests.support.waiting import loop_until

pytestmark = pytest.mark.system

#: Writes 2 MiB on each of its outputs, the last line on stderr marked, then leaves.
LOUD = """import sys
sys.stdout.write("o" * (2 * 2**20))
sys.stdout.flush()
sys.stderr.write("e" * (2 * 2**20) + "\\nloud: the last line\\n")
raise SystemExit(1)
"""


def loud_bot(folder: Path, name: str) -> Path:
    folder.mkdir(mode=0o755)
    (folder / "my_bot.py").write_text(LOUD)
    (folder / "bisca-bot.toml").write_text(
        f'name = "{name}"\ngames = ["belote"]\nlanguage = "python"\ncommand = "python my_bot.py"\n'
    )
    return folder


async def play_loud_ladder_match(data: Path, tmp: Path) -> tuple[Path, dict[int, SeatOutput]]:
    """One ladder match of four loud versions; its folder and the output the store kept."""
    config = ServerConfig(data_dir=data, listen=["127.0.0.1:0"], admin_token="t" * 32)
    async with running_arena(config, SandboxPolicy()) as (server, launcher):
        store = server.referee.store
        uploads = data / "submissions"
        for name in ("ada", "bob", "cy", "dee"):
            store.accounts.create(name, PASSWORD)
            active_version(store, uploads, name, loud_bot(tmp / f"{name}bot", f"{name}bot"))
        games = {"belote": GAMES["belote"].settings({"deals": 1})}
        settings = LadderSettings(newcomer_matches=1, duplicate=False)
        ladder = Ladder(store, uploads, games, settings, random.Random(5))
        [match_id] = await ladder.play_next(server, launcher)
        return DataDir(data).match_dir(match_id), store.logs.output(match_id)


def test_a_loud_hosted_bot_leaves_nothing_beside_the_match_once_the_store_keeps_its_output(
    tmp_path: Path,
) -> None:
    match_dir, kept = asyncio.run(play_loud_ladder_match(tmp_path / "data", tmp_path))

    assert sorted(kept) == [0, 1, 2, 3]
    for output in kept.values():
        assert output.stderr.endswith(b"loud: the last line\n")
        assert output.stdout == b"o" * MAX_SEAT_OUTPUT
    assert not list(match_dir.glob("seat*.log"))  # one copy, the store's


@pytest.mark.parametrize(
    "failure",
    [StoreError("the store's disk is full"), RuntimeError("a bug in the store")],
    ids=["store error", "anything else"],
)
def test_a_seats_output_the_store_could_not_keep_leaves_nothing_beside_the_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    """A store that cannot keep a match's output (lost, or a bug): its files are removed all
    the same (review s56: kept cut beside the match, they were shown after the store forgot
    what it kept, and never removed; anything but a store error left them whole)."""
    store = Store(tmp_path / "bisca.sqlite3")
    ladder = Ladder(store, tmp_path / "submissions", {}, LadderSettings(), random.Random(1))

    def fails(seats: object) -> None:
        raise failure

    monkeypatch.setattr(store.logs, "put_output", fails)
    for stream in ("stdout", "stderr"):
        (tmp_path / f"seat0.{stream}.log").write_bytes(b"x" * (2 * MAX_SEAT_OUTPUT))

    if isinstance(failure, StoreError):
        ladder.keep_output("m1", tmp_path, [0])  # (logged: the match is recorded already)
    else:
        with pytest.raises(RuntimeError, match="a bug in the store"):
            ladder.keep_output("m1", tmp_path, [0])

    assert not list(tmp_path.glob("seat*.log"))
    store.close()


def test_the_ladders_sweep_forgets_a_backlog_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review s56: one delete of a backlog held every store call of the server (152 s for
    2 GB on SQLite, which rewrites what it frees).  The sweep takes ``FORGET_BATCH`` seats a
    transaction, until none older is left."""
    store = Store(tmp_path / "bisca.sqlite3")
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "c", "d"], CLOCK)
    output_kept_at(monkeypatch, datetime.now(UTC) - timedelta(days=30))
    store.logs.put_output([SeatOutput("m1", seat, b"e\n", b"o\n") for seat in range(4)])
    batches: list[int] = []
    forget = store.logs.forget_output

    def counted(before: datetime, most: int) -> int:
        batches.append(forget(before, most))
        return batches[-1]

    monkeypatch.setattr(store.logs, "forget_output", counted)
    monkeypatch.setattr(ladder_module, "FORGET_BATCH", 3)
    ladder = Ladder(store, tmp_path / "submissions", {}, LadderSettings(), random.Random(1))

    assert asyncio.run(ladder.forget_output()) == 4
    assert batches == [3, 1]
    assert store.logs.output("m1") == {}
    store.close()


def test_the_served_ladder_forgets_its_seats_output_after_output_days(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each seat may keep 128 KiB a match and the ladder plays on without end: ``bisca
    serve``'s ladder forgets the output kept more than ``output_days`` ago as it starts (and
    every hour after), and keeps the rest and the matches."""

    async def main() -> None:
        config = ServerConfig(data_dir=tmp_path / "data", listen=["127.0.0.1:0"])
        async with running_arena(config, SandboxPolicy()) as (server, launcher):
            store = server.referee.store
            now = datetime.now(UTC)
            for match_id, age in (
                ("old", timedelta(days=3, minutes=1)),
                ("young", timedelta(days=2)),
            ):
                store.matches.create(match_id, "belote", {}, 1, ["a", "b", "c", "d"], CLOCK)
                output_kept_at(monkeypatch, now - age)
                store.logs.put_output([SeatOutput(match_id, 0, b"e\n", b"o\n")])
            settings = LadderSettings(output_days=3, poll_s=0.05)
            ladder = Ladder(store, tmp_path / "submissions", {}, settings, random.Random(1))
            async with ladder_running(ladder, server, launcher):
                await loop_until(lambda: not store.logs.output("old"), "old output forgotten")
            assert list(store.logs.output("young")) == [0]
            assert store.matches.get("old") is not None

    asyncio.run(main())


def test_a_cut_off_matchs_seat_output_is_cut_to_its_end_as_the_next_server_starts(
    tmp_path: Path,
) -> None:
    """Review s56: a ladder match cut off by a stop (or a killed worker) never reached its end,
    where its seats' output is kept and removed: its files stayed whole, up to ``file_mb``
    each.  The next server to start on the data directory cuts them to their ends as it marks
    the match failed."""
    data = tmp_path / "data"
    store = Store(data / "bisca.sqlite3")
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "c", "d"], CLOCK)
    store.matches.mark_running("m1")  # by a server that is gone
    folder = DataDir(data).match_dir("m1")
    folder.mkdir(parents=True)
    loud = b"x" * (3 * MAX_SEAT_OUTPUT) + b"the last line\n"
    (folder / "seat0.stdout.log").write_bytes(loud)
    (folder / "seat1.stderr.log").write_bytes(b"short\n")

    assert fail_cut_off_matches(store, data, None).failed == 1

    assert (folder / "seat0.stdout.log").read_bytes() == loud[-MAX_SEAT_OUTPUT:]
    assert (folder / "seat1.stderr.log").read_bytes() == b"short\n"
    store.close()


def test_a_cut_gives_back_the_disk_reserved_past_a_files_end(tmp_path: Path) -> None:
    """``fallocate`` with ``FALLOC_FL_KEEP_SIZE`` reserves blocks without growing a file (a
    sandboxed bot may not call it; an unsandboxed one may): cutting the file to its tail
    frees them, whatever its size."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    for text in (b"short\n", b"x" * (2 * MAX_SEAT_OUTPUT) + b"the last line\n"):
        log = tmp_path / "seat0.stderr.log"
        log.write_bytes(text)
        with log.open("r+b") as file:
            keep_size = 0x01  # FALLOC_FL_KEEP_SIZE
            reserved = libc.fallocate(file.fileno(), keep_size, 0, 64 << 20)
            assert reserved == 0, f"fallocate: {os.strerror(ctypes.get_errno())}"
        assert log.stat().st_blocks * 512 >= 64 << 20

        cut_to_tail(log, MAX_SEAT_OUTPUT)

        assert log.read_bytes() == text[-MAX_SEAT_OUTPUT:]
        assert log.stat().st_blocks * 512 <= 2 * MAX_SEAT_OUTPUT + (1 << 20)


def test_each_stream_of_a_seat_is_kept_on_its_own_and_none_stays_behind(tmp_path: Path) -> None:
    """Review s55: a seat whose stdout could not be read lost its stderr too, and neither file
    was cut.  Now a missing or unreadable stream is kept as a line saying so, the other as it
    was written; a file whose mode its bot changed (``fchmod`` through its own descriptor) gets
    the server's back and is read; no file is left in its place."""
    data = tmp_path / "data"
    store = Store(data / "bisca.sqlite3")
    store.matches.create("m1", "belote", {}, 1, ["a", "b", "c", "d"], CLOCK)
    games = {"belote": GAMES["belote"].settings({"deals": 1})}
    ladder = Ladder(store, data / "submissions", games, LadderSettings(), random.Random(1))
    match_dir = tmp_path / "m1"
    match_dir.mkdir()
    loud = b"x" * (2 * MAX_SEAT_OUTPUT) + b"\nthe last line\n"
    (match_dir / "seat0.stderr.log").write_bytes(loud)  # seat 0: its stdout missing
    (match_dir / "seat1.stderr.log").write_bytes(loud)  # seat 1: its stdout made unreadable
    (match_dir / "seat1.stdout.log").write_bytes(loud)
    os.chmod(match_dir / "seat1.stdout.log", 0)
    (match_dir / "seat2.stderr.log").write_bytes(b"seat 2\n")  # seat 2: its stdout a folder
    (match_dir / "seat2.stdout.log").mkdir()

    ladder.keep_output("m1", match_dir, [0, 1, 2])

    kept = store.logs.output("m1")
    assert sorted(kept) == [0, 1, 2]
    assert kept[0].stderr == loud[-MAX_SEAT_OUTPUT:]
    assert (
        kept[0].stdout == b"(Bisca could not read this seat's stdout: No such file or directory)\n"
    )
    assert kept[1].stderr == kept[1].stdout == loud[-MAX_SEAT_OUTPUT:]
    assert kept[2].stderr == b"seat 2\n"
    assert kept[2].stdout is not None and b"could not read this seat's stdout" in kept[2].stdout
    for seat in (0, 1):
        for stream in ("stdout", "stderr"):
            log = match_dir / f"seat{seat}.{stream}.log"
            assert not log.exists(), log
    store.close()


def test_a_file_its_bot_made_unreadable_is_read_by_a_server_that_is_not_root(
    tmp_path: Path,
) -> None:
    """The same as a server that is not root meets it (root reads a file whatever its mode, so
    the test above passes without the mode put back): ``read_kept`` in a process without the
    capabilities that pass over a file's mode."""
    log = tmp_path / "seat0.stdout.log"
    log.write_bytes(b"x" * (2 * MAX_SEAT_OUTPUT) + b"\nthe last line\n")
    os.chmod(log, 0)
    dropped = "-dac_override,-dac_read_search"
    script = (
        "import sys; from pathlib import Path; from bisca.server.hosting._output import"
        f" read_kept; log = Path({str(log)!r});"
        f" sys.stdout.buffer.write(read_kept(log, {MAX_SEAT_OUTPUT})[-14:])"
    )
    done = subprocess.run(
        [
            "setpriv",
            f"--bounding-set={dropped}",
            f"--inh-caps={dropped}",
            sys.executable,
            "-c",
            script,
        ],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"the last line\n"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
