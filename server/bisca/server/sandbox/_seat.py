"""A bot process in a seat of a match, for the match: started with it, watched, stopped after.

``bisca match`` and the web app's tables seat their bots this way: a bot that cannot start, or
ends before the match starts, fails the waiting match; one whose process ends during the match
(a crash, a limit) forfeits its seat then, with the reason, and a default player finishes it.
"""

from __future__ import annotations

import trio

from bisca.server.records import MatchStatus, seat_bot_failed
from bisca.server.referee import MatchRunner

from ._botproc import BotProcess, BotStartError, quiet_exit_hint

EXIT_GRACE_SECONDS = 5.0


async def run_seat_bot(
    seat: int,
    process: BotProcess,
    runner: MatchRunner,
    exit_codes: list[int | None],
    private_stderr: bool = False,
) -> None:
    """Start one seat's bot process and keep it for the match: a bot that cannot start, or
    ends before the match starts, fails the waiting match (the reason ends with its stderr's
    last lines, unless ``private_stderr``: a league's bot, whose stderr is its owner's alone
    and kept apart, while a match's reason is public); one that ends during it forfeits its
    seat.  Its exit code lands in ``exit_codes[seat]`` once it is stopped after the match."""
    try:
        process.start()
    except BotStartError as problem:
        runner.abort_waiting(seat_bot_failed(seat, str(problem)))
        return

    async def watch_it() -> None:
        await process.wait()
        ended = process.end_reason(read_stderr=not private_stderr)
        if runner.status is MatchStatus.WAITING:
            said = ""
            if not private_stderr:  # its stderr, or that it has none, is its owner's alone
                hint = quiet_exit_hint(process)
                said = f"; {hint}" if hint else f"; the end of its stderr:\n{process.stderr_text()}"
            runner.abort_waiting(seat_bot_failed(seat, f"{ended} before the match started{said}"))
        else:
            runner.forfeit_seat(seat, f"its bot process {ended}", crashed=True)

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_it)
            await runner.done.wait()
            nursery.cancel_scope.cancel()
    finally:
        if not runner.done.is_set():
            # Stopped before its match's end (a Ctrl-C): the bot is told nothing by the match,
            # and no longer gets the terminal's signal (a session of its own), so it is asked
            # to end now rather than waited for (6 s a Ctrl-C: review s59d, F5).
            process.terminate()
        exit_codes[seat] = await process.stop(EXIT_GRACE_SECONDS)
