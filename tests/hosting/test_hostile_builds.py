"""Hostile builds, with the real sandbox: a C++ bot's CMakeLists.txt runs the author's code
at configure time, so a build that forks without end, loops, fills its disk or grabs memory is
stopped at its limit and its version failed saying why, and the gate goes on to the next
version; a Node bot's build runs none of its code, and what it asks that the league does not
do (a package from the network, a file that does not parse) fails it at the build, named.

Hosted code reaches nothing of the server (``bots/probe.py``): neither a build nor a hosted
bot at run time (check-bot, the validation match, the ladder) can read the league's store,
its signing key or another account's submission, nor open a TCP connection; the league's
data directory lies in a folder every sandbox binds, open to every uid, so that only the
sandbox's covering of it keeps it out of reach, and the gate and the ladder go on after."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bisca.engine import GAMES
from bisca.server.accounts import SubmissionLimits, pack_folder, take_submission
from bisca.server.datadir import DataDir
from bisca.server.edge import ServerConfig
from bisca.server.hosting import Gate, Ladder, Toolchains
from bisca.server.league import LadderSettings
from bisca.server.logs import ServerKey
from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.sandbox import SandboxPolicy
from bisca.server.sandbox import _sandbox as sandbox_module
from bisca.server.store import BotVersionRecord, Store, VersionState, VersionStep
from bisca.server.tournament import running_arena
from tests.support.league import PASSWORD, active_version, starter_bot
from tests.support.waiting import poll_until

pytestmark = pytest.mark.system

#: The leftover children of the fork bomb are found by this argument.
MARK = "61.2345"
CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(hostile LANGUAGES NONE)\n{}\n"
HOSTILE = {
    "forks": f'execute_process(COMMAND sh -c "while true; do sleep {MARK} & done")',
    "loops": 'execute_process(COMMAND sh -c "while :; do :; done")',
    "fills": (
        'execute_process(COMMAND sh -c "for i in 1 2 3 4 5 6; do head -c 8000000 /dev/zero '
        '> fill$i || exit 1; done"\n'
        "  WORKING_DIRECTORY ${CMAKE_BINARY_DIR} RESULT_VARIABLE failed)\n"
        'if(failed)\n  message(FATAL_ERROR "could not fill the disk: ${failed}")\nendif()'
    ),
    "grabs": (
        "execute_process(COMMAND python3 hog.py WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}\n"
        "  COMMAND_ERROR_IS_FATAL ANY)"
    ),
    "spreads": (
        "execute_process(COMMAND python3 spread.py WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}\n"
        "  COMMAND_ERROR_IS_FATAL ANY)"
    ),
}
#: What the build that grabs memory runs: 16 MiB more at a time until an allocation fails,
#: saying how much it held then.
HOG = """import sys
hoard = []
try:
    while True:
        hoard.append(bytearray(2**24))
except MemoryError:
    print(f"grabbed {16 * len(hoard)} MiB", file=sys.stderr)
    raise
"""


#: What the build that spreads its memory runs: four processes of 100 MiB each, each under
#: the 256 MiB a process may ask for, together past it.
SPREAD = """import os, time
for _ in range(4):
    if os.fork() == 0:
        held = b"x" * (100 * 2**20)
        time.sleep(30)
        os._exit(0)
os.wait()
"""


def write_bot(folder: Path, name: str, language: str, command: str, files: dict[str, str]) -> Path:
    folder.mkdir(mode=0o755)
    manifest = f'name = "{name}"\ngames = ["belote"]\nlanguage = "{language}"\n'
    (folder / "bisca-bot.toml").write_text(manifest + f'command = "{command}"\n')
    for file, text in files.items():
        (folder / file).write_text(text)
    return folder


def leftovers() -> list[str]:
    """Processes still running the fork bomb's children."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if MARK.encode() in words:
            found.append(entry.name)
    return found


def test_a_build_that_forks_loops_fills_its_disk_or_grabs_memory_is_stopped_at_its_limit(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("mallory", "a long enough password")
    limits = SubmissionLimits(build_s=5, build_disk_mb=16, build_memory_mb=256)
    uploads = store.data_dir / "submissions"
    for kind, body in HOSTILE.items():
        files = {"CMakeLists.txt": CMAKE.format(body), "hog.py": HOG, "spread.py": SPREAD}
        folder = write_bot(tmp_path / kind, kind, "cpp", "build/bot", files)
        take_submission(store, limits, uploads, "mallory", io.BytesIO(pack_folder(folder)))
    sdk_build = tmp_path / "sdk-build"  # configure never reaches find_package(bisca)
    sdk_build.mkdir()
    (sdk_build / "bisca-config.cmake").write_text("")
    os.chmod(tmp_path, 0o755)
    toolchains = Toolchains(tmp_path / "no-node", tmp_path / "sdk-build", sdk_build)
    gate = Gate(store, uploads, limits, SandboxPolicy(), store.data_dir / "gate", toolchains)

    ended = {version.bot: version for version in gate.run_pending()}

    assert {bot: version.state for bot, version in ended.items()} == dict.fromkeys(
        HOSTILE, VersionState.FAILED
    )
    logs = {bot: store.versions.steps(bot, 1)[-1] for bot in HOSTILE}
    assert all(step.step is VersionStep.BUILD for step in logs.values())
    assert ended["forks"].reason == "build failed: the build took more than 5 s"
    assert "fork" in logs["forks"].output.lower()  # sh: Cannot fork, at the process limit
    assert ended["loops"].reason == "build failed: the build took more than 5 s"
    assert "No space left on device" in logs["fills"].output
    assert ended["fills"].reason.startswith("build failed: the build exited with status 1")
    grabbed = re.search(r"grabbed (\d+) MiB\nTraceback", logs["grabs"].output)
    assert grabbed and int(grabbed.group(1)) < 256, logs["grabs"].output
    # The hog's MemoryError and the tree's budget race: near 256 MiB held, the process exits
    # with its traceback, unless the tree's next measure (the hog with cmake) kills it first.
    assert re.fullmatch(
        r"build failed: the build ran out of memory: a process of it asked for more than "
        r"build_memory_mb \(256 MiB\), and the build exited with status "
        r"(1|-9 \(memory limit: all its processes together\))",
        ended["grabs"].reason,
    ), ended["grabs"].reason
    assert ended["spreads"].reason == (
        "build failed: the build exited with status -9 (memory limit: all its processes together)"
    ), logs["spreads"].output
    assert poll_until("the fork bomb's children are gone", lambda: not leftovers(), timeout=10)
    assert list((store.data_dir / "gate").iterdir()) == []
    store.close()


def test_a_node_bot_asking_for_packages_or_not_parsing_fails_its_build(tmp_path: Path) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("mallory", "a long enough password")
    limits = SubmissionLimits(build_s=60)
    uploads = store.data_dir / "submissions"
    wants = {"dependencies": {"bisca-client": "file:/etc", "left-pad": "^1.3.0"}}
    bots = {
        "wants": {"my_bot.js": "require('left-pad');\n", "package.json": json.dumps(wants)},
        "broken": {"my_bot.js": "const x = ;\n"},
    }
    for name, files in bots.items():
        folder = write_bot(tmp_path / name, name, "node", "node my_bot.js", files)
        take_submission(store, limits, uploads, "mallory", io.BytesIO(pack_folder(folder)))
    gate = Gate(store, uploads, limits, SandboxPolicy(), store.data_dir / "gate")

    ended = {version.bot: version for version in gate.run_pending()}

    assert ended["wants"].state is VersionState.FAILED
    # The public reason quotes nothing of the bot's files (review 41); its owner's output does.
    assert ended["wants"].reason == (
        "build failed: package.json depends on another package (its build log names it): this "
        "league installs no packages (its builds have no network); a Node bot may depend on "
        "bisca-client only, which the league provides"
    )
    assert "package.json depends on 'left-pad'" in store.versions.steps("wants", 1)[-1].output
    assert ended["broken"].state is VersionState.FAILED
    assert ended["broken"].reason == "build failed: the build exited with status 1"
    output = store.versions.steps("broken", 1)[-1].output
    assert "SyntaxError" in output and "my_bot.js does not parse" in output
    store.close()


PROBE = Path(__file__).parent / "bots" / "probe.py"
#: A package.json's dependencies on the host's folders (only Bisca's Node SDK is ever bound).
NAMED_HOST_FOLDERS = {
    "proc": "file:/proc",
    "cwd": "file:/proc/self/cwd",
    "bisca-client": "file:/proc/self/cwd",
    "etc": "file:/etc",
    "var": "file:/var",
}
#: A C++ bot whose configure step runs the probe, then stops the build.
PROBE_CMAKE = """cmake_minimum_required(VERSION 3.18)
project(prober LANGUAGES NONE)
execute_process(COMMAND python3 probe.py WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  RESULT_VARIABLE reached)
message(FATAL_ERROR "the probe reached ${reached} things of the league")
"""
#: The probe's first words in a Python bot's script: a leak ends the bot, so check-bot (or the
#: validation match, or the ladder's match) fails it where it happens.
PROBE_FIRST = (
    'if __name__ == "__main__":\n'
    "    import probe\n\n"
    "    if probe.main():\n"
    '        raise SystemExit("probe: the league was reached")\n'
)


@dataclass(frozen=True)
class League:
    """A league whose data directory lies in a folder every sandbox binds (as the server's own
    code folders are): only the sandbox's covering of the data directory hides it."""

    data: Path
    uploads: Path


@pytest.fixture
def league(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> League:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    bound = sandbox_module._code_folders
    monkeypatch.setattr(
        sandbox_module, "_code_folders", lambda: sorted({*bound(), shared.resolve()})
    )
    data = shared / "data"
    return League(data, data / "submissions")


def open_to_everyone(folder: Path) -> None:
    """Every folder under ``folder`` 0755 and file 0644 (a data directory is 0700 and its store
    and key 0600; a careless restore from a backup may lose that): no file mode stands between
    a sandbox's uid and them, only what the sandbox shows."""
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port of the host, on every address, that no sandboxed code may reach."""
    with socket.socket() as listening:
        listening.bind(("0.0.0.0", 0))
        listening.listen(16)
        listening.setblocking(False)
        yield listening


def host_addresses() -> list[str]:
    """127.0.0.1 and the host's address on its default route, if it has one."""
    found = ["127.0.0.1"]
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.connect(("192.0.2.1", 9))  # no packet is sent: the kernel picks the route's address
        own = udp.getsockname()[0]
        if own not in found:
            found.append(own)
    return found


def no_connection(listening: socket.socket) -> bool:
    try:
        accepted, _ = listening.accept()
    except BlockingIOError:
        return True
    accepted.close()
    return False


def give_probe(folder: Path, targets: dict[str, list[object]]) -> int:
    """Put the probe and its targets in a bot's folder; how many attempts it makes."""
    shutil.copy(PROBE, folder / "probe.py")
    (folder / "targets.json").write_text(json.dumps(targets))
    return sum(len(items) for items in targets.values())


def targets(data: Path, victim: Path, connect: list[list[object]]) -> dict[str, list[object]]:
    """What the probe tries: the league's store, its signing key and another account's
    submission, its data directory, and the TCP addresses ``connect``."""
    files = sorted(str(path) for path in victim.rglob("*") if path.is_file())
    assert files, f"no submission files in {victim}"
    return {
        "read": [str(DataDir(data).store), str(DataDir(data).server_key), *files],
        "list": [str(data), str(data / "submissions"), str(victim)],
        "connect": [*connect],
    }


def assert_nothing_reached(output: str, attempts: int) -> None:
    """The probe ran, made every attempt, and each was refused."""
    lines = [line for line in output.splitlines() if line.startswith("probe: ")]
    assert f"probe: {attempts} attempts, 0 reached" in lines, output
    tried = [line for line in lines if ": refused (" in line or ": REACHED (" in line]
    assert len(tried) >= attempts and not [line for line in tried if "REACHED" in line], output


def assert_probe_reaches_all_outside(folder: Path, targets: dict[str, list[object]]) -> None:
    """The same probe run on the host, as the server's own user: it reaches every target it
    can (the store, the key, the submission, the listener), so the attempts above are real."""
    done = subprocess.run(
        [sys.executable, "probe.py"], cwd=folder, capture_output=True, text=True, timeout=60
    )
    reachable = sum(len(targets[kind]) for kind in ("read", "list", "connect"))
    # Its finds are left out: what they reach on the host is other tests' copies in /tmp, or
    # none, as the suite happens to run.
    reached = [
        line
        for line in done.stderr.splitlines()
        if ": REACHED (" in line and not line.startswith("probe: find ")
    ]
    assert len(reached) == reachable, done.stderr


def test_a_build_reaches_nothing_of_the_league_and_the_gate_goes_on(
    league: League, listener: socket.socket, tmp_path: Path
) -> None:
    store = Store(league.data / "bisca.sqlite3")
    ServerKey.load_or_create(DataDir(league.data).server_key)
    for account in ("mallory", "victor"):
        store.accounts.create(account, PASSWORD)
    limits = SubmissionLimits(build_s=60)
    victim = starter_bot(tmp_path / "victimbot")
    (victim / "bisca-bot.toml").write_text(
        (victim / "bisca-bot.toml").read_text().replace('"belote", "bestia"', '"belote"')
    )
    pack = io.BytesIO(pack_folder(victim))
    take_submission(store, limits, league.uploads, "victor", pack)
    port = listener.getsockname()[1]
    aims = targets(
        league.data,
        league.uploads / "victimbot" / "v1",
        [[address, port] for address in host_addresses()],
    )
    cmake = {"CMakeLists.txt": PROBE_CMAKE}
    prober = write_bot(tmp_path / "prober", "prober", "cpp", "build/bot", cmake)
    attempts = give_probe(prober, aims)
    hostile = take_submission(
        store, limits, league.uploads, "mallory", io.BytesIO(pack_folder(prober))
    )
    open_to_everyone(league.data)
    sdk_build = tmp_path / "sdk-build"  # configure stops before find_package(bisca)
    sdk_build.mkdir()
    (sdk_build / "bisca-config.cmake").write_text("")
    os.chmod(tmp_path, 0o755)
    toolchains = Toolchains(tmp_path / "no-node", sdk_build, sdk_build)
    gate = Gate(store, league.uploads, limits, SandboxPolicy(), league.data / "gate", toolchains)

    failed = gate.run(hostile)

    build = store.versions.steps("prober", 1)[-1]
    assert build.step is VersionStep.BUILD
    assert_nothing_reached(build.output, attempts)
    assert "the probe reached 0 things of the league" in build.output
    assert failed.state is VersionState.FAILED
    assert failed.reason == "build failed: the build exited with status 1"
    assert no_connection(listener)
    # The gate goes on: the next version (the victim's) is built, checked and validated.
    [after] = gate.run_pending()
    assert (after.bot, after.state) == ("victimbot", VersionState.ACTIVE), after.reason
    assert_probe_reaches_all_outside(prober, aims)
    store.close()


@dataclass
class RunTime:
    attempts: int
    #: The probing version after the gate, and its validation step's output.
    version: BotVersionRecord
    validation: str
    #: The ladder's matches after it, and the probe's stderr in the first.
    matches: list[MatchRecord]
    stderr: str
    #: Whether the test's listener was left without a connection.
    quiet: bool


async def probe_at_run_time(league: League, listener: socket.socket, tmp: Path) -> RunTime:
    config = ServerConfig(data_dir=league.data, listen=["127.0.0.1:0"], admin_token="t" * 32)
    async with running_arena(config, SandboxPolicy()) as (server, launcher):
        store = server.referee.store
        for name in ("ada", "bob", "cy"):
            store.accounts.create(name, PASSWORD)
            active_version(store, league.uploads, name, starter_bot(tmp / f"{name}bot"))
        store.accounts.create("mallory", PASSWORD)
        prober = starter_bot(tmp / "probebot")
        script = prober / "my_bot.py"
        script.write_text(script.read_text().replace('if __name__ == "__main__":\n', PROBE_FIRST))
        host, port = server.address.rsplit(":", 1)
        aims = targets(
            league.data,
            league.uploads / "adabot" / "v1",
            [[host, int(port)], *([a, listener.getsockname()[1]] for a in host_addresses())],
        )
        # Another version's copy of its files, made for each of the ladder's matches.
        aims["find"] = ["/tmp/adabot.v1-*", "/tmp/*/adabot", "/tmp/*/bobbot"]
        # The host's processes and the server's own folder, which a package.json's "file:"
        # dependencies bound into any bot's sandbox (review s58d S2).
        aims["read"] += [f"/proc/{os.getpid()}/cmdline", str(Path.cwd() / "pyproject.toml")]
        (prober / "package.json").write_text(json.dumps({"dependencies": NAMED_HOST_FOLDERS}))
        attempts = give_probe(prober, aims)
        limits = SubmissionLimits(build_s=60)
        pack = io.BytesIO(pack_folder(prober))
        take_submission(store, limits, league.uploads, "mallory", pack)
        open_to_everyone(league.data)
        gate = Gate(store, league.uploads, limits, SandboxPolicy(), league.data / "gate")
        [version] = await asyncio.to_thread(gate.run_pending)
        # A leak in check-bot or the validation match ends the bot there: the version fails.
        steps = {step.step: step.output for step in store.versions.steps("probebot", 1)}
        assert version.state is VersionState.ACTIVE, (version.reason, steps)
        games = {"belote": GAMES["belote"].settings({"deals": 1})}
        settings = LadderSettings(matches_per_hour=50, newcomer_matches=1, duplicate=False)
        ladder = Ladder(store, league.uploads, games, settings, random.Random(5))
        played = await ladder.play_next(server, launcher)
        played += await ladder.play_next(server, launcher)
        matches = [match for match in map(store.matches.get, played) if match is not None]
        first = matches[0]
        seat = first.bots.index("probebot.v1")
        stderr = store.logs.output(first.id)[seat].stderr.decode()
        quiet = no_connection(listener)
        # The targets are real: the arena's port still listens.
        control = {**aims, "find": []}
        await asyncio.to_thread(assert_probe_reaches_all_outside, prober, control)
    return RunTime(attempts, version, steps[VersionStep.VALIDATION], matches, stderr, quiet)


def test_a_hosted_bot_reaches_nothing_of_the_league_at_run_time(
    league: League, listener: socket.socket, tmp_path: Path
) -> None:
    """The probe runs first in every run of a Python bot: check-bot, the validation match and
    the ladder's matches; one thing reached ends it, failing the step it runs in."""
    run = asyncio.run(probe_at_run_time(league, listener, tmp_path))

    assert run.version.state is VersionState.ACTIVE
    assert_nothing_reached(run.validation, run.attempts)  # its stderr in the validation match
    assert_nothing_reached(run.stderr, run.attempts)  # and in the ladder's first match
    # The ladder goes on: both pairings played rated matches to the end, the probe's seat too.
    assert len(run.matches) == 2
    for match in run.matches:
        assert (match.status, match.rated) == (MatchStatus.FINISHED, True)
        [own] = [seat for seat in match.seats if seat.bot_name == "probebot.v1"]
        assert (own.crashes, own.forfeited) == (0, False), own
    assert run.quiet
