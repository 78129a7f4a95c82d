"""Temporary folders of processes killed with SIGKILL are removed by the next process that
makes one in the same place (``bisca/server/tempfolders.py``); those in use, and everything
not ours, are left alone."""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bisca.server import tempfolders
from bisca.server.sandbox import bot_socket
from bisca.server.tempfolders import IN_USE, sweep_abandoned, temporary_folder

#: A process that makes a folder the way ``CALL`` says, prints its path and waits on stdin.
HOLDER = """
import sys
from pathlib import Path
from bisca.server.sandbox import bot_socket
from bisca.server.tempfolders import temporary_folder
with {call} as made:
    print(made, flush=True)
    sys.stdin.readline()
"""


class Holder:
    """A separate process holding one folder (as a bot's server would)."""

    def __init__(self, call: str, parent: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER.format(call=call)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "TMPDIR": str(parent)},
        )
        assert self.process.stdout is not None
        self.path = Path(self.process.stdout.readline().strip())

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def end(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.close()
        assert self.process.wait(timeout=30) == 0


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The system's temporary folder for this test (and its child processes)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(tempfolders, "_last_swept", {})
    yield tmp_path


def test_a_killed_process_folder_is_removed_by_the_next_one_made_there(place: Path) -> None:
    killed = Holder(f'temporary_folder("copy-ann", Path("{place}"))', place)
    (killed.path / "bot.py").write_text("print('a copy of a bot')\n")
    killed.kill()
    assert killed.path.is_dir(), "nothing could remove it as its process was killed"
    with temporary_folder("copy-bob", place) as fresh:
        assert not killed.path.exists()
        assert fresh.is_dir() and (fresh / IN_USE).is_file()
        assert fresh.name.startswith("bisca-copy-bob-")
    assert not fresh.exists()
    assert list(place.iterdir()) == []


def test_the_arena_socket_folder_of_a_killed_server_is_removed(place: Path) -> None:
    own = place / f"bisca-{os.getuid()}"  # the user's private parent in the temporary folder
    killed = Holder("bot_socket()", place)
    assert killed.path.name == "arena.sock" and killed.path.parent.parent == own
    assert stat.S_IMODE(own.stat().st_mode) == 0o711
    killed.kill()
    assert killed.path.parent.is_dir()
    with bot_socket() as socket:
        assert not killed.path.parent.exists()
        assert socket.parent.parent == own
    assert list(own.iterdir()) == []


def test_a_private_parent_someone_else_could_write_to_is_not_used(
    place: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(tempfolders, "_fallback_parent", None)
    squatted = place / f"bisca-{os.getuid()}"
    squatted.mkdir(mode=0o777)
    squatted.chmod(0o777)  # (as another user would leave it, whatever the umask)
    planted = squatted / "bisca-arena-planted"
    planted.mkdir()
    (planted / IN_USE).write_text("")
    with (
        caplog.at_level(logging.WARNING, logger="bisca.server.tempfolders"),
        bot_socket() as socket,
    ):
        assert socket.parent.parent != squatted
        assert stat.S_IMODE(socket.parent.parent.stat().st_mode) == 0o711
    assert planted.is_dir(), "nothing in a folder others may write to is swept"
    assert any("others may write to it (mode 777)" in r.getMessage() for r in caplog.records)


def test_a_folder_in_use_stays_and_is_removed_by_its_owner(place: Path) -> None:
    running = Holder(f'temporary_folder("arena", Path("{place}"))', place)
    try:
        assert sweep_abandoned(place) == 0
        with temporary_folder("arena", place):
            assert running.path.is_dir()
    finally:
        running.end()
    assert not running.path.exists()


def test_what_is_not_ours_is_left_alone(place: Path) -> None:
    kept_output = place / "bisca-check-bot-abc"  # check-bot's kept output: no lock file
    kept_output.mkdir()
    (kept_output / "stderr.log").write_text("why the check failed\n")
    other = place / "someone-else"  # a lock file, but not our name
    other.mkdir()
    (other / IN_USE).write_text("")
    target = place / "bisca-target"
    target.mkdir()
    (target / IN_USE).write_text("")
    (place / "bisca-link").symlink_to(target, target_is_directory=True)
    (place / "bisca-file").write_text("")
    linked_lock = place / "bisca-linked-lock"
    linked_lock.mkdir()
    (linked_lock / IN_USE).symlink_to(other / IN_USE)

    assert sweep_abandoned(place) == 1  # bisca-target: ours, and nobody holds it
    assert sorted(p.name for p in place.iterdir()) == [
        "bisca-check-bot-abc",
        "bisca-file",
        "bisca-link",
        "bisca-linked-lock",
        "someone-else",
    ]
    assert (kept_output / "stderr.log").is_file()


def test_a_place_is_swept_once_in_a_while_not_at_every_folder(place: Path) -> None:
    with temporary_folder("arena", place):
        pass
    killed = Holder(f'temporary_folder("arena", Path("{place}"))', place)
    killed.kill()
    with temporary_folder("arena", place):
        assert killed.path.exists(), "swept a moment ago: not again yet"
    assert sweep_abandoned(place) == 1


def test_a_lock_file_that_is_not_a_regular_file_of_ours_is_no_lock(place: Path) -> None:
    """A FIFO would block the sweep's open forever (and with it a server's start); a folder
    named like the lock would be taken for a free one."""
    fifo = place / "bisca-fifo"
    fifo.mkdir()
    os.mkfifo(fifo / IN_USE)
    folder = place / "bisca-folder"
    (folder / IN_USE).mkdir(parents=True)
    swept: list[int] = []
    sweeper = threading.Thread(target=lambda: swept.append(sweep_abandoned(place)), daemon=True)
    sweeper.start()
    sweeper.join(timeout=60)
    assert swept == [0], "the sweep hung on a FIFO, or took a folder for a lock"
    assert fifo.is_dir() and folder.is_dir()


def _aged(folder: Path, seconds: float) -> Path:
    """Set the folder's last change ``seconds`` ago."""
    then = folder.stat().st_mtime - seconds
    os.utime(folder, (then, then))
    return folder


def test_a_folder_whose_owner_died_before_locking_it_is_removed_once_old(place: Path) -> None:
    """Killed between making the folder and renaming its lock into place: the folder is
    empty, or holds only the lock file under its first name, which nobody holds."""
    grace = tempfolders.NEVER_HELD_GRACE_S
    empty = _aged(Path(tempfile.mkdtemp(prefix="bisca-copy-", dir=place)), grace + 1)
    pending = Path(tempfile.mkdtemp(prefix="bisca-copy-", dir=place))
    (pending / tempfolders.IN_USE_PENDING).write_text("")
    _aged(pending, grace + 1)
    young = Path(tempfile.mkdtemp(prefix="bisca-copy-", dir=place))  # its owner may lock it now
    locking = Path(tempfile.mkdtemp(prefix="bisca-copy-", dir=place))
    held = os.open(locking / tempfolders.IN_USE_PENDING, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # an owner between its flock and rename
        _aged(locking, grace + 1)
        kept_output = place / "bisca-check-bot-abc"  # check-bot's: no lock, but files
        kept_output.mkdir()
        (kept_output / "stderr.log").write_text("why the check failed\n")
        _aged(kept_output, grace + 1)

        assert sweep_abandoned(place) == 2
        assert not empty.exists() and not pending.exists()
        assert young.is_dir() and locking.is_dir() and (kept_output / "stderr.log").is_file()
    finally:
        os.close(held)
    assert sweep_abandoned(place) == 1  # its lock is free now: the owner is gone
    assert not locking.exists() and young.is_dir()


def test_a_parent_of_folders_is_never_taken_for_an_abandoned_one(place: Path) -> None:
    """``bisca-UID`` and a process's fallback ``bisca-UID-*`` hold no lock and are empty
    between two folders: a sweep of the place they are in (the system's temporary folder is
    one) leaves them, however long they have been empty (review 38b)."""
    grace = tempfolders.NEVER_HELD_GRACE_S
    parents = [place / f"bisca-{os.getuid()}", place / f"bisca-{os.getuid()}-k3x9q2ab"]
    for parent in parents:
        parent.mkdir(mode=0o711)
        _aged(parent, grace + 1)
    assert sweep_abandoned(place) == 0
    assert all(parent.is_dir() for parent in parents)
