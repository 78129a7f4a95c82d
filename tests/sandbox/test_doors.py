"""A sandboxed bot process opens its door into the arena as it starts and closes it once it has
ended (``sandbox/_doors.py``): each start of a restarted bot gets a new one, and a door left
open would keep a socket and a server in the arena for as long as the arena runs."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from bisca.server.sandbox import BotLauncher, BotProcess, SandboxPolicy
from tests.support.commands import bisca

pytestmark = pytest.mark.system  # sandboxed bot processes


class RecordedDoor:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.closed = 0
        self.stop_bot: Callable[[str], None] | None = None

    def close(self) -> None:
        self.closed += 1

    def on_flood(self, stop_bot: Callable[[str], None]) -> None:
        self.stop_bot = stop_bot


class RecordedDoors:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.opened: list[RecordedDoor] = []

    def open(self) -> RecordedDoor:
        path = self.folder / f"door{len(self.opened)}"
        path.touch()  # (the sandbox binds it; this bot connects to nothing)
        self.opened.append(RecordedDoor(path))
        return self.opened[-1]


def sandboxed_bot(tmp_path: Path, code: str, *arguments: str) -> tuple[RecordedDoors, BotProcess]:
    """A Python bot of ``code`` in the sandbox, not started, behind recorded doors."""
    doors = RecordedDoors(tmp_path)
    launcher = BotLauncher("127.0.0.1:1", doors, SandboxPolicy(), hidden=[])
    folder = tmp_path / "bot"
    folder.mkdir()
    for path in (tmp_path, folder):
        path.chmod(0o755)  # readable by the bot's uid
    bot = folder / "bot.py"
    bot.write_text(code)
    argv = [sys.executable, str(bot), *arguments]
    return doors, launcher.process(argv, "token", tmp_path / "logs" / "bot")


def test_a_bot_process_closes_its_door_once_it_has_ended(tmp_path: Path) -> None:
    doors, process = sandboxed_bot(
        tmp_path, "import os\nassert os.path.exists('/run/bisca/arena.sock')\n"
    )

    async def main() -> None:
        process.start()
        assert [door.closed for door in doors.opened] == [0]
        assert await process.wait() == 0, process.stderr_text()
        assert [door.closed for door in doors.opened] == [1]
        process.start()  # a restart: a door of its own
        assert await process.stop(30) == 0, process.stderr_text()
        assert [door.closed for door in doors.opened] == [1, 1]
        await process.wait()  # waited again: nothing more to close
        assert [door.closed for door in doors.opened] == [1, 1]

    trio.run(main)


def test_a_bot_whose_door_is_flooded_is_stopped_and_its_end_says_why(tmp_path: Path) -> None:
    """A door whose bot opens calls past its limits (``edge/_doors.py``) tells the process,
    which is killed and gives the door's reason as the limit that ended it; a restart starts
    with no such reason."""
    code = (
        "import sys, time\nif sys.argv[1:] == ['wait']:\n"
        "    print('running', flush=True)\n    time.sleep(600)\n"
    )
    doors, process = sandboxed_bot(tmp_path, code, "wait")
    reason = "calls limit: calls opened on its socket faster than a bot needs"

    async def main() -> None:
        process.start()
        # A door is flooded by its bot, so by a bot that runs: stopped in the sandbox's first
        # milliseconds instead, bwrap's inner process could miss its parent's death (it sets
        # PR_SET_PDEATHSIG as it starts) and was left behind, one per loaded CI run.
        with trio.fail_after(60):
            while b"running" not in process.stdout_path.read_bytes():
                await trio.sleep(0.05)
        stop_bot = doors.opened[0].stop_bot
        assert stop_bot is not None, "the process gave its door no way to stop it"
        stop_bot(reason)
        with trio.fail_after(60):
            assert await process.wait() < 0
        assert process.limit_hit() == reason
        assert reason in process.end_reason()
        process.argv.pop()  # its next start ends by itself
        process.start()
        assert await process.stop(30) == 0, process.stderr_text()
        assert process.limit_hit() == ""

    trio.run(main)


def test_a_bot_ended_by_itself_is_not_said_stopped_by_its_door(tmp_path: Path) -> None:
    """Calls still queued in a door's server may reach its limit after its bot has ended by
    itself, before the door is closed: the bot's end keeps its own reason (review 40)."""
    doors, process = sandboxed_bot(tmp_path, "raise SystemExit(3)\n")
    reason = "calls limit: calls opened on its socket faster than a bot needs"

    async def main() -> None:
        process.start()
        assert process.popen is not None
        with trio.fail_after(60):
            while process.popen.poll() is None:  # ended, not yet waited for
                await trio.sleep(0.05)
        stop_bot = doors.opened[0].stop_bot
        assert stop_bot is not None
        stop_bot(reason)
        assert await process.wait() == 3
        assert process.limit_hit() == "", process.end_reason()

    trio.run(main)


def test_a_bot_refused_before_it_runs_leaves_no_door_open(tmp_path: Path) -> None:
    """The sandbox refuses a bot whose folder is a shared one after its door was opened."""
    doors = RecordedDoors(tmp_path)
    launcher = BotLauncher("127.0.0.1:1", doors, SandboxPolicy(), hidden=[])
    process = launcher.process(
        ["/usr/bin/true"], "token", tmp_path / "logs" / "bot", folder=Path("/tmp")
    )
    try:
        process.start()
    except Exception as refused:
        assert "shared folder" in str(refused), refused
    else:
        raise AssertionError("a shared folder was taken for a bot's own")
    assert [door.closed for door in doors.opened] == [1]


def test_bisca_match_says_in_one_line_that_its_tmpdir_is_too_long(tmp_path: Path) -> None:
    """The bots' sockets are made under TMPDIR, and a unix socket's path holds 107 bytes: a
    TMPDIR too long is refused as the arena starts, naming it (review 39b: the message came
    as the last line of a traceback)."""
    long = tmp_path / ("t" * (90 - len(str(tmp_path))))
    long.mkdir()
    seats = [option for _ in range(4) for option in ("--bot", "random")]
    data = str(tmp_path / "data")
    run = bisca(
        "match", "--game", "belote", "--deals", "1", *seats, "--data", data,
        env={**os.environ, "TMPDIR": str(long)},
    )  # fmt: skip
    assert run.returncode != 0
    assert "set TMPDIR to a shorter folder" in run.stderr and str(long) in run.stderr
    assert "Traceback" not in run.stderr, run.stderr
