"""``bisca check-bot`` end to end: the real command, with bots as real processes.

The sample bots (Python random and greedy, the Node.js random bot) must pass every check; each
deliberately broken bot of ``bots/`` must fail with its own reason, and the checker must
survive it: a crashing bot is started again, a silent one costs one clock per check.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bisca.server.cli import main
from bisca.server.conformance import script
from tests.support.commands import bisca, sample_bot

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).parent / "bots"
NODE_RANDOM = ROOT / "clients" / "node" / "bots" / "random.js"
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$")
OWN_ERRORS = "the bot's own errors"


@dataclass
class Run:
    code: int
    lines: list[str]
    stderr: str

    @property
    def checks(self) -> dict[str, str]:
        """Check name -> "PASS text" / "FAIL text" with its detail lines."""
        found: dict[str, str] = {}
        name = ""
        for line in self.lines:
            match = re.match(r"^(PASS|FAIL)  ([^:]+(?:: [^:]+)?): (.*)$", line)
            if match:
                name = match.group(2)
                found[name] = f"{match.group(1)} {match.group(3)}"
            elif line.startswith("      ") and name:
                found[name] += "\n" + line.strip()
        return found

    @property
    def summary(self) -> tuple[int, int]:
        match = SUMMARY.match(self.lines[-1])
        assert match, self.lines[-1]
        return int(match.group(1)), int(match.group(2))


#: ``bisca`` whose checker listens for a second answer sent at once (``END_QUIET_S``, after
#: each check) for as many seconds as its first argument says.  Its own 30 ms are a tight
#: window for another process on a loaded machine: the second of two answers written one after
#: the other has been seen arriving later than that, and the check passed.
PATIENT_BISCA = [
    sys.executable,
    "-c",
    "import sys; import bisca.server.conformance._checker as checker;"
    " checker.END_QUIET_S = float(sys.argv.pop(1));"
    " from bisca.server.cli import main; sys.exit(main(sys.argv[1:]))",
]


def check_bot(tmp_path: Path, bot: list[str], *options: str, quiet_s: float | None = None) -> Run:
    """Run ``bisca check-bot OPTIONS -- BOT`` as a process (with ``quiet_s``, listening that
    long after each check for a second answer)."""
    argv = ["check-bot", "--log-dir", str(tmp_path), *options, "--", *bot]
    if quiet_s is None:
        completed = bisca(*argv, timeout=180)
    else:
        completed = subprocess.run(
            [*PATIENT_BISCA, str(quiet_s), *argv], capture_output=True, text=True, timeout=180
        )
    return Run(completed.returncode, completed.stdout.splitlines(), completed.stderr)


def sample(name: str) -> list[str]:
    return sample_bot(name, "belote", "bestia")


def broken(name: str) -> list[str]:
    return [sys.executable, str(BOTS / f"{name}.py")]


def names(games: tuple[str, ...]) -> list[str]:
    """Every check's name, in order, for these games."""
    expected = ["hello"]
    for game in games:
        expected.append(f"{game}: full match")
        expected += [f"{game}: phase {label}" for label in script.PHASES[game]]
        expected += [
            f"{game}: {what}"
            for what in (
                "rejected action corrected",
                "short clock",
                "events between requests",
                "two matches at once",
                "match that ends early",
                "reconnect",
            )
        ]
    return [*expected, OWN_ERRORS]


BOTH = ("belote", "bestia")
ALL_CHECKS = names(BOTH)
BELOTE_CHECKS = names(("belote",))


def assert_every_check_passes(run: Run, tmp_path: Path) -> None:
    report = "\n".join(run.lines)
    assert run.code == 0, report + run.stderr
    assert list(run.checks) == ALL_CHECKS
    assert all(text.startswith("PASS") for text in run.checks.values()), report
    assert run.summary == (len(ALL_CHECKS), 0)
    assert f"bot stderr in {tmp_path / 'bot.stderr.log'}" in report
    assert "bot process: exited with code 0 after the server closed its stream" in report


@pytest.mark.parametrize("bot", ["random", "greedy"])
def test_python_sample_bots_pass_every_check(tmp_path: Path, bot: str) -> None:
    run = check_bot(tmp_path, sample(bot))
    assert_every_check_passes(run, tmp_path)
    assert run.lines[1].startswith("games: the ones its Hello lists, of belote, bestia; ")
    checks = run.checks
    assert "protocol 2 (events inside requests)" in checks["hello"]
    assert re.search(r"carrying \d+ events between them", checks["belote: events between requests"])
    assert "resumed=true" in checks["belote: reconnect"]
    assert "with a 300 ms clock" in checks["bestia: short clock"]
    assert "sent two at a time" in checks["bestia: two matches at once"]
    assert "MatchEnded FINISHED" in checks["belote: full match"]
    # The bot's own log is kept where the report says.
    assert "welcomed" in (tmp_path / "bot.stderr.log").read_text()


def test_a_bot_that_asks_for_live_events_gets_them_and_passes(tmp_path: Path) -> None:
    """The checker sends what the referee would for the Hello: each step's events at once."""
    run = check_bot(tmp_path, [*sample("random"), "--live-events"])
    assert_every_check_passes(run, tmp_path)
    assert "protocol 2 (live events)" in run.checks["hello"]
    events = run.checks["bestia: events between requests"]
    assert re.search(r"after [1-9]\d* event batches \(one event each\)", events)


def test_node_random_bot_passes_every_check(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node, "Node.js (node) is needed: `make test` installs the Node client's packages"
    run = check_bot(tmp_path, [node, str(NODE_RANDOM)])
    assert_every_check_passes(run, tmp_path)


def test_illegal_answers_fail_every_request(tmp_path: Path) -> None:
    run = check_bot(tmp_path, broken("illegal"), "--timeout-s", "1")
    assert run.code == 1
    checks = run.checks
    assert list(checks) == ALL_CHECKS
    assert checks.pop("hello").startswith("PASS")
    assert checks.pop(OWN_ERRORS).startswith("PASS")
    for name, text in checks.items():
        assert text.startswith("FAIL"), name
        assert "is not one of its legal actions" in text, (name, text)
        assert "sent: ActionRequest r" in text and "got: ActionReply 'r" in text, text
    assert "(bidding is not over: pass or take)" in checks["belote: phase bidding round 1"]
    assert run.summary == (2, len(ALL_CHECKS) - 2)


def test_a_bot_that_never_answers_fails_on_the_clock(tmp_path: Path) -> None:
    run = check_bot(tmp_path, broken("silent"), "--game", "belote", "--timeout-s", "0.3")
    assert run.code == 1
    checks = run.checks
    assert list(checks) == BELOTE_CHECKS
    assert checks.pop("hello").startswith("PASS")
    assert checks.pop(OWN_ERRORS).startswith("PASS")
    for name, text in checks.items():
        assert re.search(r"^FAIL .*no answer to request r\S+ within 300 ms", text), (name, text)
        assert "sent: ActionRequest" in text
    assert run.summary == (2, len(BELOTE_CHECKS) - 2)


def test_garbage_bytes_are_reported_not_fatal(tmp_path: Path) -> None:
    run = check_bot(tmp_path, broken("garbage"), "--timeout-s", "1")
    assert run.code == 1
    checks = run.checks
    assert list(checks) == ALL_CHECKS
    assert checks.pop("hello").startswith("PASS")
    assert checks.pop(OWN_ERRORS).startswith("PASS")
    for name, text in checks.items():
        assert "bytes that are not a bisca.v1.BotMessage" in text, (name, text)
    # Not fatal: the same stream carried every check, so the bot never had to start again.
    assert "started again" not in "\n".join(run.lines)
    assert run.summary == (2, len(ALL_CHECKS) - 2)


def test_made_up_request_ids_are_caught(tmp_path: Path) -> None:
    run = check_bot(tmp_path, broken("wrong_id"), "--timeout-s", "1")
    assert run.code == 1
    checks = run.checks
    assert checks.pop("hello").startswith("PASS")
    assert checks.pop(OWN_ERRORS).startswith("PASS")
    for name, text in checks.items():
        assert re.search(r"a reply with request id 'made-up-\d+', which no request had", text), (
            name,
            text,
        )
    assert run.summary == (2, len(ALL_CHECKS) - 2)


def test_a_crashing_bot_is_started_again_then_given_up(tmp_path: Path) -> None:
    run = check_bot(tmp_path, broken("crash"), "--game", "belote", "--timeout-s", "1")
    assert run.code == 1
    checks = run.checks
    full = checks["belote: full match"]
    assert full.startswith("FAIL at request 4 of the match: the stream ended")
    assert "the bot process exited with code 3" in full
    assert "crash.py: exiting on purpose" in full  # the tail of its stderr
    assert checks["belote: phase bidding round 1"].startswith("PASS")
    assert (
        "(the bot process exited with code 3 and was started again)"
        in (checks["belote: phase bidding round 1"])
    )
    assert checks["belote: reconnect"].startswith("FAIL not run: the bot was started 4 times")
    assert "bot process: exited with code 3 before the checks ended" in run.lines


def test_a_wrong_token_fails_the_hello(tmp_path: Path) -> None:
    bot = ["/usr/bin/env", "BISCA_TOKEN=not-the-token", *broken("silent")]
    run = check_bot(tmp_path, bot, "--game", "belote", "--timeout-s", "0.3")
    assert run.code == 1
    hello = run.checks["hello"]
    assert hello.startswith("FAIL the Hello's token is not the one in BISCA_TOKEN")
    assert 'token: "…"' in hello  # the report never prints a token


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-bot"]) == 2
    assert "no bot command" in capsys.readouterr().err
    assert main(["check-bot", "--"]) == 2
    with pytest.raises(SystemExit) as exited:
        main(["check-bot", "--game", "chess", "--", "true"])
    assert exited.value.code == 2
    assert "invalid choice: 'chess'" in capsys.readouterr().err
    assert main(["check-bot", "--timeout-s", "0", "--", "true"]) == 2


def test_a_command_that_cannot_start_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "no-such-bot")
    assert main(["check-bot", "--log-dir", str(tmp_path), "--", missing]) == 2
    assert f"cannot start {missing!r}" in capsys.readouterr().err
    assert os.path.isdir(tmp_path)


def test_a_second_answer_fails_the_check_it_belongs_to(tmp_path: Path) -> None:
    # The bot writes its two answers one after the other; on a loaded machine the second may
    # come more than the checker's 30 ms later, so it listens a second.
    run = check_bot(tmp_path, broken("twice"), "--game", "belote", "--timeout-s", "1", quiet_s=1)
    assert run.code == 1
    checks = run.checks
    assert checks.pop("hello").startswith("PASS")
    assert checks.pop(OWN_ERRORS).startswith("PASS")
    for name, text in checks.items():
        assert re.search(
            r"^FAIL .*a second answer to request r\S+, which was already answered", text
        ), (name, text)
        assert "first answer: ActionReply 'r" in text
    assert checks["belote: full match"].startswith("FAIL at request 2 of the match")


def test_the_games_checked_are_the_ones_the_hello_lists(tmp_path: Path) -> None:
    """A Belote-only bot passes without ``--game``; asked for Bestia it fails the Hello and
    no Bestia check runs (no Bestia match would ever seat it)."""
    belote_only = sample_bot("random", "belote")
    run = check_bot(tmp_path / "own", belote_only)
    assert list(run.checks) == BELOTE_CHECKS, run.lines
    assert run.code == 0 and run.summary == (len(BELOTE_CHECKS), 0)
    assert "checking belote, the games it lists" in run.checks["hello"]
    asked = check_bot(tmp_path / "asked", belote_only, "--game", "bestia")
    assert asked.code == 1 and list(asked.checks) == ["hello", OWN_ERRORS], asked.lines
    assert asked.checks["hello"].startswith("FAIL the Hello does not list bestia")
    # No request reached its code: a clean stderr proves nothing, and is not a pass.
    assert asked.checks[OWN_ERRORS].startswith("FAIL not judged"), asked.lines
    assert asked.summary == (0, 2)


def test_a_bot_that_raises_fails_and_the_report_shows_its_traceback(tmp_path: Path) -> None:
    """By default the SDK ends a bot whose code raises: every check after the Hello fails, the
    failures quote the traceback, not just the last lines of stderr."""
    run = check_bot(tmp_path, broken("raises"), "--timeout-s", "1")
    assert run.code == 1
    checks = run.checks
    full = checks["belote: full match"]
    assert full.startswith("FAIL"), full
    assert "its first traceback" in full and "Traceback (most recent call last):" in full
    assert "ValueError: raises.py cannot choose among" in full
    own = checks[OWN_ERRORS]
    assert own.startswith("FAIL its stderr shows") and "in choose" in own


def test_a_bot_still_running_after_its_stream_ended_is_reported_with_its_traceback(
    tmp_path: Path,
) -> None:
    """A bot slow to exit once its SDK ended it (a loaded machine: a CI run failed so) is
    reported still running, and with what it wrote before its stream ended."""
    run = check_bot(tmp_path, [*broken("raises"), "--linger"], "--timeout-s", "1")
    assert run.code == 1
    full = run.checks["belote: full match"]
    assert "the bot process is still running" in full, full
    assert "its first traceback" in full and "ValueError: raises.py cannot choose among" in full


def test_a_bot_kept_going_past_its_exceptions_still_fails(tmp_path: Path) -> None:
    """With keep_going the fallback answers every request legally, so only the bot's own-errors
    check can fail it: it does, with the traceback."""
    run = check_bot(tmp_path, [*broken("raises"), "--keep-going"], "--timeout-s", "1")
    assert run.code == 1
    checks = run.checks
    assert list(checks) == BELOTE_CHECKS
    own = checks.pop(OWN_ERRORS)
    assert all(text.startswith("PASS") for text in checks.values()), run.lines
    assert own.startswith("FAIL its stderr shows"), own
    assert "ValueError: raises.py cannot choose among" in own
    assert (
        "keep_going: sending the first legal action instead"
        in (tmp_path / "bot.stderr.log").read_text()
    )


def test_a_bot_that_never_answers_an_action_fails_even_kept_going(tmp_path: Path) -> None:
    """An answer that is not an action of the game (here None) is a bug: with keep_going the
    SDK sends a legal action in its place, every other check passes, and the own-errors check
    fails quoting the SDK's line (it passed 13/13 before)."""
    run = check_bot(tmp_path, [*broken("not_an_action"), "--keep-going"], "--timeout-s", "1")
    assert run.code == 1
    checks = run.checks
    assert list(checks) == BELOTE_CHECKS
    own = checks.pop(OWN_ERRORS)
    assert all(text.startswith("PASS") for text in checks.values()), run.lines
    assert own.startswith("FAIL its stderr shows"), own
    assert (
        "the bot returned None, which is not an action of the game (does every path of "
        "choose() return an action?)"
    ) in own


def test_the_short_clock_is_asked_again_and_missed_at_every_try_fails(tmp_path: Path) -> None:
    """A 300 ms clock missed once (a loaded machine: a league's gate checks versions beside
    its matches) is asked again in a new match; one missed at every try fails, naming each."""
    once = check_bot(
        tmp_path / "once", [*broken("slow_on_short_clocks"), "once"], "--game", "belote"
    )
    passed = once.checks["belote: short clock"]
    assert passed.startswith("PASS"), "\n".join(once.lines)
    assert "with a 300 ms clock answered in" in passed
    assert "(try 2 of 3; before: no answer to request r" in passed and "within 300 ms)" in passed
    always = check_bot(tmp_path / "always", broken("slow_on_short_clocks"), "--game", "belote")
    failed = always.checks["belote: short clock"]
    assert failed.startswith("FAIL"), "\n".join(always.lines)
    assert "within 300 ms (the last of 3 tries, each missed)" in failed
    assert "try 1: no answer to request r" in failed and "try 2: no answer to request r" in failed
    # The tries' late answers are for matches that are over: no other check pays for them.
    assert always.summary == (len(BELOTE_CHECKS) - 1, 1), "\n".join(always.lines)
