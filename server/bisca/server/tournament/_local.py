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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio
from rich import box
from rich.table import Table

from bisca.engine import Settings
from bisca.server.edge import ArenaServer, ServerConfig
from bisca.server.referee import ClockSettings, MatchPlan, MatchRunner, ServerOptions
from bisca.server.sandbox import BotLauncher, SandboxPolicy, bot_argv, run_seat_bot
from bisca.server.store import text_lines

from ._arena import running_arena
from ._tournament_file import derive_seed


@dataclass
class LocalMatch:
    runner: MatchRunner
    match_dir: Path
    bot_names: list[str]
    exit_codes: list[int | None]


def display_name(command: str, seat: int) -> str:
    first = shlex.split(command)[0] if command.strip() else "bot"
    return f"seat{seat}-{Path(first).name}"


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
) -> LocalMatch:
    argvs = [bot_argv(command, game) for command in bot_commands]
    names = [display_name(command, seat) for seat, command in enumerate(bot_commands)]
    config = ServerConfig(
        data_dir=data_dir,
        listen=["127.0.0.1:0"],
        admin_token="local-" + os.urandom(8).hex(),
        options=ServerOptions(clock=clock, join_timeout=join_timeout),
        alone=True,
    )
    async with running_arena(config, sandbox or SandboxPolicy()) as (server, launcher):
        return await server.in_trio(
            _play, server, launcher, game, settings, argvs, names, seed, clock
        )


async def _play(
    server: ArenaServer,
    launcher: BotLauncher,
    game: str,
    settings: Settings,
    argvs: list[list[str]],
    names: list[str],
    seed: int | None,
    clock: ClockSettings,
) -> LocalMatch:
    referee = server.referee
    tokens = [referee.add_ephemeral_bot(name) for name in names]
    runner = await referee.create_match(
        MatchPlan(game, settings, tuple(names), seed=seed, clock=clock)
    )
    match_dir = runner.match_dir
    assert match_dir is not None
    match_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    exit_codes: list[int | None] = [None] * len(argvs)
    async with trio.open_nursery() as nursery:
        for seat, (argv, token) in enumerate(zip(argvs, tokens, strict=True)):
            # Each seat's own seed, from the match's: the same --seed plays the same moves.
            bot_seed = derive_seed(runner.seed, "seat", seat)
            process = launcher.process(argv, token, match_dir / f"seat{seat}", seed=bot_seed)
            nursery.start_soon(run_seat_bot, seat, process, runner, exit_codes)
        await runner.done.wait()
        for name in names:
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
        for name in ("seat", "bot", "score", "rank", "end", "timeouts", "defaults"):
            table.add_column(name, justify="left" if name in ("bot", "end") else "right")
        for record in runner.results:
            end = record.end.value
            if record.forfeited:
                end += f": {record.forfeit_reason}"
            table.add_row(
                str(record.seat),
                record.bot_name,
                str(record.score),
                str(record.rank + 1),
                end,
                str(record.timeouts),
                str(record.defaults_played),
            )
        lines += text_lines(table)
    lines.append(f"bot output: {match.match_dir}/seat*.stderr.log")
    return lines
