"""A tournament file's bot commands: read from the file's folder, and tried by ``bisca
tournament check`` (in-process: nothing is started)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.tournament import bot_command_problems, load_tournament
from bisca.server.tournament._tournament import bot_command

from .support import TournamentFile, tournament_text


def test_relative_paths_in_commands_are_the_files_not_the_current_folders(
    tournament_file: TournamentFile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.js").write_text("")
    path = tournament_file(bots=(("mine", "node bots/mine.js"), ("random", "random")))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    spec = load_tournament(path)
    assert spec.folder == tmp_path
    mine = next(bot for bot in spec.bots if bot.name == "mine")
    assert bot_command(spec, mine)[1] == str(tmp_path / "bots" / "mine.js")
    # node is on PATH (the Node SDK's tests need it); the script is found from the file's folder.
    if any(os.access(Path(d) / "node", os.X_OK) for d in os.environ["PATH"].split(os.pathsep)):
        assert bot_command_problems(spec) == {}


def test_check_names_a_bot_whose_command_cannot_start(
    tournament_file: TournamentFile,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tournament_file(
        bots=(("lost", "node bots/missing.js"), ("ghost", "no-such-program-xyz"), ("r", "random"))
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["tournament", "check", str(path)]) == 2
    captured = capsys.readouterr()
    assert "bot lost: 'node bots/missing.js' cannot start" in captured.out
    # Named nowhere in the file's folder, it is read from the current folder, as `run` would.
    assert f"no such script, looked for in {elsewhere}" in captured.out
    assert "bot ghost: 'no-such-program-xyz' cannot start" in captured.out
    assert "(not on PATH; the sample bots are random, greedy, pimc)" in captured.out
    assert "bot r: its command can start" in captured.out
    assert "2 bot command(s) cannot start" in captured.err
    assert (
        f"a relative path is read from the file's folder {path.parent}, or from the current "
        f"folder {elsewhere} when it names nothing there"
    ) in captured.err


def test_check_reads_a_path_that_names_nothing_in_the_files_folder_from_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review 45: README's `command = ".venv/bin/python mine/my_bot.py"` in a copy of a demo
    file kept in ``examples/``, checked from the repository root: ``run`` reads both words from
    the current folder (they name nothing in ``examples/``) and plays the bot; ``check`` read
    the interpreter from ``examples/`` and said it cannot start."""
    root = tmp_path / "root"
    (root / ".venv" / "bin").mkdir(parents=True)
    interpreter = root / ".venv" / "bin" / "python"
    interpreter.write_text("#!/bin/sh\n")
    interpreter.chmod(0o755)
    (root / "mine").mkdir()
    (root / "mine" / "my_bot.py").write_text("")
    (root / "examples").mkdir()
    path = root / "examples" / "my-t.toml"
    bots = (("mine", ".venv/bin/python mine/my_bot.py"), ("random", "random"))
    path.write_text(tournament_text(bots=bots))
    monkeypatch.chdir(root)
    spec = load_tournament(path)
    mine = next(bot for bot in spec.bots if bot.name == "mine")
    # What `run` starts: both words left as written, so read from the current folder.
    assert bot_command(spec, mine) == [".venv/bin/python", "mine/my_bot.py"]
    assert bot_command_problems(spec) == {}
    assert main(["tournament", "check", str(path)]) == 0
    assert "bot mine: its command can start" in capsys.readouterr().out


def test_status_offers_only_the_shared_store(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["tournament", "status", "--help"])
    text = capsys.readouterr().out
    assert "postgresql://" in text and "sqlite:" not in text


def test_leaderboard_without_data_says_where_each_command_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["leaderboard", "--game", "belote"]) == 1
    error = capsys.readouterr().err
    assert "`bisca match` in bisca-data/local" in error
    assert "bisca-data/tournaments/NAME" in error and "--data DIR" in error
