"""The bot sandbox, end to end: real ``bisca match`` runs, real bubblewrap, bots as processes.

A hostile bot tries every attack a stranger's bot has tried (``bots/hostile.py``); every one
must be blocked, and the match must still finish with the honest bots' results recorded.  The
same bot without the sandbox shows that the attacks are real.  One bot per rlimit shows that
each limit holds and that the match records which one stopped the bot.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from bisca.server.datadir import DataDir
from bisca.server.edge import TRAFFIC_LIMIT_REASON
from bisca.server.sandbox import absolute_argv, bot_folders
from bisca.server.store import Store
from tests.support.commands import bisca
from tests.tournament.support import TournamentFile

BOTS = Path(__file__).parent / "bots"
HOSTILE = BOTS / "hostile.py"
ABUSER = BOTS / "abuser.py"
NEIGHBOUR = BOTS / "neighbour.py"
LATE = BOTS / "late.py"
HONEST = ["--bot", "random", "--bot", "random", "--bot", "random"]


@pytest.fixture
def victim_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that listens: a sandboxed bot must not reach it."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


def play(
    data: Path,
    first_bot: str,
    *options: str,
    prefix: Sequence[str] = (),
    others: Sequence[str] = HONEST,
) -> tuple[subprocess.CompletedProcess[str], str]:
    """One match of ``first_bot`` against ``others`` (the honest bots); ``prefix`` runs the
    arena (a Python prologue that then runs ``-m bisca.server.cli``)."""
    argv = [
        "match", "--game", "belote", "--bot", first_bot, *others, "--deals", "1", "--seed", "5",
        "--move-ms", "5000", "--data", str(data), *options,
    ]  # fmt: skip
    if prefix:
        result = subprocess.run(
            [*prefix, "-m", "bisca.server.cli", *argv], capture_output=True, text=True, timeout=180
        )
    else:
        result = bisca(*argv, timeout=180)
    found = re.search(r"match (m-[0-9a-f]+)", result.stdout)
    assert found, result.stdout + result.stderr
    return result, found.group(1)


def hostile_report(data: Path, match_id: str) -> dict[str, dict[str, object]]:
    stdout = DataDir(data).match_dir(match_id) / "seat0.stdout.log"
    report: dict[str, dict[str, object]] = json.loads(stdout.read_text().splitlines()[0])
    return report


#: Runs a command in a session keyring of its own holding a secret (the arena's, for a bot to
#: try to read): ``KEYCTL_JOIN_SESSION_KEYRING`` then ``add_key``, then ``exec``.
IN_A_KEYRING_WITH_A_SECRET = """\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
assert libc.syscall(250, 1, None) >= 0, os.strerror(ctypes.get_errno())
secret = b"the-arena-secret"
key = libc.syscall(248, b"user", b"bisca-arena-secret", secret, len(secret), ctypes.c_long(-3))
assert key >= 0, os.strerror(ctypes.get_errno())
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


def test_a_hostile_bot_is_blocked_and_the_match_finishes(tmp_path: Path, victim_port: int) -> None:
    data = tmp_path / "data"
    command = f"{sys.executable} {HOSTILE} {tmp_path / 'report.json'} {data} {victim_port}"
    result, match_id = play(
        data, command + " --destructive", "--limit", "processes=24",
        prefix=[sys.executable, "-c", IN_A_KEYRING_WITH_A_SECRET],
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    report = hostile_report(data, match_id)
    assert len(report) == 22
    got = {name: outcome["detail"] for name, outcome in report.items() if outcome["got"]}
    assert got == {}, got
    # The match finished, the honest bots' results are recorded, the store is whole.
    with Store.in_directory(data) as store:
        record = store.matches.get(match_id)
        assert record is not None and record.status == "finished"
        assert [seat.bot_name for seat in record.seats[1:]] == [
            "random-seat1", "random-seat2", "random-seat3",
        ]  # fmt: skip
        assert all(seat.end == "completed" for seat in record.seats)
    db = sqlite3.connect(DataDir(data).store)
    assert db.execute("SELECT count(*) FROM ratings WHERE mu > 90").fetchone() == (0,)
    db.close()
    verified = bisca(
        "replay", "verify", str(DataDir(data).match_log(match_id)), "--data", str(data)
    )
    assert verified.returncode == 0 and ": OK," in verified.stdout, verified.stdout
    assert not (tmp_path / "report.json").exists()  # its own folder is read-only


def test_without_the_sandbox_the_same_attacks_succeed(tmp_path: Path, victim_port: int) -> None:
    """What the sandbox blocks is real: unsandboxed (harmless attacks only), they work."""
    data = tmp_path / "data"
    command = f"{sys.executable} {HOSTILE} {tmp_path / 'report.json'} {data} {victim_port}"
    keyring = [sys.executable, "-c", IN_A_KEYRING_WITH_A_SECRET]
    result, match_id = play(data, command, "--no-sandbox", prefix=keyring)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WITHOUT the sandbox" in result.stderr
    report = hostile_report(data, match_id)
    for attack in (
        "tokens of other bots",
        "operator environment",
        "data directory from open files",
        "tokens, live logs and seeds",
        "other ports on 127.0.0.1",
        "50 processes",
        "session keyring secret",
        "add a key",
        "user namespace and mount",
        "clone into a namespace",
        "io_uring",
        "System V shared memory",
        "a memfd",
        "disk behind its output",
        "socket buffers",
        "a session of its own",
    ):
        assert report[attack]["got"], (attack, report[attack])
    assert "the-arena-secret" in str(report["session keyring secret"]["detail"])


@pytest.mark.parametrize(
    ("kind", "limit", "reason"),
    [
        ("cpu", "cpu_s=3", "cpu limit"),
        ("memory", "memory_mb=1536", "memory limit"),
        ("processes", "processes=24", "process limit"),
        ("open_files", "open_files=64", "open files limit"),
        ("file_size", "file_mb=4", "file size limit"),
        # 48 MB files in /tmp, up to 1.5 GB: RAM the address space limit does not count.
        ("tmp", "tmp_mb=64", "tmp space limit"),
        # Not the sandbox's but its door's (edge/_doors.py): connections, each with a call,
        # opened in a loop (counted by the door's guard as they are accepted, before the call).
        ("calls", "cpu_s=60", "traffic limit"),
    ],
)
def test_each_limit_stops_a_bot_and_the_match_says_which(
    tmp_path: Path, kind: str, limit: str, reason: str
) -> None:
    data = tmp_path / "data"
    result, match_id = play(data, f"{sys.executable} {ABUSER} {kind}", "--limit", limit)
    assert "Traceback" not in result.stderr, result.stderr
    with Store.in_directory(data) as store:
        record = store.matches.get(match_id)
    assert record is not None
    if record.status == "finished":  # stopped mid-match: the seat forfeits, the match goes on
        assert reason in record.seats[0].forfeit_reason, record.seats[0]
        assert record.seats[0].end == "forfeited"
        assert all(seat.end == "completed" for seat in record.seats[1:])
    else:  # stopped before the first request (cpu may, processes does): the match fails so
        assert kind in ("cpu", "processes") and reason in record.reason, record.reason


def test_every_file_of_the_data_directory_is_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    result, _ = play(data, "greedy")
    assert result.returncode == 0, result.stdout + result.stderr
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = [path for path in data.rglob("*") if path.is_file()]
    assert {path.name for path in files} >= {"bisca.sqlite3", "server.key", "spectator.token"}
    assert any(path.name.endswith(".binlog") for path in files)
    loose = {str(p.relative_to(data)): oct(stat.S_IMODE(p.stat().st_mode)) for p in files}
    assert {name: mode for name, mode in loose.items() if mode != "0o600"} == {}


def test_bisca_match_refuses_a_running_servers_data_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    serve = subprocess.Popen(
        [sys.executable, "-m", "bisca.server.cli", "serve", "--listen", "127.0.0.1:0", "--data",
         str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert serve.stdout is not None
        assert "serving" in serve.stdout.readline()
        result = bisca("match", "--game", "belote", "--bot", "random", *HONEST, "--data", str(data))
        assert result.returncode == 2, result.stdout + result.stderr
        assert "a server runs in" in result.stderr and "--data" in result.stderr
        # The server made its (private, empty) matches folder; the refused match wrote nothing.
        assert list(DataDir(data).matches.iterdir()) == []
    finally:
        serve.terminate()
        serve.wait(timeout=30)


def test_bisca_match_has_a_data_directory_of_its_own(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bisca.server.cli", "match", "--game", "belote", "--bot",
         "random", *HONEST, "--deals", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "bisca-data" / "local" / "bisca.sqlite3").exists()
    assert not (tmp_path / "bisca-data" / "bisca.sqlite3").exists()


def test_a_machine_without_bubblewrap_is_told_what_to_install(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bisca.server.cli", "match", "--game", "belote", "--bot",
         "random", *HONEST, "--data", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": str(tmp_path)},  # no bwrap on this PATH
    )  # fmt: skip
    assert result.returncode == 2
    assert "bubblewrap" in result.stderr and "--no-sandbox" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_store_lost_beside_its_logs_is_refused_and_no_log_is_written_over(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    result, match_id = play(data, "random")
    assert result.returncode == 0, result.stdout + result.stderr
    log = DataDir(data).match_log(match_id)
    before = log.read_bytes()
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{DataDir(data).store}{suffix}")
        if path.exists():
            os.truncate(path, 0)
    again = bisca("match", "--game", "belote", "--bot", "random", *HONEST, "--data", str(data))
    assert again.returncode == 2, again.stdout + again.stderr
    assert "lost or damaged" in again.stderr and "Traceback" not in again.stderr
    assert log.read_bytes() == before
    board = bisca("leaderboard", "--game", "belote", "--data", str(data))
    assert board.returncode == 1 and "lost or damaged" in board.stderr


def test_a_tournament_whose_store_is_gone_does_not_write_over_its_logs(
    tmp_path: Path, tournament_file: TournamentFile
) -> None:
    path = tournament_file(per_pairing=1)
    data = tmp_path / "data"
    first = bisca("tournament", "run", str(path), "--data", str(data), timeout=240)
    assert first.returncode == 0, first.stdout + first.stderr
    logs = {log: log.read_bytes() for log in DataDir(data).recorded_logs()}
    assert logs
    for suffix in ("", "-wal", "-shm"):
        Path(f"{DataDir(data).store}{suffix}").unlink(missing_ok=True)
    again = bisca("tournament", "run", str(path), "--data", str(data), timeout=240)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "lost or damaged" in again.stderr and "Traceback" not in again.stderr
    assert {log: log.read_bytes() for log in DataDir(data).recorded_logs()} == logs
    assert not DataDir(data).store.exists() or DataDir(data).store.stat().st_size == 0


def test_a_bot_file_reached_through_a_link_is_run_where_it_really_is(tmp_path: Path) -> None:
    """The sandbox binds the folder a bot's file really is in, so the command names it there:
    through the link (``bots`` linked from elsewhere) it would not be in the sandbox."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "bot.js").write_text("")
    (tmp_path / "linked").symlink_to(real)
    argv = [str(tmp_path / "linked" / "bot.js"), "--seed", "3"]
    assert absolute_argv(["node", *argv])[1:] == [str(real / "bot.js"), "--seed", "3"]
    assert bot_folders(["node", *argv]) == [real]


@pytest.mark.parametrize(
    ("action", "limit", "reason"),
    [
        # Four children of 2.5 CPU seconds each, under a 3 s limit for one process.
        ("cpu-children", "cpu_s=3", "cpu limit: all its processes together"),
        # Four children of 450 MB each, each far under a 1536 MB address space.
        ("memory-children", "memory_mb=1536", "memory limit: all its processes together"),
    ],
)
def test_one_budget_holds_for_all_the_processes_of_a_bot(
    tmp_path: Path, action: str, limit: str, reason: str
) -> None:
    """The children of a bot together pass its budget, and the arena kills the tree."""
    data = tmp_path / "data"
    result, match_id = play(data, f"{sys.executable} {NEIGHBOUR} {action} -", "--limit", limit)
    assert "Traceback" not in result.stderr, result.stderr
    with Store.in_directory(data) as store:
        record = store.matches.get(match_id)
    assert record is not None
    stdout = (DataDir(data).match_dir(match_id) / "seat0.stdout.log").read_text()
    assert "children ended" not in stdout, stdout
    ended = record.seats[0].forfeit_reason if record.status == "finished" else record.reason
    assert reason in ended, (record.status, ended)


def seat_log(data: Path, name: str) -> str:
    """A seat's log of the one match in ``data``, however the match ended."""
    (log,) = data.rglob(name)
    return log.read_text()


def own_folder(tmp_path: Path) -> Path:
    """A bot's folder of its own, with the neighbour bot in it, readable by the bot's uid."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / NEIGHBOUR.name).write_text(NEIGHBOUR.read_text())
    for path in (tmp_path, folder):
        path.chmod(0o755)
    return folder


def test_a_bot_starts_in_its_own_folder(tmp_path: Path) -> None:
    folder = own_folder(tmp_path)
    (folder / "weights.txt").write_text("the bot's own weights")
    (folder / "weights.txt").chmod(0o644)
    data = tmp_path / "data"
    bot = f"{sys.executable} {folder / NEIGHBOUR.name} read weights.txt"
    result, match_id = play(data, bot)
    assert result.returncode == 0, result.stdout + result.stderr
    stdout = (DataDir(data).match_dir(match_id) / "seat0.stdout.log").read_text()
    assert "read weights.txt: the bot's own weights" in stdout, stdout


def test_a_socket_in_a_bots_folder_is_refused_and_never_reached(tmp_path: Path) -> None:
    """A host program listening on a unix socket in the bot's folder: the bot would connect
    to it through the bound folder; the arena refuses to start it, naming the socket."""
    folder = own_folder(tmp_path)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(folder / "listener.sock"))
        (folder / "listener.sock").chmod(0o777)
        listener.listen(4)
        listener.setblocking(False)
        bot = f"{sys.executable} {folder / NEIGHBOUR.name} connect listener.sock"
        result = bisca(
            "match", "--game", "belote", "--bot", bot, *HONEST, "--deals", "1",
            "--data", str(tmp_path / "data"), timeout=180,
        )  # fmt: skip
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert result.returncode != 0, result.stdout + result.stderr
    why = seat_log(tmp_path / "data", "seat0.stderr.log")
    assert f"move {folder / 'listener.sock'} out of the folder" in why, why


def test_a_bot_file_directly_in_tmp_is_refused(tmp_path: Path) -> None:
    """A bot file in the host's /tmp would bind all of it (other users' files): refused, the
    folder named; the other user's file is never read."""
    name = f"bisca-neighbour-{os.getpid()}-{tmp_path.name}"
    bot_file, secret = Path("/tmp") / f"{name}.py", Path("/tmp") / f"{name}.secret"
    try:
        bot_file.write_text(NEIGHBOUR.read_text())
        secret.write_text("another user's file")
        for path in (bot_file, secret):
            path.chmod(0o644)
        data = tmp_path / "data"
        result = bisca(
            "match", "--game", "belote", "--bot", f"{sys.executable} {bot_file} read {secret}",
            *HONEST, "--deals", "1", "--data", str(data), timeout=180,
        )  # fmt: skip
    finally:
        bot_file.unlink(missing_ok=True)
        secret.unlink(missing_ok=True)
    assert result.returncode != 0, result.stdout + result.stderr
    why = seat_log(data, "seat0.stderr.log")
    assert "a shared folder cannot be a bot's folder" in why and why.endswith(": '/tmp'\n"), why
    assert "another user's file" not in seat_log(data, "seat0.stdout.log")


#: Runs the arena with 1,024 open files at most (soft and hard), the usual soft limit.
WITH_1024_OPEN_FILES = """\
import os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


def test_a_bot_cannot_take_the_arenas_connections_from_the_other_bots(tmp_path: Path) -> None:
    """A connection costs the arena a descriptor before anything says whose it is, and gRPC
    caps connections per server, not per peer.  When every sandboxed bot shared one socket,
    1,000 connections held by one bot filled the arena's table (review 38: gRPC's ``File
    descriptor limit reached``, the arena's own files left to what remained), and, once the
    arena capped them, a bot that came during the flood was closed out at the cap (review 38b,
    G2: its match failed with ``bots not connected``).  Each bot now has a door of its own,
    capped at a few connections and guarded (a burst of connections, then a few a second):
    the flood (started before its bot connects) ends its own bot before its match starts,
    and the three bots that connect during it (two seconds after they start, the arena at
    1,024 open files) are never refused a connection: each is welcomed at its first try, or
    told its match is gone (it failed with the flooder's seat)."""
    data = tmp_path / "data"
    low = [sys.executable, "-c", WITH_1024_OPEN_FILES]
    late = [option for _ in range(3) for option in ("--bot", f"{sys.executable} {LATE}")]
    flooding = f"{sys.executable} {ABUSER} connections-first"
    result, match_id = play(data, flooding, prefix=low, others=late)
    assert "File descriptor limit reached" not in result.stderr, result.stderr[-2000:]
    for seat in (1, 2, 3):
        said = seat_log(data, f"seat{seat}.stderr.log")
        assert "welcomed" in said or "unknown bot token" in said, said
        assert " failed " not in said, said
    with Store.in_directory(data) as store:
        record = store.matches.get(match_id)
    assert record is not None and record.status == "failed", record
    assert "seat 0's bot" in record.reason and TRAFFIC_LIMIT_REASON in record.reason, record
