"""Which words of a bot command the arena takes for paths (in-process, no bot started)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.sandbox import BotProcess, BotStartError, absolute_argv, bot_folders
from bisca.server.sandbox._sandbox import node_dependency_folders


def test_a_bare_word_is_never_rewritten_even_beside_a_folder_of_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bisca match ... --bot random`` run from a folder holding ``bot/`` used to launch
    ``bisca /abs/bot random``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot").mkdir()
    (tmp_path / "random").write_text("")
    (tmp_path / "my_bot.py").write_text("")
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mine.js").write_text("")
    command = absolute_argv(["bisca", "bot", "random", "--game", "belote"])
    assert command[1:] == ["bot", "random", "--game", "belote"]
    assert absolute_argv(["node", "my_bot.py"])[1] == str(tmp_path / "my_bot.py")
    assert absolute_argv(["node", "bots/mine.js"])[1] == str(tmp_path / "bots" / "mine.js")
    assert bot_folders(["bisca", "bot", "random"]) == []


def test_a_missing_relative_script_is_named_with_the_folder_it_was_looked_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    process = BotProcess(["/usr/bin/python3", "nonexist.py"], dict(os.environ), tmp_path / "b")
    with pytest.raises(BotStartError) as refused:
        process.start()
    text = str(refused.value)
    assert "nonexist.py" in text and f"looked for in {tmp_path}" in text
    assert "/usr/bin/nonexist.py" not in text


def test_a_node_bot_sees_the_sdk_its_package_names_wherever_the_arena_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The starter ``require``s ``bisca-client``, a link in its ``node_modules`` to the clone's
    SDK, which was bound only when the arena ran in the clone.  Its package.json's ``file:``
    dependency names the SDK to the sandbox wherever the arena runs."""
    clone = Path(__file__).resolve().parents[2]
    bot = tmp_path / "grace"
    assert main(["new-bot", "node", str(bot), "--clone", str(clone)]) == 0
    package = json.loads((bot / "package.json").read_text())
    assert package["dependencies"] == {"bisca-client": f"file:{clone / 'clients' / 'node'}"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert node_dependency_folders([bot]) == [clone / "clients" / "node"]
    # A package.json that is not JSON, or names no local package, names nothing.
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "package.json").write_text("{not json")
    assert node_dependency_folders([tmp_path / "odd"]) == []


@pytest.mark.parametrize(
    "dependencies",
    [
        {"left-pad": "file:{sdk}"},  # the SDK under another name
        {"bisca-client": "file:{other}"},  # a folder that is not the SDK
        {"bisca-client": "file:/proc/self/cwd"},  # the server's own folder, through /proc
        {"bisca-client": "file://proc/self/cwd"},  # POSIX keeps a leading // (review s58f)
        {"bisca-client": "file:/proc/1/root{sdk}"},
        {"bisca-client": "file:/etc", "x": "file:/proc", "y": "file:/sys", "z": "file:/var"},
    ],
)
def test_a_package_json_binds_bisca_s_node_sdk_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dependencies: dict[str, str]
) -> None:
    """Review s58d: a hosted Python bot's package.json named ``file:/proc``, ``/etc``, ``/var``
    and ``/proc/self/cwd`` (the server's folder), and each was bound into its sandbox."""
    sdk = Path(__file__).resolve().parents[2] / "clients" / "node"
    other = tmp_path / "other"
    other.mkdir()
    (other / "package.json").write_text(json.dumps({"name": "left-pad"}))
    monkeypatch.chdir(sdk)  # /proc/self/cwd would be the SDK itself
    bot = tmp_path / "bot"
    bot.mkdir()
    named = {key: value.format(sdk=sdk, other=other) for key, value in dependencies.items()}
    (bot / "package.json").write_text(json.dumps({"dependencies": named}))
    assert node_dependency_folders([bot]) == []


def test_a_sdk_another_user_could_change_or_swap_is_not_bound(tmp_path: Path) -> None:
    """Review s58f: a folder under /tmp that passed as an SDK was swapped for a link to /proc
    before bwrap bound it (7 tries in 20), or, kept, was a live channel into the sandbox.  A
    folder is bound only where it and the folders above it are root's or the arena's and no
    one else may write them (a sticky folder above, as /tmp, keeps others from renaming)."""
    fake = tmp_path / "sdk"
    fake.mkdir()
    (fake / "package.json").write_text(json.dumps({"name": "bisca-client"}))
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "package.json").write_text(
        json.dumps({"dependencies": {"bisca-client": f"file:{fake}"}})
    )
    assert node_dependency_folders([bot]) == [fake]  # the arena's own
    os.chown(fake, 12_345, 12_345)  # another user's
    assert node_dependency_folders([bot]) == []
    os.chown(fake, os.geteuid(), os.getegid())
    fake.chmod(0o777)  # anybody may write into it
    assert node_dependency_folders([bot]) == []
    fake.chmod(0o755)
    tmp_path.chmod(0o777)  # anybody may rename it, the folder above it not sticky
    try:
        assert node_dependency_folders([bot]) == []
        tmp_path.chmod(0o1777)  # sticky, as /tmp: nobody else may rename it
        assert node_dependency_folders([bot]) == [fake]
    finally:
        tmp_path.chmod(0o700)
