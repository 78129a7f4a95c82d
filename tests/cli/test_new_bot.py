"""``bisca new-bot LANGUAGE DIR``: each language's starter passes every ``check-bot`` check
unchanged (the C++ one built with CMake against the SDK's build, as the starter's own comments
say), and an existing file is never overwritten."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.client.test_cpp_bot import cmake, cpp_bot, node_random
from tests.conformance.test_check_bot import assert_every_check_passes, check_bot
from tests.support.commands import bisca

__all__ = ["cpp_bot", "node_random"]  # the fixtures that build the C++ SDK, install Node's


def new_bot(language: str, folder: Path) -> list[str]:
    done = bisca("new-bot", language, str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def assert_it_passes(bot: list[str], tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    run = check_bot(logs, bot)
    assert_every_check_passes(run, logs)


def test_the_python_starter_passes_every_check(tmp_path: Path) -> None:
    folder = tmp_path / "ada"
    out = new_bot("python", folder)
    assert out[0] == f"wrote {folder / 'my_bot.py'}: ada, for Belote and Bestia"
    assert f"  bisca check-bot -- {sys.executable} {folder}/my_bot.py" in out
    assert 'name="ada"' in (folder / "my_bot.py").read_text()
    assert_it_passes([sys.executable, str(folder / "my_bot.py")], tmp_path)


def test_the_node_starter_passes_every_check(node_random: str, tmp_path: Path) -> None:
    folder = tmp_path / "grace"
    out = new_bot("node", folder)
    assert f"  bisca check-bot -- node {folder}/my_bot.js" in out
    node = shutil.which("node")
    assert node
    assert_it_passes([node, str(folder / "my_bot.js")], tmp_path)


def test_the_cpp_starter_builds_and_passes_every_check(cpp_bot: Path, tmp_path: Path) -> None:
    folder = tmp_path / "bjarne"
    out = new_bot("cpp", folder)
    build = folder / "build"
    assert f"  cmake -S {folder} -B {build} && cmake --build {build}" in out
    cmake("-S", str(folder), "-B", str(build))
    cmake("--build", str(build))
    assert_it_passes([str(build / "my_bot")], tmp_path)


def test_the_cpp_starter_before_the_sdk_is_built_says_how_to_build_it(tmp_path: Path) -> None:
    """Review s58e's U8: configured against a folder where the SDK is not built, the starter
    names the command that builds it, not CMake's missing ``biscaConfig.cmake``."""
    folder = tmp_path / "dennis"
    new_bot("cpp", folder)
    tool = shutil.which("cmake")
    assert tool, "cmake is needed for the C++ client: `make system` installs it"
    nowhere = tmp_path / "not-built"
    done = subprocess.run(
        [tool, "-S", str(folder), "-B", str(folder / "build"), f"-DBISCA_CPP_BUILD={nowhere}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    said = " ".join(done.stderr.split())  # (CMake wraps its messages' lines)
    assert f"Bisca's C++ SDK is not built in {nowhere}" in said, done.stderr
    assert "cmake -S clients/cpp -B build/cpp && cmake --build build/cpp -j2" in said, said
    assert "biscaConfig.cmake" not in said, said


def test_a_file_already_there_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "my_bot.py").write_text("mine\n")
    done = bisca("new-bot", "python", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr == (
        f"bisca new-bot: {tmp_path / 'my_bot.py'} exists already; choose another folder\n"
    )
    assert (tmp_path / "my_bot.py").read_text() == "mine\n"


def test_outside_a_clone_the_sdk_must_be_named(tmp_path: Path) -> None:
    """The Node and C++ starters are written against a clone's SDK: the current folder's, or
    the one ``--clone`` names; never a folder guessed from where ``bisca`` is installed."""
    command = [sys.executable, "-m", "bisca.server.cli", "new-bot", "node", "mine"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert refused.returncode == 1
    sdk = tmp_path.resolve() / "clients" / "node"
    assert refused.stderr == (
        f"bisca new-bot: no node SDK at {sdk}: run this in a clone of Bisca, "
        "or name one with --clone DIR\n"
    )
    assert not (tmp_path / "mine" / "my_bot.js").exists()
    clone = Path(__file__).resolve().parents[2]
    named = subprocess.run(
        [*command, "--clone", str(clone)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert named.returncode == 0, named.stderr
    assert f"(cd {clone / 'clients' / 'node'} && npm ci)" in named.stdout
    assert "require('bisca-client')" in (tmp_path / "mine" / "my_bot.js").read_text()
    link = tmp_path / "mine" / "node_modules" / "bisca-client"
    assert link.resolve() == (clone / "clients" / "node").resolve()


def test_outside_a_clone_the_python_starter_names_no_made_up_path(tmp_path: Path) -> None:
    """Review 53: outside a clone, the Python starter's hint gave ``pip install`` a path under
    the current folder that does not exist; it says where the SDK is instead, and in a clone
    the clone's own."""
    command = [sys.executable, "-m", "bisca.server.cli", "new-bot", "python", "mine"]
    outside = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert outside.returncode == 0, outside.stderr
    assert "pip install CLONE/clients/python, CLONE a clone of Bisca" in outside.stdout
    assert str(tmp_path.resolve() / "clients") not in outside.stdout
    clone = Path(__file__).resolve().parents[2]
    inside = subprocess.run(
        [*command[:-1], "theirs", "--clone", str(clone)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert inside.returncode == 0, inside.stderr
    assert f"pip install {clone / 'clients' / 'python'}" in inside.stdout
