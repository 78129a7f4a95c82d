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
from pathlib import Path

import pytest

from bisca.engine import GAMES
from bisca.server.datadir import DataDir
from bisca.server.edge import ServerConfig
from bisca.server.hosting import Ladder
from bisca.server.hosting._ladder import ALLOCATION_SLACK, cut_to_tail
from bisca.server.league import LadderSettings
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import MAX_SEAT_OUTPUT, SeatOutput
from bisca.server.tournament import running_arena
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
