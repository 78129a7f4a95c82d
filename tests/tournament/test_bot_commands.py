"""A tournament file's bot commands: read from the file's folder, and tried by ``bisca
tournament check`` (in-process: nothing is started)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.tournament import bot_command_problems, load_tournament
from bisca.server.tournament._tournament import bot_command

from .support import TournamentFile


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
    tournament_file: TournamentFile, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tournament_file(
        bots=(("lost", "node bots/missing.js"), ("ghost", "no-such-program-xyz"), ("r", "random"))
    )
    assert main(["tournament", "check", str(path)]) == 2
    captured = capsys.readouterr()
    assert "bot lost: 'node bots/missing.js' cannot start" in captured.out
    assert f"no such script, looked for in {path.parent}" in captured.out
    assert "bot ghost: 'no-such-program-xyz' cannot start" in captured.out
    assert "bot r: its command can start" in captured.out
    assert "2 bot command(s) cannot start" in captured.err


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
