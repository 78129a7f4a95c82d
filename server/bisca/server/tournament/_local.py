"""Local mode: one match between bot commands, with an in-process server (``bisca match``).

Each bot command runs as a subprocess in its sandbox (:mod:`bisca.server.sandbox`) with
``BISCA_ADDRESS``, a one-time ``BISCA_TOKEN`` and ``BISCA_SEED`` (derived from the match's seed
and the seat) in its environment; its stdout and stderr are kept in files
beside the match, under ``DATA/matches/MATCH_ID/``.  When the match ends the server closes the
bots' streams, which is the SDK's signal to exit; a bot still running a few seconds later is
killed; one left behind by a crash of this process is killed by the kernel (the sandbox's
bot processes are on a leash).
A bot whose process ends during the match (a crash, a limit) forfeits its seats then, with the
reason: a default player finishes them and the match goes on.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio
from rich import box
from rich.table import Table

from bisca.engine import Settings
from bisca.server.datadir import seat_log_prefix
from bisca.server.edge import ArenaServer, ServerConfig
from bisca.server.records import game_places
from bisca.server.referee import ClockSettings, MatchPlan, MatchRunner, ServerOptions
from bisca.server.sandbox import (
    SAMPLE_BOTS,
    SCRIPT_SUFFIXES,
    BotLauncher,
    SandboxPolicy,
    bot_argv,
    run_seat_bot,
)
from bisca.server.store import text_lines

from ._arena import running_arena
from ._tournament_file import derive_seed

#: How often a local match says how far it is.
PROGRESS_EVERY_S = 3.0
#: Where a local match's bots wrote, beside its folder: both streams, as a bot's own report
#: usually goes to stdout (the guide's bots print there) and the SDKs' logs to stderr.
SEAT_LOGS = "seat*.std{out,err}.log"
Progress = Callable[[str], None]


async def _report_steps(runner: MatchRunner, progress: Progress) -> None:
    """Say how many steps the match has played, every few seconds, until it is over."""
    while True:
        with trio.move_on_after(PROGRESS_EVERY_S):
            await runner.done.wait()
            return
        progress(f"  ... {runner.steps} steps played")


@dataclass
class LocalMatch:
    runner: MatchRunner
    match_dir: Path
    bot_names: list[str]
    exit_codes: list[int | None]


def bot_name(command: str) -> str:
    """The name a bot command plays under: a sample bot's own (``random``), else its script's
    or program's name without folder and suffix (``python bots/my_bot.py``: ``my_bot``), not
    the interpreter's."""
    words = shlex.split(command) if command.strip() else []
    if len(words) == 1 and words[0] in SAMPLE_BOTS:
        return words[0]
    scripts = [w for w in words[1:] if not w.startswith("-") and Path(w).suffix in SCRIPT_SUFFIXES]
    chosen = Path(scripts[0] if scripts else words[0] if words else "bot")
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in chosen.stem)[:48]
    return name or "bot"


def seat_names(commands: Sequence[str]) -> list[str]:
    """Each seat's bot name (:func:`bot_name`), told apart by its seat where several seats
    run the same bot: each seat is its own process with its own token."""
    names = [bot_name(command) for command in commands]
    return [
        name if names.count(name) == 1 else f"{name}-seat{seat}" for seat, name in enumerate(names)
    ]


async def run_local_match(
    *,
    game: str,
    settings: Settings,
    bot_commands: Sequence[str],
    data_dir: Path,
    seed: int | None,
    clock: ClockSettings,
    join_timeout: float = 30.0,
    sandbox: SandboxPolicy | None = None,
    progress: Progress | None = None,
    private_stderr: bool = False,
    names: Sequence[str] | None = None,
) -> LocalMatch:
    """Play one match between the bot commands; ``progress`` is told when it starts and, every
    :data:`PROGRESS_EVERY_S` seconds, how many steps it has played (``bisca match`` prints
    them on stderr: a long Bestia match is not silent).  ``private_stderr``: as
    :func:`play_launched` says (the gate's validation match, whose reason is public).
    ``names``: the seats' bot names (by default made from the commands, :func:`seat_names`)."""
    argvs = [bot_argv(command, game) for command in bot_commands]
    names = seat_names(bot_commands) if names is None else list(names)
    config = ServerConfig(
        data_dir=data_dir,
        listen=["127.0.0.1:0"],
        admin_token="local-" + os.urandom(8).hex(),
        options=ServerOptions(clock=clock, join_timeout=join_timeout),
        alone=True,
    )
    async with running_arena(config, sandbox or SandboxPolicy()) as (server, launcher):
        plan = MatchPlan(game, settings, tuple(names), seed=seed, clock=clock)
        return await server.in_trio(
            play_launched, server, launcher, plan, argvs, progress, private_stderr
        )


async def play_launched(
    server: ArenaServer,
    launcher: BotLauncher,
    plan: MatchPlan,
    argvs: Sequence[list[str] | None],
    progress: Progress | None = None,
    private_stderr: bool = False,
    names: Sequence[str] | None = None,
) -> LocalMatch:
    """In the referee's trio world: ``plan``'s match between bot processes ``launcher``
    starts, each seat under its bot's name with a one-time token (a local match, a ladder's
    rated match).  A seat whose argv is ``None`` is a registered bot that dials in itself (a
    ladder's connected version): nothing is launched for it.  ``private_stderr``: the bots'
    stderr is their owners' alone (a ladder's), never in the match's public reason."""
    referee = server.referee
    names = list(plan.bots)
    tokens = [None if argv is None else referee.add_ephemeral_bot(name)
              for argv, name in zip(argvs, names, strict=True)]  # fmt: skip
    runner = await referee.create_match(plan)
    match_dir = runner.match_dir
    assert match_dir is not None
    match_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    exit_codes: list[int | None] = [None] * len(argvs)
    if progress is not None:
        progress(
            f"match {runner.id}: {plan.game}, seats {', '.join(names)}; "
            f"bot output in {match_dir}/{SEAT_LOGS}"
        )
    async with trio.open_nursery() as nursery:
        if progress is not None:
            nursery.start_soon(_report_steps, runner, progress)
        for seat, (argv, token) in enumerate(zip(argvs, tokens, strict=True)):
            if argv is None or token is None:
                continue
            # Each seat's own seed, from the match's: the same --seed plays the same moves.
            bot_seed = derive_seed(runner.seed, "seat", seat)
            process = launcher.process(argv, token, seat_log_prefix(match_dir, seat), seed=bot_seed)
            nursery.start_soon(run_seat_bot, seat, process, runner, exit_codes, private_stderr)
        await runner.done.wait()
        for name, token in zip(names, tokens, strict=True):
            if token is not None:
                referee.drop_ephemeral_bot(name)
    return LocalMatch(runner, match_dir, names, exit_codes)


def result_table(match: LocalMatch) -> list[str]:
    runner = match.runner
    summary = f"{runner.game}, {runner.status.value}, {runner.steps} steps, seed {runner.seed}"
    lines = [f"match {runner.id}: {summary}"]
    if runner.reason:
        lines.append(f"reason: {runner.reason}")
    if runner.results:
        table = Table(box=box.SIMPLE_HEAD)
        columns = ("seat", "bot", "score", "place", "end", "crashes", "timeouts", "illegal")
        for name in (*columns, "defaults"):
            table.add_column(name, justify="left" if name in ("bot", "end") else "right")
        shown = game_places(runner.game, runner.results)
        for record, place in zip(runner.results, shown, strict=True):
            end = record.end.value
            if record.forfeited:
                end += f": {record.forfeit_reason}"
            table.add_row(
                str(record.seat),
                record.bot_name,
                str(record.score),
                str(place),
                end,
                str(record.crashes),
                str(record.timeouts),
                str(record.illegal_moves),
                str(record.defaults_played),
            )
        lines += text_lines(table)
    lines.append(f"bot output: {match.match_dir}/{SEAT_LOGS}")
    return lines
