"""Hostile builds, with the real sandbox: a C++ bot's CMakeLists.txt runs the author's code
at configure time, so a build that forks without end, loops, or fills its disk is killed at
its limit and its version failed saying why, and the gate goes on to the next version; a Node
bot's build runs none of its code, and what it asks that the league does not do (a package
from the network, a file that does not parse) fails it at the build, named."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits, pack_folder, take_submission
from bisca.server.hosting import Gate, Toolchains
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store, VersionState, VersionStep
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
}


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


def test_a_build_that_forks_loops_or_fills_its_disk_is_stopped_at_its_limit(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("mallory", "a long enough password")
    limits = SubmissionLimits(build_s=5, build_disk_mb=16)
    uploads = store.data_dir / "submissions"
    for kind, body in HOSTILE.items():
        folder = write_bot(
            tmp_path / kind, kind, "cpp", "build/bot", {"CMakeLists.txt": CMAKE.format(body)}
        )
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
    assert ended["wants"].reason == (
        "build failed: package.json depends on 'left-pad': this league installs no packages "
        "(its builds have no network); a Node bot may depend on bisca-client only, which the "
        "league provides"
    )
    assert ended["broken"].state is VersionState.FAILED
    assert ended["broken"].reason == "build failed: the build exited with status 1"
    output = store.versions.steps("broken", 1)[-1].output
    assert "SyntaxError" in output and "my_bot.js does not parse" in output
    store.close()
