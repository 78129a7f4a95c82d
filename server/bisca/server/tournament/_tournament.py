"""``bisca tournament run FILE.toml``: many matches between local bot commands, resumable.

One in-process arena (loopback, a random port) plays the whole tournament.  Each bot of the
file runs as **one process for the whole tournament**, connected once with a one-time token,
and plays all its matches on that connection, several at once (every request names its match
and seat).  Measured here (docs/leagues.md, "Bot processes"): starting a Python sample bot
costs about 0.4 s of CPU before its first move, more than a whole Belote match of play, so a
process per match would spend most of a 2-core machine on start-ups.  A bot process that dies
is started again (its seats wait on their clocks meanwhile, and it gets them back when it
reconnects).

Resumable: the plan is stored first (``tournaments``/``tournament_matches``), each planned
match points at its current attempt, and a match's result and rating update commit in one
transaction.  A planned match counts as played exactly when its current attempt's match row
is ``finished``; so after ``kill -9`` or Ctrl-C the same command skips what finished, marks the
attempts that were cut off as failed, and plays those matches again from their start under a
new id (``PLANNED-r2``), with the same seed and seats.
"""

from __future__ import annotations

import functools
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import trio

from bisca.server.datadir import DEFAULT_DATA_DIR, DataDir
from bisca.server.edge import ArenaServer, ServerConfig
from bisca.server.errors import TournamentError
from bisca.server.records import MatchStatus, TournamentSlot
from bisca.server.referee import MatchPlan, MatchRunner, ServerOptions
from bisca.server.sandbox import (
    SAMPLE_BOTS,
    BotLauncher,
    BotProcess,
    BotStartError,
    SandboxPolicy,
    argv_from,
    bot_argv,
    cannot_start,
    quiet_exit_hint,
    with_start_hint,
)
from bisca.server.store import LeaderboardRow, Standings

from ._arena import running_arena
from ._fingerprints import FingerprintBook, bot_fingerprint, changed_bots, check_unchanged
from ._progress import ProgressView
from ._tournament_file import BotEntry, TournamentSpec, derive_seed, planned_seed

#: Attempts at one planned match within one run before it is given up (a bot that crashes
#: every time, ...); a later run tries again.
MAX_ATTEMPTS_PER_RUN = 3
#: A bot process that exits is started again, at most this many times in a row; a process
#: that ran for STABLE_SECONDS before exiting starts the count again.  Past it the run stops.
MAX_RESTARTS = 5
STABLE_SECONDS = 60.0
EXIT_GRACE_SECONDS = 5.0
#: A worker that has not beaten for this long is taken for dead and its matches are played
#: again elsewhere; it beats every third of it (``--lease``: defined here, not with the queue,
#: so that the commands that offer the option load no queue for its default).
DEFAULT_LEASE_SECONDS = 30.0
REDRAW_SECONDS = 0.25
STANDINGS_ROWS = 10


@dataclass
class Summary:
    """How a run ended."""

    name: str
    game: str
    data_dir: Path
    planned: int
    finished: int
    played_now: int
    failed: list[tuple[str, str]] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)
    leaderboard: list[LeaderboardRow] = field(default_factory=list)
    standings: Standings | None = None
    example_log: Path | None = None

    @property
    def complete(self) -> bool:
        return self.finished == self.planned


def default_data_dir(spec: TournamentSpec) -> Path:
    return DataDir(DEFAULT_DATA_DIR).tournament_dir(spec.name)


async def run_tournament(
    spec: TournamentSpec,
    data_dir: Path,
    out: TextIO | None = None,
    store: str | None = None,
    accept_changed: bool = False,
) -> Summary:
    """Run (or resume) a tournament in ``data_dir`` with its own in-process arena (and the
    store ``store`` names, if not the data directory's); a resumed run whose bots' files
    changed is refused, naming them, unless ``accept_changed`` (``_fingerprints.py``)."""
    config = ServerConfig(
        store=store,
        data_dir=data_dir,
        listen=["127.0.0.1:0"],
        admin_token="tournament-" + os.urandom(8).hex(),
        options=ServerOptions(clock=spec.clock, join_timeout=spec.join_timeout_s),
        alone=True,
    )
    policy = SandboxPolicy(enabled=spec.sandbox, limits=spec.limits)
    async with running_arena(config, policy) as (server, launcher):
        run = TournamentRun(spec, server, launcher, out or sys.stdout, accept_changed)
        return await server.in_trio(run.run)


class TournamentRun:
    """One run of a tournament, inside the arena's trio world."""

    def __init__(
        self,
        spec: TournamentSpec,
        server: ArenaServer,
        launcher: BotLauncher,
        out: TextIO,
        accept_changed: bool = False,
    ) -> None:
        self.spec = spec
        self.accept_changed = accept_changed
        self.server = server
        self.launcher = launcher
        self.referee = server.referee
        self.store = server.store
        self.data_dir = server.config.data_dir
        self.layout = DataDir(self.data_dir)
        self.bot_dir = self.layout.tournament_bots(spec.name)
        self.view = ProgressView(spec, out)
        self.processes: dict[str, BotProcess] = {}
        self.running: dict[str, MatchRunner] = {}
        self.stopping = False
        self.connected = False  # every bot has connected once: from then on, restart crashes
        self.play_scope = trio.CancelScope()
        self.failure: TournamentError | None = None
        self.planned = 0
        self.finished = 0
        self.played_now = 0
        self.failed: list[tuple[str, str]] = []
        self.given_up: list[str] = []
        self.dead_bots: dict[str, str] = {}
        self.fingerprints = FingerprintBook(self.bot_dir)
        #: Each bot's fingerprint as this run plays it (none for a sample bot).
        self.bot_prints: dict[str, str] = {}

    async def _read_fingerprints(self) -> None:
        for bot in self.spec.bots:
            if bot.command not in SAMPLE_BOTS:
                found = await trio.to_thread.run_sync(bot_fingerprint, self._argv(bot), bot.dir)
                if found is not None:
                    self.bot_prints[bot.name] = found

    async def _check_fingerprints(self) -> None:
        await self._read_fingerprints()
        changed = check_unchanged(
            self.spec.name, self.fingerprints, self.bot_prints, self.accept_changed
        )
        for name in changed:
            self.view.note(f"{name}: its files changed; going on with them (--accept-changed)")

    async def _note_changed_since(self) -> None:
        """A finished tournament shows its results whatever changed since; a bot whose files
        changed is named, so its author does not take them for the new files' (review s58e:
        the old standings came back as if the edit had been played)."""
        await self._read_fingerprints()
        for name in changed_bots(self.fingerprints, self.bot_prints):
            self.view.note(
                f"{name}: its files changed since this tournament was played: these results are "
                "of its old files (give the tournament a new `name` to play the new ones)"
            )

    async def run(self) -> Summary:
        stored = await trio.to_thread.run_sync(self.store.tournaments.get, self.spec.name)
        spec = self.spec = planned_seed(self.spec, stored)
        slots = spec.plan()
        self.planned = len(slots)
        await trio.to_thread.run_sync(
            functools.partial(
                self.store.tournaments.save_plan,
                spec.name,
                spec.game,
                spec.digest(slots),
                spec.source,
                slots,
                seed=spec.dealt_from,
            )
        )
        slots = await trio.to_thread.run_sync(self.store.tournaments.slots, spec.name)
        cut_off = [s.match_id for s in slots if not s.done and s.match_id is not None]
        if cut_off:
            await trio.to_thread.run_sync(
                self.store.matches.abandon_unfinished,
                cut_off,
                "cut off: the tournament process stopped; the match is replayed from its start",
            )
        pending = [s for s in slots if not s.done]
        if pending:
            await self._check_fingerprints()
        else:  # a finished tournament only shows its results, whatever changed since
            await self._note_changed_since()
        self.finished = self.planned - len(pending)
        self.view.start(self.planned, self.finished)
        if pending:
            async with trio.open_nursery() as bots:
                for bot in spec.bots:
                    bots.start_soon(self._supervise, bot)
                try:
                    with self.play_scope:
                        await self._wait_for_bots()
                        await self._play(pending)
                except TournamentError as problem:  # raised below, outside the nursery
                    self.failure = problem
                finally:
                    await self._stop_bots()
            if self.failure is not None:
                raise self.failure
        leaderboard = await trio.to_thread.run_sync(self.store.ratings.leaderboard, spec.game)
        standings = await trio.to_thread.run_sync(self.store.matches.standings, spec.game)
        self.view.finish(self.finished, leaderboard, standings)
        example = None
        if slots:
            final = await trio.to_thread.run_sync(self.store.tournaments.slots, spec.name)
            done = [s for s in final if s.done and s.match_id]
            if done:
                match_id = str(done[-1].match_id)
                example = self.layout.match_log(match_id)
        return Summary(
            name=spec.name,
            game=spec.game,
            data_dir=self.data_dir,
            planned=self.planned,
            finished=self.finished,
            played_now=self.played_now,
            failed=self.failed,
            given_up=self.given_up,
            leaderboard=leaderboard,
            standings=standings,
            example_log=example,
        )

    # ---- bots -------------------------------------------------------------------------------

    def _argv(self, bot: BotEntry) -> list[str]:
        return bot_command(self.spec, bot)

    async def _supervise(self, bot: BotEntry) -> None:
        """Keep the bot's process running until the tournament is over."""
        token = self.referee.add_ephemeral_bot(bot.name)
        restarts = 0
        while not self.stopping:
            process = self.launcher.process(
                self._argv(bot),
                token,
                self.bot_dir / bot.name,
                folder=bot.dir,
                limits=bot.limits,
                # One process plays all the bot's matches: its seed is the tournament's and its
                # name's, the same in every run (and after a restart) of this tournament.
                seed=derive_seed(self.spec.dealt_from, "bot", bot.name),
            )
            self.processes[bot.name] = process
            try:
                process.start()
            except BotStartError as problem:
                self.dead_bots[bot.name] = str(problem)
                return
            started = trio.current_time()
            code = await process.wait()
            if self.stopping:
                return
            if not self.connected:  # it failed before the tournament began: say why, stop
                hint = quiet_exit_hint(process)
                self.dead_bots[bot.name] = f"it exited with status {code} before connecting; " + (
                    hint or f"the end of its stderr:\n{process.stderr_text()}"
                )
                return
            ended = process.end_reason()
            if process.limit_hit():
                # A limit is the bot's own doing: its seats now forfeit, with the reason,
                # rather than wait on their clocks for a restarted process.
                for runner in list(self.running.values()):
                    runner.forfeit_bot(bot.name, f"its bot process {ended}", crashed=True)
            if trio.current_time() - started > STABLE_SECONDS:
                restarts = 0  # a crash now and then is not a crash loop
            restarts += 1
            if restarts > MAX_RESTARTS:
                # Its matches could only fail now: stop, and let a later run go on.
                self.failure = TournamentError(
                    f"bot {bot.name} exited {restarts} times; stopped with {self.finished} of "
                    f"{self.planned} matches played (the same command continues); the end of "
                    f"its stderr:\n{process.stderr_text()}"
                )
                self.play_scope.cancel()
                return
            await trio.sleep(min(0.2 * 2**restarts, 5.0))
            # Said once the back-off is over: a Ctrl-C that reached the bots too (their
            # process group) ends the run during it, and nothing is started again.
            self.view.note(f"bot {bot.name} {ended}; started again")

    async def _wait_for_bots(self) -> None:
        deadline = trio.current_time() + self.spec.join_timeout_s
        while True:
            missing = [b.name for b in self.spec.bots if not self.referee.connections_of(b.name)]
            if not missing:
                self.connected = True
                return
            dead = [name for name in missing if name in self.dead_bots]
            if dead:
                raise TournamentError(f"bot {dead[0]} could not start: {self.dead_bots[dead[0]]}")
            if trio.current_time() > deadline:
                process = self.processes.get(missing[0])
                tail = process.stderr_text() if process else ""
                raise TournamentError(
                    f"bot {missing[0]} did not connect within {self.spec.join_timeout_s:g} s"
                    + (f"; the end of its stderr:\n{tail}" if tail else "")
                )
            with trio.move_on_after(0.2):
                await self.referee.wait_bots_changed()

    async def _stop_bots(self) -> None:
        """Close the bots' streams (the SDK's signal to exit), then wait or kill."""
        self.stopping = True
        for bot in self.spec.bots:
            self.referee.drop_ephemeral_bot(bot.name)
        async with trio.open_nursery() as nursery:
            for process in self.processes.values():
                nursery.start_soon(process.stop, EXIT_GRACE_SECONDS)

    # ---- matches ----------------------------------------------------------------------------

    async def _play(self, pending: Sequence[TournamentSlot]) -> None:
        limiter = trio.CapacityLimiter(self.spec.concurrency)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._redraw)
            async with trio.open_nursery() as matches:
                for slot in pending:
                    await limiter.acquire_on_behalf_of(slot.slot)
                    matches.start_soon(self._play_limited, slot, limiter)
            nursery.cancel_scope.cancel()

    async def _play_limited(self, slot: TournamentSlot, limiter: trio.CapacityLimiter) -> None:
        try:
            await self.play_slot(slot)
        finally:
            limiter.release_on_behalf_of(slot.slot)

    async def play_slot(self, slot: TournamentSlot) -> MatchStatus | None:
        """Play one planned match, from its start, up to MAX_ATTEMPTS_PER_RUN times; the
        status of its last attempt, or ``None`` when it was found played (by a worker its
        job was taken back from, after ``slot`` was read)."""
        spec = self.spec
        attempt = slot.attempts
        for _ in range(MAX_ATTEMPTS_PER_RUN):
            attempt += 1
            match_id = slot.planned_id if attempt == 1 else f"{slot.planned_id}-r{attempt}"
            started = await trio.to_thread.run_sync(
                self.store.tournaments.start_attempt, spec.name, slot.slot, match_id
            )
            if not started:
                return None
            runner = await self.referee.create_match(
                MatchPlan(
                    spec.game,
                    spec.settings,
                    slot.bots,
                    seed=slot.seed,
                    clock=spec.clock,
                    join_timeout=spec.join_timeout_s,
                    match_id=match_id,
                    rated=True,
                )
            )
            self.running[match_id] = runner
            try:
                await runner.done.wait()
            finally:
                del self.running[match_id]
            if runner.status is MatchStatus.FINISHED:
                self.finished += 1
                self.played_now += 1
                played = {bot: self.bot_prints[bot] for bot in slot.bots if bot in self.bot_prints}
                if played:  # sample bots only: nothing of theirs can change
                    await trio.to_thread.run_sync(self.fingerprints.record, match_id, played)
                return runner.status
            self.failed.append((match_id, runner.reason))
            self.view.note(f"match {match_id} failed: {runner.reason}")
        self.given_up.append(slot.planned_id)
        return MatchStatus.FAILED

    async def serve_bots(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """For a worker: start the tournament's bots, report ready once every one has
        connected, then keep them running (restarting crashed ones) until cancelled; the
        worker plays planned matches meanwhile (:meth:`play_slot`)."""
        async with trio.open_nursery() as bots:
            for bot in self.spec.bots:
                bots.start_soon(self._supervise, bot)
            try:
                with self.play_scope:
                    await self._wait_for_bots()
                    task_status.started()
                    await trio.sleep_forever()
            except TournamentError as problem:  # raised below, outside the nursery
                self.failure = problem
            finally:
                with trio.CancelScope(shield=True):
                    await self._stop_bots()
        if self.failure is not None:
            raise self.failure

    async def _redraw(self) -> None:
        while True:
            standings = await trio.to_thread.run_sync(
                self.store.ratings.leaderboard, self.spec.game, STANDINGS_ROWS
            )
            self.view.update(self.finished, len(self.running), standings)
            await trio.sleep(REDRAW_SECONDS)


def replay_command(command: str, log: Path | str, data_dir: Path | str) -> str:
    """The line that replays ``log`` checked against the key of ``data_dir``, the data
    directory that signed it (without ``--data`` the log is shown as untrusted)."""
    return f"{command} replay show {shlex.quote(str(log))} --data {shlex.quote(str(data_dir))}"


def summary_lines(summary: Summary, command: str = "bisca") -> list[str]:
    """What the command prints after the final leaderboard: failures and where things are
    (the commands to paste written with ``command`` for ``bisca``)."""
    lines = []
    if summary.failed:
        lines.append(f"{len(summary.failed)} match attempt(s) failed:")
        lines += [f"  {match_id}: {reason}" for match_id, reason in summary.failed[:10]]
    if summary.given_up:
        lines.append(
            f"{len(summary.given_up)} planned match(es) not played after "
            f"{MAX_ATTEMPTS_PER_RUN} attempts: {', '.join(summary.given_up[:10])}; "
            "run the same command again to retry them"
        )
    lines.append(
        f"{summary.finished} of {summary.planned} planned matches played"
        + (f" ({summary.played_now} in this run)" if summary.played_now != summary.finished else "")
    )
    layout = DataDir(summary.data_dir)
    lines.append(f"match logs: {layout.matches}/MATCH_ID/ (one folder per match)")
    if summary.example_log is not None:
        lines.append(f"  e.g. {replay_command(command, summary.example_log, summary.data_dir)}")
    lines.append(
        f"bot logs: {layout.tournament_bots(summary.name)}/; leaderboard again: "
        f"{command} leaderboard --game {summary.game} --data {summary.data_dir}"
    )
    return lines


def bot_command(spec: TournamentSpec, bot: BotEntry) -> list[str]:
    """The argv a tournament bot runs: a sample bot's, or its command with the relative paths
    read from the file's folder, as its ``dir`` is."""
    argv = bot_argv(bot.command, spec.game)
    if bot.command in SAMPLE_BOTS:
        return [*argv, "--log-level", "WARNING"]
    return argv_from(argv, spec.folder)


def bot_command_problems(spec: TournamentSpec) -> dict[str, str]:
    """Each bot whose command cannot start, and why (found without starting it).  The command
    is the one ``tournament run`` starts (:func:`bot_command`): a word that names a path in the
    file's folder is already absolute there, and what is left relative is read from the current
    folder, as the started bot would (never from the file's folder a second time: review 45, a
    copy of a demo file in ``examples/`` naming ``.venv/bin/python`` was refused by ``check``
    and played by ``run``)."""
    problems = {}
    for bot in spec.bots:
        if bot.command in SAMPLE_BOTS:
            continue
        argv = bot_command(spec, bot)
        problem = cannot_start(argv)
        if problem is not None:
            problems[bot.name] = (
                f"{bot.command!r} cannot start: {with_start_hint(argv[0], problem)}"
            )
    return problems
