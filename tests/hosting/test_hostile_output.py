"""A hosted bot's output on the ladder, with the real sandbox: its stdout and stderr go to files
beside each match, bounded only by the sandbox's file size limit (``file_mb``, 64 MiB each), and
the ladder plays on without end, so what a loud bot writes in every match would fill the
server's disk.  Once the match is over, what its owner may read (the last
``MAX_SEAT_OUTPUT`` bytes of each) is in the store, and the files beside the match keep no
more."""

from __future__ import annotations

import asyncio
import ctypes
import os
import random
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bisca.engine import GAMES
from bisca.server.datadir import DataDir
from bisca.server.edge import ServerConfig
from bisca.server.hosting import Ladder
from bisca.server.hosting._output import ALLOCATION_SLACK, cut_to_tail
from bisca.server.league import LadderSettings
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import MAX_SEAT_OUTPUT, SeatOutput, Store
from bisca.server.tournament import running_arena
from tests.store.support import CLOCK
from tests.support.league import PASSWORD, active_version

FALLOC_FL_KEEP_SIZE = 0x01

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


def test_a_loud_hosted_bot_leaves_no_more_than_its_kept_output_beside_the_match(
    tmp_path: Path,
) -> None:
    match_dir, kept = asyncio.run(play_loud_ladder_match(tmp_path / "data", tmp_path))

    assert sorted(kept) == [0, 1, 2, 3]
    for seat, output in kept.items():
        assert output.stderr.endswith(b"loud: the last line\n")
        assert output.stdout == b"o" * MAX_SEAT_OUTPUT
        for stream in ("stdout", "stderr"):
            log = match_dir / f"seat{seat}.{stream}.log"
            assert log.stat().st_size <= MAX_SEAT_OUTPUT, log
            # What the owner's page falls back to on this machine is what the store kept.
            assert log.read_bytes() == getattr(output, stream)


def test_the_kept_output_gives_back_the_disk_reserved_past_its_end(tmp_path: Path) -> None:
    """``fallocate`` with ``FALLOC_FL_KEEP_SIZE`` reserves blocks without growing a file (a
    sandboxed bot may not call it; an unsandboxed one may): cutting the file to its tail
    frees them, whatever its size."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    for text in (b"short\n", b"x" * (2 * MAX_SEAT_OUTPUT) + b"the last line\n"):
        log = tmp_path / "seat0.stderr.log"
        log.write_bytes(text)
        with log.open("r+b") as file:
            reserved = libc.fallocate(file.fileno(), FALLOC_FL_KEEP_SIZE, 0, 64 << 20)
            assert reserved == 0, f"fallocate: {os.strerror(ctypes.get_errno())}"
        assert log.stat().st_blocks * 512 >= 64 << 20

        cut_to_tail(log, MAX_SEAT_OUTPUT)

        assert log.read_bytes() == text[-MAX_SEAT_OUTPUT:]
        assert log.stat().st_blocks * 512 <= MAX_SEAT_OUTPUT + ALLOCATION_SLACK


def test_each_stream_of_a_seat_is_kept_on_its_own_and_none_stays_uncut(tmp_path: Path) -> None:
    """Review s55: a seat whose stdout could not be read lost its stderr too, and neither file
    was cut.  Now a missing or unreadable stream is kept as a line saying so, the other as it
    was written; a file whose mode its bot changed (``fchmod`` through its own descriptor) gets
    the server's back and is cut; one that still cannot be read is not left in its place."""
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
    assert stat.S_IMODE((match_dir / "seat1.stdout.log").stat().st_mode) == 0o600
    assert kept[2].stderr == b"seat 2\n"
    assert kept[2].stdout is not None and b"could not read this seat's stdout" in kept[2].stdout
    for seat in (0, 1):
        for stream in ("stdout", "stderr"):
            log = match_dir / f"seat{seat}.{stream}.log"
            assert not log.exists() or log.stat().st_size <= MAX_SEAT_OUTPUT, log
    store.close()


def test_a_file_its_bot_made_unreadable_is_read_and_cut_by_a_server_that_is_not_root(
    tmp_path: Path,
) -> None:
    """The same as a server that is not root meets it (root reads a file whatever its mode):
    ``keep_tail`` in a process without the capabilities that pass over a file's mode."""
    log = tmp_path / "seat0.stdout.log"
    log.write_bytes(b"x" * (2 * MAX_SEAT_OUTPUT) + b"\nthe last line\n")
    os.chmod(log, 0)
    dropped = "-dac_override,-dac_read_search"
    script = (
        "import sys; from pathlib import Path; from bisca.server.hosting._output import keep_tail;"
        f" sys.stdout.buffer.write(keep_tail(Path({str(log)!r}), {MAX_SEAT_OUTPUT})[-14:])"
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
    assert log.stat().st_size == MAX_SEAT_OUTPUT
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
