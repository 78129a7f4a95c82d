"""``bisca check-bot -- CMD ...``: does a bot command speak the arena's protocol?

A bot author should learn that their bot mishandles a rejection, a second match on the same
connection or a dropped stream before a league does, and from a sentence, not from a forfeit.
So this runs the bot command against a scripted referee that plays it through the situations
the real one produces, checks every answer, and prints one line per check, PASS or FAIL, with
the messages involved.

How it works
    :func:`check_bot` assembles the parts and runs the checks one after the other on the
    bot's connection, emitting each line of the report as soon as it is known:

    * :mod:`._harness` serves a bare Play endpoint (:mod:`._arena`), starts the bot as a
      subprocess with ``BISCA_ADDRESS`` and ``BISCA_TOKEN``, welcomes it, and brings it back
      between checks;
    * :mod:`._match` plays the scripted matches, from real engine states through the
      referee's message builders (:mod:`._script`), and keeps every request sent;
    * :mod:`._judge` judges every answer on its request id, its action and its time with
      the referee's judge, and says what it holds stricter;
    * :mod:`._checks` holds the checks and their order;
    * :mod:`._report` holds the lines they make.

A check that leaves the bot disconnected does not sink the rest: the next check waits for the
bot to come back, or starts the command again if it exited (a few times at most).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from bisca.server.sandbox import UNSANDBOXED_WARNING, SandboxPolicy

from ._checks import END_QUIET_S, Check, Session, checks_of, hello_check
from ._crashes import count_error_reports, first_error_report, stderr_text
from ._harness import Harness
from ._judge import Judge
from ._match import Ledger
from ._report import CheckFailed, CheckResult, Report

#: The games checked, in the order they run, when no ``--game`` is given.
CHECKED_GAMES = ("belote", "bestia")
DEFAULT_TIMEOUT_S = 2.0


async def check_bot(
    argv: Sequence[str],
    games: Sequence[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    log_dir: Path | None = None,
    emit: Callable[[str], None] = print,
    sandbox: SandboxPolicy | None = None,
) -> Report:
    """Check the bot command ``argv`` in ``games`` (default: every game its Hello lists);
    emits the report's lines and returns it.  Raises :class:`BotStartError` when the command
    cannot be started at all.

    Without ``log_dir`` the bot's output goes to a temporary folder, kept when a check fails
    (the report names it: its stderr says why) and removed when every check passes or the bot
    cannot start, so runs leave no folder behind."""
    temporary = log_dir is None
    directory = log_dir or Path(tempfile.mkdtemp(prefix="bisca-check-bot-"))
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    harness = Harness(argv, directory, sandbox or SandboxPolicy())
    ledger = Ledger(harness, move_ms=max(1, round(timeout_s * 1000)))
    session = Session(
        harness,
        ledger,
        Judge(harness, ledger),
        list(games if games is not None else CHECKED_GAMES),
        asked=games is not None,
    )
    report: Report | None = None
    try:
        report = await _run(session, emit, kept=not temporary)
    finally:
        if temporary:
            if report is not None and report.failed:
                emit(f"the bot's output is kept in {directory}")
            else:
                shutil.rmtree(directory, ignore_errors=True)
    assert report is not None  # _run returned it (or raised)
    return report


async def _run(session: Session, emit: Callable[[str], None], *, kept: bool) -> Report:
    """Run every check, emitting each report line as soon as it is known (``kept``: the bot's
    output stays where it is written, else only if a check fails)."""
    harness = session.harness
    process = await harness.serve()
    report = Report(process.command, session.games, process.stderr_path)
    emit(f"bisca check-bot: {report.command}")
    which = ", ".join(session.games)
    if not session.asked:
        which = f"the ones its Hello lists, of {which}"
    emit(
        f"games: {which}; {session.ledger.move_ms} ms per answer; "
        f"bot stderr in {process.stderr_path}"
        + ("" if kept else " (kept if a check fails; --log-dir DIR keeps it always)")
    )
    if not session.harness.sandbox.enabled:
        emit(UNSANDBOXED_WARNING)
    try:
        process.start()  # BotStartError: the command cannot be run (the caller says so)
        hello = hello_check()
        checks = [hello]
        while checks:
            check = checks.pop(0)
            result = await _run_check(session, check)
            report.results.append(result)
            for line in result.lines():
                emit(line)
            if check is hello:  # now the games are the ones the Hello lists
                report.games = list(session.games)
                checks = [c for game in session.games for c in checks_of(game)]
        report.process_end = await harness.finish()
    finally:
        await harness.close()
    # (The Hello check comes first; when it failed no request reached the bot's code.)
    errors = own_errors_check(
        process.stderr_path, ran=bool(report.results) and report.results[0].passed
    )
    report.results.append(errors)
    for line in errors.lines():
        emit(line)
    emit(f"bot process: {report.process_end}")
    emit(report.summary())
    return report


#: The name of the last check, which reads the bot's stderr once the bot is stopped.
OWN_ERRORS_CHECK = "the bot's own errors"


def own_errors_check(stderr_path: Path, ran: bool = True) -> CheckResult:
    """FAIL when the bot's stderr holds an error report (a traceback, or an SDK's line about
    an answer that is not an action of the game): a bot that played on with a fallback
    answered every check, but it has a bug.  ``ran``: the bot got past its Hello; when it did
    not, a clean stderr proves nothing (no request ever reached its code), so it fails too."""
    text = stderr_text(stderr_path)
    shown = first_error_report(text)
    if not shown and not ran:
        return CheckResult(
            OWN_ERRORS_CHECK,
            False,
            # (No colon in it: a check's line is "NAME: TEXT", and NAME may hold one.)
            "not judged, since the bot never got past its Hello and none of its code ran (the "
            "hello check says why)",
        )
    if not shown:
        return CheckResult(
            OWN_ERRORS_CHECK, True, "no traceback and no answer that is not an action on its stderr"
        )
    count = count_error_reports(text)
    return CheckResult(
        OWN_ERRORS_CHECK,
        False,
        f"its stderr shows {count} error report(s) from the bot's code (a fallback may have "
        f"hidden them from the other checks); the first (from {stderr_path}) below",
        [f"  {line}" for line in shown],
    )


async def _run_check(session: Session, check: Check) -> CheckResult:
    """One check, as a result: connected first if it needs to be, listened to a moment
    after, and its matches ended whatever happened."""
    harness = session.harness
    note = ""
    session.ledger.current_check = check.name
    try:
        if check.needs_link:
            note = await harness.ensure_link()
        text = await check.run(session)
        if harness.link is not None and harness.link.open:
            await session.judge.quiet(END_QUIET_S)  # a second answer, sent at once, fails here
        result = CheckResult(check.name, True, text + (f" ({note})" if note else ""))
    except CheckFailed as failure:
        details = [*failure.details, *([note] if note else [])]
        result = CheckResult(check.name, False, failure.reason, details)
    finally:
        session.ledger.end_check()
    return result
