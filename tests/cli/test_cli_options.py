"""Command-line values out of range are refused by the parser, naming the option."""

from __future__ import annotations

from pathlib import Path

import pytest

from bisca.server.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["leaderboard", "--game", "belote", "--limit", "0"],
        ["leaderboard", "--game", "belote", "--limit", "-1"],
        ["watch", "m-1", "--token", "t", "--omniscient", "--delay", "-1"],
    ],
)
def test_a_count_below_its_range_is_refused(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--data", str(tmp_path)])
    assert exit_.value.code == 2
    stderr = capsys.readouterr().err
    option = argv[-2]
    assert f"argument {option}: expected a number of at least" in stderr


def test_a_token_file_that_cannot_be_read_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "spectator.token").mkdir()
    assert main(["watch", "m-1", "--data", str(tmp_path), "--address", "127.0.0.1:1"]) == 2
    stderr = capsys.readouterr().err
    assert f"bisca watch: cannot read {tmp_path / 'spectator.token'}" in stderr


def test_bisca_match_refuses_a_seed_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["match", "--game", "belote", *["--bot", "random"] * 4, "--seed", str(2**63)]
    assert main([*argv, "--data", str(tmp_path)]) == 2
    assert f"seed {2**63} is out of range" in capsys.readouterr().err
