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


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """``bisca ARGV --help`` as one line of words (argparse wraps it at the terminal's width,
    breaking words at hyphens too: a wide one here)."""
    with pytest.MonkeyPatch.context() as patch, pytest.raises(SystemExit):
        patch.setenv("COLUMNS", "1000")
        main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_match_help_gives_the_clocks_defaults_the_sample_bots_and_bestias_seats(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Review 45 (L11): the guide gives 2000 and 10000 ms, and `matches create --help` says
    that Bestia's seats follow the bots; `bisca match --help` said neither."""
    text = _help(capsys, "match")
    assert "--move-ms MOVE_MS time per move (default: 2000)" in text
    assert "--bank-ms BANK_MS time bank per seat, spent past --move-ms (default: 10000)" in text
    assert "(a sample bot name: random, greedy, pimc)" in text
    assert "at Bestia their number is the seats unless --set seats=N" in text


def test_check_bot_help_says_its_clock_has_no_bank(capsys: pytest.CaptureFixture[str]) -> None:
    """Review 45 (L10): a bot 2.5 s a move plays `bisca match` (2000 ms + a 10 s bank) without
    a timeout and fails every timed check: the help said only "as `bisca match --move-ms`"."""
    text = _help(capsys, "check-bot")
    assert "as `bisca match --move-ms` but with no time bank" in text
