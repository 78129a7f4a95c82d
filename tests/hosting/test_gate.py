"""The gate, with the real sandbox: a Python bot that does not compile fails at its build,
one that does not speak the protocol fails at check-bot with the report, one that passes
check-bot but leaves its validation match fails there with why, none plays, and nothing of the
gate's scratch is left behind (the way to active: the league server's test,
``tests/cli/test_league_server.py``)."""

from __future__ import annotations

import io
import logging
import sys
import tempfile
from pathlib import Path

import pytest

from bisca.server.accounts import BotLanguage, SubmissionLimits, pack_folder, take_submission
from bisca.server.cli import main
from bisca.server.hosting import Gate, Toolchains
from bisca.server.hosting._builds import BuildRefused, give_node_sdk
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store, VersionState, VersionStep

pytestmark = pytest.mark.system


#: The gate's limits in these tests: a build on a loaded machine is given a minute.
LIMITS = SubmissionLimits(build_s=60)


def submitted(store: Store, folder: Path, limits: SubmissionLimits = LIMITS) -> Gate:
    uploads = store.data_dir / "submissions"
    take_submission(store, limits, uploads, "alice", io.BytesIO(pack_folder(folder)))
    return Gate(store, uploads, limits, SandboxPolicy(), store.data_dir / "gate")


def test_a_bot_that_does_not_build_or_speak_the_protocol_fails_with_why(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    bot = tmp_path / "mybot"
    assert main(["new-bot", "python", str(bot)]) == 0
    # The way to active is the league server's test (tests/cli/test_league_server.py).
    (bot / "my_bot.py").write_text("def broken(:\n")
    [unbuilt] = submitted(store, bot).run_pending()
    assert unbuilt.state is VersionState.FAILED and unbuilt.reason.startswith("build failed")
    build = store.versions.steps("mybot", 1)[-1]
    assert build.step is VersionStep.BUILD and "SyntaxError" in build.output

    (bot / "my_bot.py").write_text("import sys\nprint('no protocol here', file=sys.stderr)\n")
    [mute] = submitted(store, bot).run_pending()
    assert mute.state is VersionState.FAILED and mute.reason.startswith("check failed")
    check = store.versions.steps("mybot", 2)[-1]
    assert check.step is VersionStep.CHECK and "FAIL" in check.output
    assert store.versions.playing() == []
    # Its owner reads what was run and where its logs went, not where the server keeps them.
    assert "check-bot: <python>/bin/python" in check.output and " <bot>/my_bot.py" in check.output
    assert "<scratch>/" in check.output and "bot.stderr.log" in check.output
    for step in [*store.versions.steps("mybot", 1), *store.versions.steps("mybot", 2)]:
        for server_folder in (str(tmp_path), sys.prefix, tempfile.gettempdir() + "/"):
            assert server_folder not in step.output, (step.step, server_folder, step.output)

    # A version a stopped server left half-way through goes through the gate again.
    (bot / "my_bot.py").write_text("def broken(:\n")
    gate = submitted(store, bot)
    store.versions.move("mybot", 3, VersionState.CHECKING)
    [resumed] = gate.run_pending()
    assert (resumed.version, resumed.state) == (3, VersionState.FAILED)
    assert resumed.reason.startswith("build failed")
    assert list((store.data_dir / "gate").iterdir()) == []
    # A failed version's files are removed as it fails (review s56b: an upload of 64 KiB that
    # unpacked to 64 MiB and failed stayed on the disk for good); its steps stay.
    assert not (store.data_dir / "submissions" / "mybot").exists()  # its bot's folder too
    assert store.versions.steps("mybot", 3)[-1].step is VersionStep.BUILD
    store.close()


#: A starter's ``choose`` that plays for check-bot (which gives a bot no seed) and leaves a
#: match at its third decision (the arena gives every bot of a match ``BISCA_SEED``), its
#: last words those of a sandbox's limits, though none was hit: its stderr is its owner's,
#: and its public reason says only what the arena saw (review 41).
QUITS_IN_A_MATCH = """
_decisions = 0


def choose(request: Request[Any, Any]) -> Any:
    global _decisions
    _decisions += 1
    if _decisions == 3 and "BISCA_SEED" in os.environ:
        print("quitter: printed before it leaves", flush=True)
        print("quitter: leaving the validation match: MemoryError, Too many open files",
              file=sys.stderr, flush=True)
        os._exit(3)
    return random.choice(request.legal_actions)
"""


def test_a_bot_that_passes_check_bot_but_not_its_validation_match_fails_with_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    bot = tmp_path / "quitter"
    assert main(["new-bot", "python", str(bot)]) == 0
    script = bot / "my_bot.py"
    text = script.read_text()
    start, end = text.index("def choose("), text.index('if __name__ == "__main__":')
    head = text[:start].replace("import random\n", "import os, random, sys\n")
    script.write_text(head + QUITS_IN_A_MATCH.lstrip() + "\n\n" + text[end:])

    with caplog.at_level(logging.INFO, logger="bisca.gate"):
        [version] = submitted(store, bot).run_pending()

    assert version.state is VersionState.FAILED
    # The server's log says what the gate did, and which match was the validation (played in
    # the gate's scratch, which no command of the league's reads: operator review 55, #13).
    said = [record.getMessage() for record in caplog.records if record.name == "bisca.gate"]
    assert "gate: quitter v1: build passed" in said and "gate: quitter v1: check passed" in said
    assert any(
        line.startswith("gate: quitter v1: validation match m-") and "scratch" in line
        for line in said
    ), said
    assert said[-1] == f"gate: quitter v1 failed: {version.reason}", said
    steps = store.versions.steps("quitter", 1)
    assert version.reason == (
        "validation failed: quitter v1 forfeited its seat in its validation match: its bot "
        "process exited with status 3"
    ), steps[-1].output  # the failed step's output says which check, and why
    assert [(step.step, step.passed) for step in steps] == [
        (VersionStep.UNPACK, True),
        (VersionStep.BUILD, True),
        (VersionStep.CHECK, True),
        (VersionStep.VALIDATION, False),
    ]
    # Kept for the owner: the match's table (the seat forfeited), the bot's stderr and stdout.
    validation = steps[-1].output
    assert "quitter: leaving the validation match" in validation, validation
    stdout_part = validation[validation.index("--- its stdout ---") :]
    assert "quitter: printed before it leaves" in stdout_part, validation
    assert "forfeit" in validation, validation
    assert store.versions.playing() == []
    assert list((store.data_dir / "gate").iterdir()) == []
    store.close()


def starter_running_first(bot: Path, code: str) -> Path:
    """``bisca new-bot python BOT`` whose script runs ``code`` before anything of its own."""
    assert main(["new-bot", "python", str(bot)]) == 0
    script = bot / "my_bot.py"
    future = "from __future__ import annotations\n"
    text = script.read_text()
    head = text.index(future) + len(future)
    script.write_text(text[:head] + code + text[head:])
    return bot


#: A starter's head that never connects (its checks each wait for it to the end).
NEVER_CONNECTS = "import time\ntime.sleep(600)\n"


def test_the_check_step_has_a_deadline_of_its_own(tmp_path: Path) -> None:
    """A bot that let each of check-bot's waits run out held the gate ~23 s a check, ~11
    minutes a version, while every other owner's version waited (review 38d): the step as a
    whole has ``check_s``, and its bot and scratch are gone when it is over."""
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    bot = starter_running_first(tmp_path / "slowbot", NEVER_CONNECTS)

    limits = SubmissionLimits(build_s=60, check_s=5)
    [version] = submitted(store, bot, limits).run_pending()

    assert version.state is VersionState.FAILED
    assert version.reason == "check failed: check-bot took more than 5 s"
    check = store.versions.steps("slowbot", 1)[-1]
    assert check.step is VersionStep.CHECK and not check.passed
    assert check.output.endswith("check-bot took more than 5 s\n"), check.output
    assert list((store.data_dir / "gate").iterdir()) == []
    store.close()


#: A script name its author chose, and a starter's head that plays check-bot (no seed) and,
#: in a match of the arena (``BISCA_SEED``), stays alive without connecting.
CHOSEN_SCRIPT = "Free_chips_at_evil.example_use_code_MALLORY.py"
HIDES_IN_A_MATCH = 'import os, time\nif "BISCA_SEED" in os.environ:\n    time.sleep(600)\n'


def test_a_validation_matchs_public_reason_holds_no_word_of_the_author(tmp_path: Path) -> None:
    """Its seats are named by the server: a version whose bot never connects to its
    validation match failed with "bots not connected after N s: NAME", NAME its script's
    file name, up to 48 characters of the author's on the public page (review 38d)."""
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    bot = starter_running_first(tmp_path / "chipsbot", HIDES_IN_A_MATCH)
    (bot / "my_bot.py").rename(bot / CHOSEN_SCRIPT)
    manifest = (bot / "bisca-bot.toml").read_text().replace("my_bot.py", CHOSEN_SCRIPT)
    (bot / "bisca-bot.toml").write_text(manifest)

    # Its wait for the bots shortened (``validation_join_s``), as an operator may.
    limits = SubmissionLimits(build_s=60, validation_join_s=3)
    [version] = submitted(store, bot, limits).run_pending()

    assert version.state is VersionState.FAILED
    assert version.reason == (
        "validation failed: chipsbot v1's validation match did not finish (failed: bots not "
        "connected after 3 s: chipsbot)"
    )
    store.close()


@pytest.mark.parametrize("language", [BotLanguage.NODE, BotLanguage.CPP])
def test_a_league_without_an_sdk_refuses_its_bots_without_showing_its_folders(
    tmp_path: Path, language: BotLanguage, caplog: pytest.LogCaptureFixture
) -> None:
    """A version's refusal is its owner's to read, and its reason public: it says the league
    lacks that SDK; the server's folders, and how to install it, go to the operator's log."""
    toolchains = Toolchains(tmp_path / "node", tmp_path / "cpp", tmp_path / "cpp-build")
    with caplog.at_level("WARNING", logger="bisca.gate"), pytest.raises(BuildRefused) as refused:
        toolchains.check(language)
    assert "SDK" in str(refused.value) and str(tmp_path) not in str(refused.value)
    assert str(tmp_path) in caplog.text


#: A package.json nested past the JSON parser's depth (review s58f: its RecursionError left
#: the gate's pass at every pass, and no version after it was ever built).
DEEP_PACKAGE = '{"name": "x", "dependencies": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_a_package_json_nested_too_deep_stops_nothing_but_its_own_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Python bot carrying it plays (the arena reads no dependency of it); a Node bot's build
    refuses it, saying so; and whatever a version's step raises fails that version alone."""
    store = Store(tmp_path / "data" / "bisca.sqlite3")
    store.accounts.create("alice", "a long enough password")
    bot = starter_running_first(tmp_path / "deepbot", "")
    (bot / "package.json").write_text(DEEP_PACKAGE)
    [version] = submitted(store, bot).run_pending()
    assert version.state is VersionState.ACTIVE, (
        version.reason,
        store.versions.steps("deepbot", 1),
    )

    node = tmp_path / "nodedeep"
    node.mkdir()
    (node / "package.json").write_text(DEEP_PACKAGE)
    with pytest.raises(BuildRefused, match=r"package\.json is nested too deep to read"):
        give_node_sdk(node, Toolchains.of_clone(Path.cwd()))

    def raising(*args: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    other = starter_running_first(tmp_path / "otherbot", "")
    gate = submitted(store, other)
    monkeypatch.setattr(gate, "_build", raising)
    [failed] = gate.run_pending()
    assert failed.state is VersionState.FAILED
    assert failed.reason == "build failed: the build could not run"
    store.close()
