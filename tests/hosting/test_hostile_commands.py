"""A hosted bot's command names its own files only, with the real sandbox.

The sandbox binds the folder of every file a bot's command names (``bot_folders``: an absolute
path, a path from the server's current folder, a word of an argument holding spaces), which
suits an operator's own bots.  A stranger's manifest checks its first script only, so a word
after it naming a file of the machine would show the hosted bot that file's whole folder: the
gate refuses such a command at the build, before any of the bot's code runs, and the ladder's
copy of a version refuses it too."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits, pack_folder, parse_manifest, take_submission
from bisca.server.hosting import Gate, Toolchains
from bisca.server.hosting._builds import BuildRefused, cpp_program
from bisca.server.hosting._copies import runnable_copy
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store, VersionState
from tests.support.league import PASSWORD

pytestmark = pytest.mark.system

SECRET = "the operator's notes"
#: Reads every file its arguments (and their words) name, saying what it read, then stops:
#: it needs no SDK, so what it reaches shows in the gate's output whatever step runs it.
READER = """import sys
for word in " ".join(sys.argv[1:]).split():
    try:
        with open(word) as file:
            print("read:", file.read(), file=sys.stderr)
    except OSError as problem:
        print("refused:", problem, file=sys.stderr)
raise SystemExit(1)
"""


@pytest.mark.parametrize("how", ["absolute", "in an argument with spaces", "from the server"])
def test_a_command_naming_a_file_outside_the_bots_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    os.chmod(tmp_path, 0o755)
    operator = tmp_path / "operator"
    operator.mkdir(mode=0o755)
    notes = operator / "notes.txt"
    notes.write_text(SECRET)
    notes.chmod(0o644)  # world-readable: only what the sandbox binds keeps it from the bot
    monkeypatch.chdir(operator)  # the server's current folder
    word = {
        "absolute": str(notes),
        "in an argument with spaces": f"read {notes}",
        "from the server": "notes.txt",
    }[how]
    bot = tmp_path / "sneaky"
    bot.mkdir(mode=0o755)
    (bot / "my_bot.py").write_text(READER)
    (bot / "bisca-bot.toml").write_text(
        'name = "sneaky"\ngames = ["belote"]\nlanguage = "python"\n'
        f"command = \"python my_bot.py '{word}'\"\n"
    )
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("mallory", PASSWORD)
    uploads = store.data_dir / "submissions"
    limits = SubmissionLimits(build_s=60)
    version = take_submission(store, limits, uploads, "mallory", io.BytesIO(pack_folder(bot)))
    gate = Gate(store, uploads, limits, SandboxPolicy(), store.data_dir / "gate")
    # Run as it is (the gate removes a failed version's files), the command is refused too.
    with (
        pytest.raises(BuildRefused, match="names a file outside the bot's folder"),
        runnable_copy(uploads, version, Toolchains.of_clone(tmp_path)),
    ):
        pass

    [ended] = gate.run_pending()

    outputs = "\n".join(step.output for step in store.versions.steps("sneaky", 1))
    assert SECRET not in outputs
    assert ended.state is VersionState.FAILED
    # The owner's output names the word (the server's folders in it by what they are: the
    # server runs in ``operator``, its clone); the public reason quotes nothing of the manifest.
    shown = word.replace(str(operator), "<arena>")
    assert (
        f"the command's word {shown!r} names a file outside the bot's folder: a hosted bot's "
        "command may name its own files only"
    ) in outputs
    assert ended.reason == (
        "build failed: a word of the command names a file outside the bot's folder (its build "
        "log says which): a hosted bot's command may name its own files only"
    ), outputs
    store.close()


def test_a_cpp_command_not_under_build_is_refused_without_its_words_in_public() -> None:
    """A version's manifest is its owner's: the refusal's public reason names the rule, the
    owner's build log the command (review 41)."""
    manifest = parse_manifest(
        'name = "x"\ngames = ["belote"]\nlanguage = "cpp"\ncommand = "our-secret-dir/my_bot"\n'
    )
    with pytest.raises(BuildRefused) as refused:
        cpp_program(manifest)
    assert "our-secret-dir" in str(refused.value)
    assert "our-secret-dir" not in refused.value.public
    assert "under build/" in refused.value.public
