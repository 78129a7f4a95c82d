"""The continuous ladder: the active versions of a league's accounts keep playing rated
matches, drawn by :func:`bisca.server.league.next_pairing`, on the league server's own
referee.

* **Who plays.**  ``store.versions.playing()``: active versions of active accounts, in the
  games of their manifest that the league plays.  A suspended account's or a retired
  version's next pairing does not come; their matches and ratings stay.
* **Where.**  Each match is the referee's own, rated (its result, ratings and log are the
  league's, ``DATA/matches/ID``); each hosted version is launched in the sandbox from a copy of
  its files outside the data directory, as the gate's validation match runs it, one process
  per seat under the version's player name (``adabot.v2``) with a one-time token.  Its stderr
  and stdout are written beside the match (``seatN.stderr.log``, ``seatN.stdout.log``) and,
  once the match ends, the last :data:`MAX_SEAT_OUTPUT` bytes of each are put in the store
  (``store.logs.put_output``), where its owner's page reads them whichever machine played the
  match, and the files are removed (whether the store could keep them or not).
* **Output is forgotten.**  The ladder plays on without end, so each seat's kept output is
  forgotten ``output_days`` after it was kept (:func:`ladder_running`, every
  :data:`FORGET_OUTPUT_S`); the matches, their logs and results stay.
* **Pace.**  A version's matches of the last hour (finished or not; not the rotations its
  pairing never came to) are counted from the store, so a restart, or several workers on one
  store, keep the same pace.
* **Connected versions** (``bisca account connect``) run on their owners' machines and dial
  in with their own bot token under their player name: such a version may be drawn while one
  of its connections is online, idle, and plays the game; nothing is launched for its seat,
  the referee seats its connection.  The league's matchmaker (``--league``) leaves them to
  the ladder.
* **Duplicate deals.**  A pairing's rotations are played one after the other on one deal,
  every one recorded (waiting) before the first plays, so the deal stays sealed until the
  last is over; with a connected version seated each rotation has its own deal
  (:func:`rotation_seeds`).
* **A rotation that fails ends its pairing** (the rest are marked failed, not played): its
  bots are the next rotation's, and a connected version gone offline held the ladder for a
  join timeout per rotation (review 52).
* **Rotations the store could not close.**  A pairing that stops while the store is lost (a
  full disk: the match failed for its log, the store refused the rest) keeps the rotations it
  left open (:attr:`Ladder.left_open`); the served loop's next pass closes them once the store
  answers, before it draws (operator review 55, finding 9: they stayed waiting until a
  restart, and kept their deal's finished replays and stderr sealed all that time).
* **A stop with a pairing in play** (``bisca serve`` ends: SIGTERM, Ctrl-C) leaves none of its
  rotations waiting (operator re-test, defect E: one stayed waiting until the next start, the
  others said a match had failed).  Its finished rotations stay as they are.  Those not
  played yet, the one still waiting for its bots included, are failed with
  :data:`SERVER_STOPPED_ROTATION` (not played, no match failed): the ladder closes them, and
  the referee's runner of the waiting one records its own end, before the server stops, for
  at most :data:`STOP_CLOSE_S` however often the stop cancels it (:func:`finish_within`).  A
  rotation already running is the referee's to end: a stopped server's matches are cut off
  (``CUT_OFF_REASON``), as every other match it was playing.
* **A version whose bot fails its last matches before they start rests** (it cannot start,
  ends, or never connects: ``league.resting``): 10 minutes after its third such failure in a
  row, twice as long after each more.  Its failed matches are not rated, so it stayed a
  newcomer, the anchor of every pairing, and one such upload stopped the whole ladder
  (review 52).
* **One worker here (SQLite).**  :func:`ladder_running` runs the ladder as a task of
  ``bisca serve``, one pairing at a time: draw, play its matches (one per rotation with
  duplicate deals), draw again; when no pairing is ready it waits ``poll_s`` seconds.
* **The workers (PostgreSQL).**  ``bisca serve`` draws and queues each pairing as a job
  (:class:`LadderJob`, one fresh pairing waiting at a time); every ``bisca worker`` plays them
  (:class:`LadderWorker`), on an arena of its own on the shared store.  A job whose worker
  stopped beating is queued again within a lease, outside that one-at-a-time lock (it was
  drawn already), and the worker that takes it closes the rotations that were cut and plays
  the missing ones on the same deal; one whose workers keep dying is failed for good and its
  open rotations swept (:func:`close_orphaned_rotations`): ``tournament/_queue.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import random
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

import trio

from bisca.engine import GAMES, Settings, settings_to_mapping
from bisca.server.accounts import parse_manifest
from bisca.server.datadir import DataDir, OutputStream, seat_output_file
from bisca.server.edge import ArenaServer, ServerConfig, settle_left_open
from bisca.server.errors import BiscaError, ConfigError, KeyFileError, StoreError, StoreTooNew
from bisca.server.league import (
    CUT_OFF_LADDER_ATTEMPT,
    SERVER_STOPPED_ROTATION,
    UNPLAYED_LADDER_ROTATION,
    LadderEntrant,
    LadderPairing,
    LadderSettings,
    in_pace_window,
    next_pairing,
    resting,
    seconds_played,
    unplayed_ladder_rotation,
)
from bisca.server.logs import ServerKey
from bisca.server.records import MatchStatus
from bisca.server.referee import MatchPlan
from bisca.server.sandbox import BotLauncher, SandboxPolicy
from bisca.server.store import (
    INITIAL,
    MAX_SEAT_OUTPUT,
    BotVersionRecord,
    SeatOutput,
    Store,
    StoreOutage,
    VersionKind,
    is_store_lost,
    open_store,
)
from bisca.server.tournament import derive_seed, play_launched, running_arena

from ._builds import Toolchains
from ._copies import runnable_copy
from ._output import read_kept, remove_output, unreadable

if TYPE_CHECKING:
    import procrastinate
    from procrastinate.types import JSONValue

log = logging.getLogger("bisca.ladder")

#: The match queue's surface, loaded by a ladder on a shared store only: procrastinate and its
#: driver take a quarter of a second to load, which every ``bisca serve`` on SQLite would pay.
QUEUE_SURFACE = "bisca.server.tournament.distributed"

#: Seconds a stopping server gives the ladder to close the rotations of the pairing in play
#: (a runner's failure recorded, a store write): past them, the next start's sweep closes them.
STOP_CLOSE_S = 10.0


class LadderQueue(Protocol):
    """What a ladder on a shared store uses of :data:`QUEUE_SURFACE`."""

    def ensure_queue_schema(self, url: str) -> None: ...

    def queue_app(self, url: str) -> procrastinate.App: ...

    async def queue_ladder_pairing(self, app: procrastinate.App, **job: JSONValue) -> bool: ...

    def ladder_deal_lock(self, game: JSONValue, seed: JSONValue) -> str: ...

    async def ladder_deals_held(
        self, app: procrastinate.App, locks: list[str]
    ) -> dict[str, bool]: ...


if TYPE_CHECKING:  # the surface is such a queue (mypy holds the module to the protocol)
    from bisca.server.tournament import distributed

    _SURFACE_IS_A_LADDER_QUEUE: LadderQueue = distributed


def ladder_queue() -> LadderQueue:
    """:data:`QUEUE_SURFACE`, loaded now if it is not."""
    return cast(LadderQueue, importlib.import_module(QUEUE_SURFACE))


@dataclass(frozen=True)
class DrawnPairing:
    """A pairing of one game, with the versions it seats."""

    game: str
    pairing: LadderPairing
    versions: dict[str, BotVersionRecord]


def rotation_seeds(drawn: DrawnPairing) -> list[int]:
    """Each seating's deal: the pairing's for every rotation (duplicate deals, which the
    operator turns on for bots it trusts: a hosted bot can remember a deal too, through the
    machine's shared caches, review s58d), unless a connected version is seated.  That one
    runs on its owner's machine, where it surely may remember a deal from one rotation to the
    next (every card is played in a deal), so then each rotation is dealt its own, derived
    from the pairing's."""
    seed, seatings = drawn.pairing.seed, drawn.pairing.seatings
    if all(version.kind is not VersionKind.CONNECTED for version in drawn.versions.values()):
        return [seed] * len(seatings)
    return [derive_seed(seed, "rotation", rotation) for rotation in range(len(seatings))]


@dataclass
class Ladder:
    """How one league plays its ladder: its store, where the versions' files are, the games
    it plays (with their settings) and the ladder's settings."""

    store: Store
    uploads: Path
    games: Mapping[str, Settings]
    settings: LadderSettings = field(default_factory=LadderSettings)
    #: Draws the pairings and their deals' seeds: the system's, by default, so that the seeds a
    #: finished pairing reveals say nothing of the next (review 48: Mersenne Twister's state
    #: can be rebuilt from its outputs).  Tests pass a seeded one.
    rng: random.Random = field(default_factory=random.SystemRandom)
    #: A shared (PostgreSQL) store's URL: the ladder's matches are then queued for the
    #: workers rather than played here.
    store_url: str | None = None
    #: The arena's SDKs a Node version runs with (as the gate gives them).
    toolchains: Toolchains = field(default_factory=lambda: Toolchains.of_clone(Path.cwd()))
    #: The rotations pairings recorded and left open (never played, or cut) that the store
    #: could not mark failed yet, each with why: :meth:`close_left_open` closes them.
    left_open: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def entrants(
        self, game: str, online: Mapping[str, frozenset[str]]
    ) -> list[tuple[LadderEntrant, BotVersionRecord]]:
        """The versions that may play ``game`` now, with their ratings and pace; ``online``
        is the games each idle connected bot plays."""
        versions = [
            version
            for version in self.store.versions.playing()
            if game in version_games(version, online)
        ]
        if not versions:
            return []
        board = {row.bot: row for row in self.store.ratings.leaderboard(game)}
        at = datetime.now(UTC)
        entrants = []
        for version in versions:
            if resting(self.store, version.player, at) is not None:
                continue
            row = board.get(version.player)
            recent = in_pace_window(self.store, version.player, at)
            entrant = LadderEntrant(
                player=version.player,
                bot=version.bot,
                mu=INITIAL.mu if row is None else row.mu,
                sigma=INITIAL.sigma if row is None else row.sigma,
                matches=0 if row is None else row.matches,
                played_last_hour=len(recent),
                account=version.account,
                seconds_last_hour=seconds_played(recent, at),
            )
            entrants.append((entrant, version))
        return entrants

    def draw(self, online: Mapping[str, frozenset[str]]) -> DrawnPairing | None:
        """The next pairing of the first of the league's games that has one, else ``None``."""
        for game, game_settings in self.games.items():
            seats = GAMES[game].seats(game_settings)
            found = self.entrants(game, online)
            pairing = next_pairing([e for e, _ in found], seats, self.settings, self.rng)
            if pairing is not None:
                by_player = {entrant.player: version for entrant, version in found}
                return DrawnPairing(game, pairing, {p: by_player[p] for p in pairing.players})
        return None

    async def play_next(self, server: ArenaServer, launcher: BotLauncher) -> list[str]:
        """Draw a pairing and play its matches on ``server``; the ids of the matches played
        (none when no pairing is ready).  The rotations earlier pairings left open are closed
        first: while the store cannot record that, this raises and draws nothing (the store
        refuses the new pairing's rows as well)."""
        closed = await self.close_left_open(server)
        if closed:
            log.warning("ladder: %s, left open while the store was lost, marked failed", closed)
        drawn = await asyncio.to_thread(self.draw, idle_connected(server))
        if drawn is None:
            return []
        return await self.play_pairing(server, launcher, drawn)

    async def play_pairing(
        self, server: ArenaServer, launcher: BotLauncher, drawn: DrawnPairing
    ) -> list[str]:
        """Play the matches of ``drawn`` on ``server``, one per seating; their ids.

        Every seating still to play is recorded (waiting) before the first is played, so its
        deal stays sealed until the last is over: no rotation's end shows the cards of the
        next (``Referee.record_ahead``); one left unplayed (the job failed half way) is then
        marked failed, with why, or, when the store cannot record that, kept in
        :attr:`left_open` for :meth:`play_next` to close once it answers; a stop closes them
        on its way out (:meth:`close_on_stop`).  A pairing played
        again (a worker's job queued again after its worker was killed or lost the store)
        plays only what is missing: its deal's attempts left open are marked failed first,
        with why, and a seating already finished is not played twice."""
        played: list[str] = []
        seeds = rotation_seeds(drawn)
        finished = await asyncio.to_thread(self.close_cut_attempts, drawn, seeds)
        settings = self.games[drawn.game]
        hosted = frozenset(
            player
            for player, version in drawn.versions.items()
            if version.kind is not VersionKind.CONNECTED
        )
        plans: list[MatchPlan] = []
        why = UNPLAYED_LADDER_ROTATION
        try:
            for seating, seed in zip(drawn.pairing.seatings, seeds, strict=True):
                if tuple(seating) not in finished:
                    plan = MatchPlan(drawn.game, settings, tuple(seating), seed=seed, rated=True)
                    plans.append(await server.in_trio(server.referee.record_ahead, plan, hosted))
            with contextlib.ExitStack() as copies:
                argvs: dict[str, list[str] | None] = {}
                for player, version in drawn.versions.items():
                    if version.kind is VersionKind.CONNECTED:
                        argvs[player] = None  # it dials in itself
                        continue
                    runnable = runnable_copy(self.uploads, version, self.toolchains)
                    argvs[player] = copies.enter_context(runnable)
                for plan in plans:
                    seating = plan.bots
                    seats = [argvs[player] for player in seating]
                    # (Its seats' output is their owners' alone: kept apart, below.)
                    match = await server.in_trio(
                        play_launched, server, launcher, plan, seats, None, True
                    )
                    played.append(match.runner.id)
                    launched = [n for n, player in enumerate(seating) if argvs[player] is not None]
                    keeping = (match.runner.id, match.match_dir, launched)
                    await asyncio.to_thread(self.keep_output, *keeping)
                    if match.runner.status is MatchStatus.FAILED:
                        break  # the rest seat the same bots: marked failed below, not played
        except asyncio.CancelledError:  # the server stops: no match of the pairing failed
            why = SERVER_STOPPED_ROTATION
            raise
        except Exception as problem:  # (a missing folder, the store): the rest say it
            why = unplayed_ladder_rotation(one_line(problem))
            raise
        finally:
            unplayed = [str(plan.match_id) for plan in plans if plan.match_id not in played]
            self.left_open.update(dict.fromkeys(unplayed, why))
            if why is SERVER_STOPPED_ROTATION:
                await self.close_on_stop(server)
            else:
                await self.close_left_open(server)
        return played

    async def close_on_stop(self, server: ArenaServer) -> None:
        """The server stops with a pairing in play: close the rotations :attr:`left_open`
        holds before it does.  The one the referee holds still waiting for its bots is failed
        by its runner, with its reason (else the runner, cancelled with the server, recorded
        nothing: it stayed waiting until the next start); the others by :meth:`close_left_open`.
        For at most :data:`STOP_CLOSE_S`, however often the stop cancels this meanwhile, and
        never longer (a lost store): what is left open then, the next start's sweep closes."""

        async def close() -> None:
            await server.in_trio(fail_waiting_matches, server, dict(self.left_open))
            await self.close_left_open(server)

        closing = asyncio.ensure_future(close())
        try:
            await finish_within(closing, STOP_CLOSE_S)
        finally:
            why = "its time was up"
            if not closing.done():
                closing.cancel()
            elif not closing.cancelled() and closing.exception() is not None:
                why = one_line(cast(BaseException, closing.exception()))  # (a lost store)
            if self.left_open:  # the stop goes on all the same
                left = ", ".join(self.left_open)
                log.warning("ladder: stopping, %s left open (%s): the next start closes", left, why)

    async def close_left_open(self, server: ArenaServer) -> list[str]:
        """Mark failed, each with its reason, the rotations :attr:`left_open` holds, but for
        one the referee still plays (its runner records its own end; it is closed once over,
        if still open); the ids closed.  A store that cannot record it (a full disk) raises,
        and they are kept for the next call."""
        playing = {
            match_id
            for match_id, runner in server.referee.matches.items()
            if not runner.status.is_over
        }
        by_reason: dict[str, list[str]] = {}
        for match_id, why in self.left_open.items():
            if match_id not in playing:
                by_reason.setdefault(why, []).append(match_id)
        closed: list[str] = []
        layout, key = DataDir(server.config.data_dir), server.key.public
        for why, match_ids in by_reason.items():
            # (Only a match still waiting or running is changed: a result recorded stays, and
            # one its complete log says finished is recorded from it.)
            await asyncio.to_thread(settle_left_open, self.store, layout, match_ids, why, key)
            for match_id in match_ids:
                del self.left_open[match_id]
            closed += match_ids
        return closed

    def close_cut_attempts(self, drawn: DrawnPairing, seeds: list[int]) -> set[tuple[str, ...]]:
        """Mark the attempts of ``drawn``'s deals (``seeds``, one per seating) left waiting or
        running as failed (only the job playing the pairing plays its deals, so an open one
        was cut off); the seatings already finished."""
        found = [
            match
            for seed in sorted(set(seeds))
            for match in self.store.matches.find(None, None, game=drawn.game, seed=seed)
        ]
        cut = [match.id for match in found if not match.status.is_over]
        if cut:
            self.store.matches.abandon_unfinished(cut, CUT_OFF_LADDER_ATTEMPT)
            log.warning("ladder: %s cut off; the pairing's missing matches are played", cut)
        planned = set(zip(drawn.pairing.seatings, seeds, strict=True))
        return {
            tuple(match.bots)
            for match in found
            if match.status is MatchStatus.FINISHED and (tuple(match.bots), match.seed) in planned
        }

    def keep_output(self, match_id: str, match_dir: Path, seats: list[int]) -> None:
        """Put the stderr and stdout of a match's launched ``seats`` in the store (the end of
        each), for their owners' pages, and remove each seat's output files beside the match:
        the sandbox bounds each file by its size limit only (64 MiB), and the ladder plays on
        without end.  Each stream on its own: one that cannot be read is kept as a line saying
        so, the other as it is.  A store that cannot keep them is logged (the match itself is
        recorded already) and the output is lost: a file left beside a match outlived what
        the store forgets, and was shown for good (review s56)."""
        files = {
            (seat, stream): seat_output_file(match_dir, seat, stream)
            for seat in seats
            for stream in (OutputStream.STDERR, OutputStream.STDOUT)
        }
        try:
            read = {key: self._kept_stream(match_id, path, key[1]) for key, path in files.items()}
            kept = [
                SeatOutput(
                    match_id, seat, read[seat, OutputStream.STDERR], read[seat, OutputStream.STDOUT]
                )
                for seat in seats
            ]
            self.store.logs.put_output(kept)
        except StoreError as problem:
            if not is_store_lost(problem):
                log.exception("ladder: the output of match %s could not be kept", match_id)
            else:  # one line: the served loop says the outage itself (a traceback said no more)
                said = one_line(problem)
                log.warning("ladder: the output of match %s could not be kept: %s", match_id, said)
        finally:
            for path in files.values():
                remove_output(path)

    @staticmethod
    def _kept_stream(match_id: str, path: Path, stream: OutputStream) -> bytes:
        try:
            return read_kept(path, MAX_SEAT_OUTPUT)
        except OSError as problem:
            log.warning("ladder: %s of match %s: %s", path.name, match_id, problem)
            return unreadable(stream, problem)

    async def forget_output(self) -> int:
        """Forget the seats' output kept more than ``output_days`` ago, a few seats at a time
        (each batch a transaction of its own in a worker thread, the store free between two,
        and a cancellation stops the sweep between two: one delete of a backlog of 2 GB held
        every store call of the server for 152 s, review s56); how many seats'."""
        before = datetime.now(UTC) - timedelta(days=self.settings.output_days)
        forgotten = 0
        while True:
            batch = await asyncio.to_thread(self.store.logs.forget_output, before, FORGET_BATCH)
            forgotten += batch
            if batch < FORGET_BATCH:
                return forgotten
            await asyncio.sleep(FORGET_PAUSE_S)  # the store's other callers take turns

    def pairing_of_job(self, job: LadderJob) -> DrawnPairing | None:
        """A queued pairing's versions, or ``None`` when one of them may no longer play (its
        account suspended, the version retired since the pairing was drawn)."""
        playing = {version.player: version for version in self.store.versions.playing()}
        if any(player not in playing for player in job.players):
            return None
        pairing = LadderPairing(
            tuple(job.players), job.seed, tuple(tuple(seating) for seating in job.seatings)
        )
        return DrawnPairing(job.game, pairing, {p: playing[p] for p in job.players})


@dataclass(frozen=True)
class LadderJob:
    """A pairing as a PostgreSQL league queues it for ``bisca worker`` (procrastinate's
    keyword arguments, JSON): its game and settings, versions, deal and seatings, and where
    the versions' files are (the serving machine's ``DATA/submissions``, which the workers
    read: the same machine, or a shared filesystem)."""

    game: str
    settings: dict[str, object]
    players: list[str]
    seed: int
    seatings: list[list[str]]
    uploads: str

    @classmethod
    def of(cls, drawn: DrawnPairing, settings: Settings, uploads: Path) -> LadderJob:
        pairing = drawn.pairing
        return cls(
            drawn.game,
            settings_to_mapping(settings),
            list(pairing.players),
            pairing.seed,
            [list(seating) for seating in pairing.seatings],
            # Absolute: a worker started in another working directory reads the same folder.
            str(uploads.absolute()),
        )


@dataclass(frozen=True)
class LadderWorker:
    """``bisca worker``'s side of the ladder: each job plays its pairing on an arena of its
    own on the shared store, its hosted versions sandboxed as on the serving machine."""

    store_url: str
    data_dir: Path
    sandbox: bool = True

    async def play(
        self,
        game: str,
        settings: dict[str, object],
        players: list[str],
        seed: int,
        seatings: list[list[str]],
        uploads: str,
    ) -> int:
        """Play the job's pairing; how many of its matches finished (the worker counts them)."""
        job = LadderJob(game, settings, players, seed, seatings, uploads)
        config = ServerConfig(
            data_dir=self.data_dir,
            listen=["127.0.0.1:0"],
            admin_token="ladder-" + os.urandom(8).hex(),
            store=self.store_url,
        )
        # The serving machine's submissions and builds, when this machine sees them, are
        # covered in every sandbox as this worker's own data directory is.
        league = (Path(uploads), Path(uploads).parent / "builds")
        hidden = tuple(path for path in league if path.exists())
        policy = SandboxPolicy(enabled=self.sandbox, hidden=hidden)
        # The job's end, however it ends, closes what its arena left open (finding 2: a
        # rotation left waiting for ever kept its deal's replays sealed for good).
        arena: list[str] = []  # its arena's id (the store's owner of the rows it records)
        try:
            finished = await self._play(job, config, policy, arena)
        except Exception as problem:
            why = one_line(problem)
            matches = await asyncio.to_thread(
                self.end_job, job, arena, unplayed_ladder_rotation(why)
            )
            raise LadderJobFailed(f"{why} (the pairing's matches: {matches})") from problem
        except BaseException:  # cancelled (the worker stops): queued again
            await asyncio.to_thread(self.end_job, job, arena, CUT_OFF_LADDER_ATTEMPT)
            raise
        await asyncio.to_thread(self.end_job, job, arena, unplayed_ladder_rotation(LEFT_OPEN))
        return finished

    async def _play(
        self, job: LadderJob, config: ServerConfig, policy: SandboxPolicy, arena: list[str]
    ) -> int:
        async with running_arena(config, policy) as (server, launcher):
            store = server.referee.store
            arena.extend([store.owner] if store.owner is not None else [])
            games = {job.game: GAMES[job.game].settings(job.settings)}
            ladder = Ladder(store, Path(job.uploads), games)
            drawn = await asyncio.to_thread(ladder.pairing_of_job, job)
            if drawn is None:
                log.info("ladder: %s may no longer all play: the pairing is dropped", job.players)
                return 0
            played = await ladder.play_pairing(server, launcher, drawn)

            def finished() -> int:
                found = (store.matches.get(match_id) for match_id in played)
                return sum(1 for m in found if m is not None and m.status is MatchStatus.FINISHED)

            return await asyncio.to_thread(finished)

    def end_job(self, job: LadderJob, arena: list[str], reason: str) -> str:
        """At a job's end, its arena stopped: mark failed, with ``reason``, the matches the
        arena recorded and left waiting or running (only this job played them: it is over);
        the ids of the pairing's matches, for the log (never its seed)."""
        try:
            with open_store(self.store_url, self.data_dir) as store:
                left = [row.match_id for row in store.matches.unfinished() if row.server in arena]
                if left:
                    layout = DataDir(self.data_dir)
                    key = None  # (without the key that signed them, none is taken as played)
                    with contextlib.suppress(KeyFileError, OSError):
                        key = ServerKey.load(layout.server_key).public
                    settled = settle_left_open(store, layout, left, reason, key)
                    log.warning(
                        "ladder: %s left open by its job: %d marked failed, %d recorded from "
                        "their complete logs",
                        left,
                        settled.failed,
                        settled.recorded,
                    )
                found = store.matches.find(None, None, game=job.game, seed=job.seed)
                return ", ".join(match.id for match in found) or "none recorded"
        except StoreTooNew:  # the worker says why, once, and gives the job back unplayed
            return "unknown, the store is newer than this Bisca"
        except Exception as problem:  # the store lost: `bisca serve` closes them as it starts
            log.warning("ladder: a job's matches could not be closed: %s", one_line(problem))
            return "unknown, the store could not be read"


#: Why a match of a pairing is failed when its job ends with it still open.
LEFT_OPEN = "its job ended with this match still open (its end was never recorded)"


class LadderJobFailed(BiscaError):
    """A ladder job that could not play its pairing: why, and the pairing's match ids."""


async def finish_within(work: asyncio.Future[None], seconds: float) -> None:
    """Wait for ``work`` for at most ``seconds``, however often the caller is cancelled
    meanwhile (a stop cancels the ladder, and whoever stops it may be cancelled again): the
    cancellation is raised once the wait is over.  ``work`` may still run then."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    cancelled = False
    while not work.done() and loop.time() < deadline:
        try:
            await asyncio.wait({work}, timeout=deadline - loop.time())
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


async def fail_waiting_matches(server: ArenaServer, reasons: Mapping[str, str]) -> None:
    """In the referee's trio world: the matches of ``reasons`` it holds that still wait for
    their bots fail now, each with its reason, and their ends are waited for (their runners
    record them), for at most :data:`STOP_CLOSE_S`.  A match already running goes on."""
    runners = [server.referee.matches.get(match_id) for match_id in reasons]
    waiting = [r for r in runners if r is not None and r.status is MatchStatus.WAITING]
    for runner in waiting:
        runner.abort_waiting(reasons[runner.id])
    with trio.move_on_after(STOP_CLOSE_S):
        for runner in waiting:
            await runner.done.wait()


def one_line(problem: BaseException) -> str:
    """What went wrong, in a line (a nursery's group: its first failure)."""
    while isinstance(problem, BaseExceptionGroup) and problem.exceptions:
        problem = problem.exceptions[0]
    text = str(problem).strip()
    return text.splitlines()[0] if text else type(problem).__name__


def version_games(
    version: BotVersionRecord, online: Mapping[str, frozenset[str]]
) -> frozenset[str]:
    """The games ``version`` may be drawn in now: a hosted one's manifest's, a connected
    one's idle connections' (none while it is offline or playing)."""
    if version.kind is VersionKind.CONNECTED:
        return online.get(version.player, frozenset())
    return frozenset(parse_manifest(version.manifest).games)


def idle_connected(server: ArenaServer) -> dict[str, frozenset[str]]:
    """The bots online and in no match, with the games their live connections play (read in
    the referee's thread, where its state changes)."""
    referee = server.referee
    busy = {
        bot
        for runner in referee.matches.values()
        if not runner.status.is_over
        for bot in runner.bots
    }
    return {
        bot: frozenset(game for connection in connections if connection.alive
                       for game in connection.games)
        for bot, connections in referee.online.items()
        if bot not in busy
    }  # fmt: skip


#: Why ``bisca serve`` fails, as it starts, a ladder match no job of its pairing holds.
ORPHANED_ROTATION = (
    "cut off: its ladder pairing's job ended (or failed for good) with this match still open"
)


#: How often ``bisca serve`` on a shared store sweeps the ladder matches no job holds.
ORPHAN_SWEEP_S = 60.0


async def close_orphaned_rotations(store: Store, queue: LadderQueue, app: procrastinate.App) -> int:
    """``bisca serve`` on a shared store, as it starts and every :data:`ORPHAN_SWEEP_S`: mark
    failed the ladder matches left waiting or running whose pairing no job waits for or plays
    (its job ended while the store was lost: finding 2; such a match held its deal's replays
    sealed for good); how many.  A match of a deal with no ladder job at all is not the
    ladder's: left alone."""
    unfinished = await asyncio.to_thread(store.matches.unfinished)
    by_lock: dict[str, list[str]] = {}
    for row in unfinished:
        match = await asyncio.to_thread(store.matches.get, row.match_id)
        if match is not None and match.rated:
            lock = queue.ladder_deal_lock(match.game, match.seed)
            by_lock.setdefault(lock, []).append(match.id)
    if not by_lock:
        return 0
    held = await queue.ladder_deals_held(app, list(by_lock))
    orphaned = [i for lock, ids in by_lock.items() if held.get(lock) is False for i in ids]
    if orphaned:
        await asyncio.to_thread(store.matches.abandon_unfinished, orphaned, ORPHANED_ROTATION)
        log.warning("ladder: %s left open by ended jobs: marked failed", orphaned)
    return len(orphaned)


#: How often ``bisca serve``'s ladder forgets the seats' output older than ``output_days``.
FORGET_OUTPUT_S = 3600.0
#: Seats' output forgotten in one transaction (at most 8 MiB), and the pause between two.
FORGET_BATCH = 64
FORGET_PAUSE_S = 0.01


async def forget_output_loop(ladder: Ladder) -> None:
    """Forget the seats' output older than the ladder's ``output_days``, as it starts and every
    :data:`FORGET_OUTPUT_S`; a store that cannot is logged, and the next sweep tries again."""
    while True:
        try:
            forgotten = await ladder.forget_output()
        except Exception as problem:  # the next sweep tries again
            if is_store_lost(problem):
                log.warning("ladder: old output not forgotten: %s", one_line(problem))
            else:
                log.exception("ladder: old output not forgotten")
        else:
            if forgotten:
                days = ladder.settings.output_days
                log.info("ladder: forgot %d seats' output, older than %g days", forgotten, days)
        await asyncio.sleep(FORGET_OUTPUT_S)


@contextlib.asynccontextmanager
async def ladder_running(
    ladder: Ladder, server: ArenaServer, launcher: BotLauncher
) -> AsyncIterator[asyncio.Event]:
    """Play the ladder as a task while the block runs (``bisca serve``'s one worker).  Yields
    an event set after each pairing played.  A failure of one pairing is logged and the
    ladder goes on."""
    played = asyncio.Event()

    outage = StoreOutage(log, "the ladder", ladder.settings.poll_s)

    async def loop() -> None:
        while True:
            wait = ladder.settings.poll_s
            try:
                matches = await ladder.play_next(server, launcher)
            except Exception as problem:  # a lost store said once an outage (review op-12)
                wait = outage.failed(problem, "the ladder failed a pairing (it goes on)")
                matches = []
            else:
                outage.answered()
            if matches:
                played.set()
            else:
                await asyncio.sleep(wait)

    async def queue_loop(queue: LadderQueue, app: procrastinate.App) -> None:
        # Connected versions dial in to this server, not to a worker: on a shared store the
        # ladder queues pairings of hosted versions.
        swept = asyncio.get_running_loop().time()
        while True:
            # A job that ended while the store was lost leaves its rows open until they are
            # swept: not only at the next start (re-test of review op-2).
            if asyncio.get_running_loop().time() - swept >= ORPHAN_SWEEP_S:
                swept = asyncio.get_running_loop().time()
                try:
                    await close_orphaned_rotations(ladder.store, queue, app)
                except Exception as problem:  # the next sweep tries again
                    log.warning("ladder: the matches left open by ended jobs: %s", problem)
            queued = False
            wait = ladder.settings.poll_s
            try:
                drawn = await asyncio.to_thread(ladder.draw, {})
                if drawn is not None:
                    job = LadderJob.of(drawn, ladder.games[drawn.game], ladder.uploads)
                    queued = await queue.queue_ladder_pairing(app, **vars(job))
            except Exception as problem:  # a lost store said once an outage (review op-12)
                wait = outage.failed(problem, "the ladder failed to queue a pairing (it goes on)")
            else:
                outage.answered()
            if queued:
                played.set()
            else:
                await asyncio.sleep(wait)

    async with contextlib.AsyncExitStack() as stack:
        if ladder.store.shared:
            url = ladder.store_url
            if url is None:
                raise ConfigError("a ladder on a shared store needs the store's URL to queue")
            queue = ladder_queue()
            await asyncio.to_thread(queue.ensure_queue_schema, url)
            app = queue.queue_app(url)
            await app.open_async()
            stack.push_async_callback(app.close_async)
            try:
                await close_orphaned_rotations(ladder.store, queue, app)
            except Exception:  # the ladder runs still; its next start sweeps them
                log.exception("ladder: the matches left open by ended jobs could not be closed")
            task = asyncio.create_task(queue_loop(queue, app), name="bisca-ladder-queue")
        else:
            task = asyncio.create_task(loop(), name="bisca-ladder")
        forgetting = asyncio.create_task(forget_output_loop(ladder), name="bisca-ladder-output")
        try:
            yield played
        finally:
            task.cancel()
            forgetting.cancel()
            await asyncio.gather(task, forgetting, return_exceptions=True)
