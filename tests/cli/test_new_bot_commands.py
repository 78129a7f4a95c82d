"""What ``bisca new-bot`` prints can be pasted as it is (in-process: nothing is run)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from bisca.server.cli import main

CLONE = Path(__file__).resolve().parents[2]


def printed(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["new-bot", *argv, "--clone", str(CLONE)]) == 0
    return capsys.readouterr().out.splitlines()


def command_after(lines: list[str], prefix: str) -> list[str]:
    [line] = [line for line in lines if line.startswith(prefix)]
    return shlex.split(line.removeprefix(prefix))


def test_the_python_starter_runs_on_the_interpreter_that_has_the_sdk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not the ``python`` on PATH, which may lack the SDK (29 identical FAILs)."""
    folder = tmp_path / "my bot"
    lines = printed(capsys, "python", str(folder))
    bot = command_after(lines, "  bisca check-bot -- ")
    assert bot == [sys.executable, str(folder / "my_bot.py")]
    assert Path(bot[1]).is_file()
    # The match line quotes the whole bot command, spaces and all.
    match = command_after(lines, "  bisca match ")
    assert shlex.split(match[match.index("--bot") + 1]) == bot
    # Installing the SDK elsewhere names the clone by its absolute path.
    assert any(f"pip install {CLONE / 'clients' / 'python'}" in line for line in lines)
    # The league's command names the option it cannot go without (review s58e U5).
    assert f"bisca submit {shlex.quote(str(folder))} --server URL`)" in lines[1], lines[1]


def test_the_cpp_starter_lines_survive_a_folder_with_a_space(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "my bot"
    lines = printed(capsys, "cpp", str(folder))
    build = [line for line in lines if line.startswith(f"  cmake -S {shlex.quote(str(folder))}")]
    assert build, lines
    assert command_after(lines, "  bisca check-bot -- ") == [str(folder / "build" / "my_bot")]


def test_the_cpp_texts_say_what_the_sdk_and_the_sandbox_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``Request::game`` is a field (types.h), and the sandbox binds a bot's folder even under
    /tmp (the sandbox's tests run their bots from pytest's /tmp folders)."""
    printed(capsys, "cpp", str(tmp_path / "bjarne"))
    starter = (tmp_path / "bjarne" / "my_bot.cpp").read_text()
    assert "request.game()" not in starter and "request.game (a field" in starter
    types = (CLONE / "clients" / "cpp" / "include" / "bisca" / "client" / "types.h").read_text()
    assert "pb::Game game = " in types
    readme = (CLONE / "clients" / "cpp" / "README.md").read_text()
    assert "is hidden there" not in readme and "built under `/tmp`" in readme
