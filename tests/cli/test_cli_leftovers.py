"""The command-line slips a hostile review left (review 53, its sections D and E): a message
naming a store that was not read, conflicting values of which the last one won without a word,
options taken and ignored, files checked one by one but not against each other, an empty path
read as the current folder.  Each is refused by the parser or before anything runs, in
process: no server, no bot, no match is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.errors import StoreError
from bisca.server.league import merged_settings
from bisca.server.records import TournamentSlot
from bisca.server.store import Store
from tests.tournament.support import tournament_text

FOUR_RANDOM = ["--bot", "random"] * 4
FOUR_NAMES = ["--bot", "a", "--bot", "b", "--bot", "c", "--bot", "d"]
#: ``bisca matches create`` of four registered bots, before its options.
CREATE = ["matches", "create", "--game", "belote", *FOUR_NAMES]
#: Where nothing listens: a call that got this far would fail, not hang.
NOWHERE = ["--address", "127.0.0.1:1", "--token", "t"]


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``bisca ARGV``, which the parser must refuse (exit 2); its stderr."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


def test_bots_list_names_the_store_it_read_not_the_default_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the default --data, bisca-data, would be here
    store = tmp_path / "x.db"
    assert main(["bots", "list", "--store", f"sqlite:{store}"]) == 0
    assert capsys.readouterr().out == f"no bots registered in {store}\n"
    Store.in_directory(tmp_path / "d").close()
    assert main(["bots", "list", "--data", str(tmp_path / "d")]) == 0
    assert capsys.readouterr().out == f"no bots registered in {tmp_path / 'd'}\n"


def test_another_plan_under_a_tournaments_name_names_the_store_not_a_data_directory(
    tmp_path: Path,
) -> None:
    """The words serve a PostgreSQL store too, which is no data directory."""
    path = tmp_path / "s.sqlite3"
    slots = [TournamentSlot(slot=0, planned_id="okt-0", pairing=0, seating=0, seed=1, bots=("a",))]
    with Store(path) as store:
        assert store.tournaments.save_plan("okt", "belote", "first", "a.toml", slots)
        with pytest.raises(StoreError) as refused:
            store.tournaments.save_plan("okt", "belote", "changed", "b.toml", slots)
    said = str(refused.value)
    assert said.startswith(f"the store {path} holds another plan for tournament 'okt' (from ")
    assert "data directory holds" not in said


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--set", "deals=2", "--deals", "4"], "deals is given twice: --set deals=2 and --deals 4"),
        (["--set", "deals=2", "--set", "deals=3"], "--set deals=2 and --set deals=3"),
        (["--deals", "4", "--set", "deals=2"], "--set deals=2 and --deals 4"),
    ],
)
def test_match_refuses_a_setting_given_two_values(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stderr = _usage_error(
        capsys, ["match", "--game", "belote", *FOUR_RANDOM, *argv, "--data", str(tmp_path)]
    )
    assert said in stderr
    assert not tmp_path.joinpath("matches").exists()  # refused before the match began


def test_matches_create_refuses_a_setting_given_two_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    twice = ["--set", "deals=2", "--set", "deals=3"]
    assert main([*CREATE, *twice, *NOWHERE]) == 2
    assert "bisca matches: deals is given twice: --set deals=2 and --set deals=3" in (
        capsys.readouterr().err
    )


def test_the_same_value_twice_is_no_conflict_and_kinds_are_told_apart() -> None:
    assert merged_settings([("--set deals=2", "deals", 2), ("--deals 2", "deals", 2)]) == {
        "deals": 2
    }
    with pytest.raises(ValueError, match="x is given twice: --set x=true and --set x=1"):
        merged_settings([("--set x=true", "x", True), ("--set x=1", "x", 1)])


def test_serve_refuses_conflicts_ignored_options_and_an_empty_settings_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data", str(tmp_path / "d")]
    league = _usage_error(capsys, ["serve", "--league", "belote:deals=2,deals=3", *data])
    assert "--league belote:deals=2,deals=3: deals is given twice: deals=2 and deals=3" in league
    alone = _usage_error(capsys, ["serve", "--http-host", "arena.example", *data])
    assert "--http-host needs --http HOST:PORT" in alone
    empty = _usage_error(capsys, ["serve", "--http", "127.0.0.1:0", "--http-host", "", *data])
    assert "argument --http-host: the name is empty" in empty
    config = _usage_error(capsys, ["serve", "--config", "", *data])
    assert "argument --config: no file named: the path is empty" in config
    assert not (tmp_path / "d").exists()


def test_web_refuses_an_empty_http_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stderr = _usage_error(capsys, ["web", "--http-host", " ", "--data", str(tmp_path)])
    assert "argument --http-host: the name is empty" in stderr


def test_two_files_of_one_tournament_are_refused_before_either_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text(tournament_text(name="okt"))
    second.write_text(tournament_text(name="okt", per_pairing=3))  # another plan, one name
    data = tmp_path / "data"
    assert main(["tournament", "run", str(first), str(second), "--data", str(data)]) == 2
    assert (
        f"bisca tournament: {first} and {second} both declare tournament 'okt'"
        in capsys.readouterr().err
    )
    assert not data.exists()  # nothing ran
    assert main(["tournament", "run", str(first), str(first), "--data", str(data)]) == 2
    assert f"bisca tournament: {first} is given twice" in capsys.readouterr().err
    submitted = ["tournament", "submit", str(first), str(second), "--store", "postgresql://x@h/x"]
    assert main(submitted) == 2  # refused before the store is opened
    assert "both declare tournament 'okt'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["tournament", "check", ""],
        ["tournament", "run", ""],
        ["tournament", "submit", "", "--store", "postgresql://x@h/x"],
    ],
)
def test_an_empty_path_is_refused_as_empty_not_read_as_the_current_folder(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``Path("")`` is the current folder: it was read, and said to be a directory."""
    stderr = _usage_error(capsys, argv)
    assert "argument FILE.toml: no file named: the path is empty" in stderr
    assert "Is a directory" not in stderr


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["new-bot", "python", ""], "DIR"),
        (["new-bot", "node", "bot", "--clone", ""], "--clone"),
        (["submit", "", "--server", "http://127.0.0.1:9"], "DIR"),
        (["serve", "--data", ""], "--data"),
        (["key", "--data", ""], "--data"),
        (["replay", "verify", "a.binlog", "--data", ""], "--data"),
        (["tournament", "run", "t.toml", "--data", ""], "--data"),
        (["check-bot", "--log-dir", "", "--", "true"], "--log-dir"),
        (["watch", "m-1", "--data", ""], "--data"),
    ],
)
def test_an_empty_folder_is_refused_not_taken_for_the_current_one(
    argv: list[str],
    option: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``Path("")`` is ``.``: ``new-bot python "$DIR"`` with ``DIR`` unset wrote a bot into the
    folder it ran in (review s57c)."""
    monkeypatch.chdir(tmp_path)
    stderr = _usage_error(capsys, argv)
    assert f"argument {option}: no folder named: the path is empty (. is this folder)" in stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["serve", "--tls-key", ""], "--tls-key"),
        (["serve", "--tls-cert", ""], "--tls-cert"),
        (["watch", "m-1", "--ca", ""], "--ca"),
        (["submit", "bot", "--server", "http://127.0.0.1:9", "--ca", ""], "--ca"),
    ],
)
def test_an_empty_file_path_of_an_option_is_refused(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    stderr = _usage_error(capsys, argv)
    assert f"argument {option}: no file named: the path is empty" in stderr


def test_a_bot_command_that_cannot_be_read_names_its_seat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bots = ["--bot", "random", "--bot", '"unterminated', "--bot", "random", "--bot", "random"]
    stderr = _usage_error(capsys, ["match", "--game", "belote", *bots, "--data", str(tmp_path)])
    assert "--bot of seat 1: the bot command '\"unterminated' cannot be read: No closing" in stderr


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        ([*CREATE, "--seed", str(2**64)], "--seed"),
        ([*CREATE, "--move-ms", "9" * 20], "--move-ms"),
        ([*CREATE, "--bank-ms", "9" * 20], "--bank-ms"),
        ([*CREATE, "--join-timeout-s", "9" * 11], "--join-timeout-s"),
        (["demo", "--seed", str(2**63)], "--seed"),
    ],
)
def test_numbers_out_of_range_name_their_option(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review 52, item 18 and section E: refused by the parser, as `bisca match` refuses a
    seed above 2^63-1, not by protobuf in the call (or, for the demo, not at all)."""
    stderr = _usage_error(capsys, argv)
    assert f"argument {option}: expected a number of at most" in stderr
