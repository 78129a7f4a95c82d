"""The operator RPCs (CreateMatch, GetMatch, ListMatches, GetLeaderboard) as trio functions
over the referee.

They speak protobuf at the edges and raise :class:`OperatorError` with a gRPC status name and
a sentence; the transport turns that into the call's status.

Sealed deals: the seed deals every hidden hand, so no answer shows it (``MatchInfo.seed`` is 0)
while any match dealt from it (the same game and seed: a duplicate-deal twin, a rotation of a
tournament's set) is waiting or running, here or on another server of a shared store.  The
rule is the referee's (``referee/_sealing.py``; a bot's ``MatchEnded`` keeps it too); gRPC and
the web ask it through these functions, the web's replay through :func:`sealing_match`.

Two things both fronts (gRPC and the web) share besides: where a finished match's log is read
(:func:`recorded_log`: a shared store keeps every complete log, whichever machine played it),
and how a call that finds the store lost is answered (:class:`StoreCalls`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import trio

from bisca import wire
from bisca.engine import GAMES, EngineError
from bisca.server.datadir import DataDir, log_file
from bisca.server.errors import KeyFileError, LogFormatError, OperatorError
from bisca.server.logs import LogFile, parse_public_key, read_log, with_file_name
from bisca.server.records import MatchRecord
from bisca.server.referee import (
    ClockSettings,
    Deal,
    MatchPlan,
    MatchRunner,
    Policy,
    Referee,
    SealedDeals,
    clock_message,
    clock_settings,
    result_message,
    status_message,
    status_of_message,
)
from bisca.server.store import Store, StoreOutage, is_store_lost
from bisca.v1 import arena_pb2 as pb

_POLICIES = {
    pb.TIMEOUT_POLICY_DEFAULT: Policy.DEFAULT,
    pb.TIMEOUT_POLICY_FORFEIT: Policy.FORFEIT,
    pb.TIMEOUT_POLICY_STRIKES: Policy.STRIKES,
}


def _clock(message: pb.ClockSettings, defaults: ClockSettings) -> ClockSettings:
    """The request's clock; absent fields take the server's defaults."""
    if message.policy != pb.TIMEOUT_POLICY_UNSPECIFIED and message.policy not in _POLICIES:
        raise ValueError(f"unknown timeout policy {message.policy}")
    return ClockSettings(
        move_ms=message.move_ms if message.HasField("move_ms") else defaults.move_ms,
        bank_ms=message.bank_ms if message.HasField("bank_ms") else defaults.bank_ms,
        policy=_POLICIES.get(message.policy, defaults.policy),
        strikes=message.strikes if message.HasField("strikes") else defaults.strikes,
    )


def _game_of(request: pb.CreateMatchRequest | pb.GetLeaderboardRequest) -> str:
    try:
        return wire.game_name(request.game)
    except ValueError:
        raise OperatorError(
            "INVALID_ARGUMENT", f"unknown game {request.game}; known: {', '.join(sorted(GAMES))}"
        ) from None


async def create_match(referee: Referee, request: pb.CreateMatchRequest) -> pb.MatchInfo:
    game = _game_of(request)
    try:
        settings = wire.decode_game_settings(
            game, request.settings if request.HasField("settings") else None
        )
        clock = _clock(request.clock, referee.options.clock)
    except (EngineError, ValueError) as problem:
        raise OperatorError("INVALID_ARGUMENT", str(problem)) from None
    join_timeout = request.join_timeout_ms / 1000 if request.join_timeout_ms else None
    try:
        runner = await referee.create_match(
            MatchPlan(
                game,
                settings,
                tuple(request.bots),
                seed=request.seed if request.HasField("seed") else None,
                clock=clock,
                join_timeout=join_timeout,
                rated=True,  # matches between registered bots count in their game's leaderboard
            )
        )
    except ValueError as problem:
        raise OperatorError("INVALID_ARGUMENT", str(problem)) from None
    return await sealed_one(referee, live_info(runner))


async def sealed_one(referee: Referee, info: pb.MatchInfo) -> pb.MatchInfo:
    """``info`` as any caller may see it, asking only about its own deal: a match not over
    seals its deal itself, a finished one while another match dealt from its seed is not
    over (one indexed question, not every unfinished match read)."""
    if _not_over(info):
        return seal(info, {})
    deal = Deal(wire.game_name(info.game), info.seed)
    sealer = await referee.sealing_match(deal, besides=info.match_id)
    return seal(info, {} if sealer is None else {deal: sealer})


async def sealed_deals(referee: Referee, infos: Iterable[pb.MatchInfo]) -> SealedDeals:
    """The deals of ``infos`` no answer may show yet (the referee's rule:
    ``referee/_sealing.py``)."""
    deals = {Deal(wire.game_name(info.game), info.seed) for info in infos}
    return await referee.sealed_deals(deals)


async def sealing_match(referee: Referee, game: str, seed: int) -> str | None:
    """The id of a match not over yet that is dealt from ``seed`` (its deal stays hidden
    until it is over), or ``None``."""
    return await referee.sealing_match(Deal(game, seed))


def _not_over(info: pb.MatchInfo) -> bool:
    return info.status in (pb.MATCH_STATUS_WAITING, pb.MATCH_STATUS_RUNNING)


def seal(info: pb.MatchInfo, sealed: SealedDeals) -> pb.MatchInfo:
    """``info`` as any caller may see it: without its seed while it is not over (a person's
    table seals no twin, so its own deal may be missing from ``sealed``) or while its deal is
    sealed by another match."""
    if _not_over(info) or Deal(wire.game_name(info.game), info.seed) in sealed:
        info.ClearField("seed")
        info.seed_sealed = True
    return info


def _sealed_all(infos: Iterable[pb.MatchInfo], sealed: SealedDeals) -> list[pb.MatchInfo]:
    return [seal(info, sealed) for info in infos]


async def get_match(referee: Referee, request: pb.GetMatchRequest) -> pb.MatchInfo:
    runner = referee.matches.get(request.match_id)
    if runner is not None:
        return await sealed_one(referee, live_info(runner))
    record = await trio.to_thread.run_sync(referee.store.matches.get, request.match_id)
    if record is None:
        raise OperatorError("NOT_FOUND", f"no match {request.match_id!r}")
    return await sealed_one(referee, stored_info(record))


async def list_matches(referee: Referee, request: pb.ListMatchesRequest) -> pb.ListMatchesResponse:
    status = None
    if request.HasField("status"):
        status = status_of_message(request.status)
        if status is None:
            raise OperatorError("INVALID_ARGUMENT", f"unknown match status {request.status}")
    limit = request.limit or 100
    records = await trio.to_thread.run_sync(referee.store.matches.find, status, limit)
    infos = []
    for record in records:
        runner = referee.matches.get(record.id)
        infos.append(live_info(runner) if runner is not None else stored_info(record))
    queue = []
    if referee.matchmaker is not None:  # league mode: the bots waiting for a match
        queue = [
            pb.QueuedBot(
                bot_name=entry.bot,
                games=[wire.game_enum(game) for game in entry.games],
                waiting_since=entry.since_text,
            )
            for entry in referee.matchmaker.queue()
        ]
    return pb.ListMatchesResponse(
        matches=_sealed_all(infos, await sealed_deals(referee, infos)), queue=queue
    )


async def get_leaderboard(
    referee: Referee, request: pb.GetLeaderboardRequest
) -> pb.GetLeaderboardResponse:
    game = _game_of(request)
    rows = await trio.to_thread.run_sync(
        referee.store.ratings.leaderboard, game, request.limit or None
    )
    return pb.GetLeaderboardResponse(
        game=request.game,
        rows=[
            pb.LeaderboardRow(
                rank=row.rank,
                bot_name=row.bot,
                mu=row.mu,
                sigma=row.sigma,
                conservative=row.conservative,
                matches=row.matches,
                mean_result=row.mean_result,
                ci_half_width=row.ci_half,
            )
            for row in rows
        ],
    )


def live_info(runner: MatchRunner) -> pb.MatchInfo:
    return pb.MatchInfo(
        match_id=runner.id,
        game=wire.game_enum(runner.game),
        settings=wire.encode_game_settings(runner.game, runner.settings),
        status=status_message(runner.status),
        bots=runner.bots,
        seed=runner.seed,
        clock=clock_message(runner.clock_settings),
        results=[result_message(r) for r in runner.results],
        reason=runner.reason,
        steps=runner.steps,
    )


def stored_info(record: MatchRecord) -> pb.MatchInfo:
    spec = GAMES[record.game]
    settings = spec.settings(record.settings)
    return pb.MatchInfo(
        match_id=record.id,
        game=wire.game_enum(record.game),
        settings=wire.encode_game_settings(record.game, settings),
        status=status_message(record.status),
        bots=record.bots,
        seed=record.seed,
        clock=clock_message(
            clock_settings(
                int(record.clock["move_ms"]),
                int(record.clock["bank_ms"]),
                str(record.clock["policy"]),
            )
        ),
        results=[result_message(seat) for seat in record.seats],
        reason=record.reason,
        created_at=record.created_at,
        finished_at=record.finished_at or "",
        steps=record.steps,
    )


# ---- a finished match's log ------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedLog:
    """A match's log as this server reads it: the file the store recorded, or the copy a
    shared store keeps of a complete log (the machine that played it may be another, whose
    disk this one cannot read)."""

    #: The file; for a copy kept in the store, only the name it is read under (``M.binlog``).
    path: Path
    #: The bytes a shared store keeps of the complete log (``None``: the file is read).
    kept: bytes | None = None
    #: The key the store records that the kept copy was signed with (``None``: none recorded).
    #: The store is the league's record of trust: whoever writes to it vouches for its logs.
    signed_by: bytes | None = None

    def read(self) -> LogFile:
        """The log, read once (``OSError``, ``LogFormatError`` as :func:`read_log` raises
        them, naming the file by its name only for a kept copy)."""
        if self.kept is None:
            return read_log(self.path)
        # The log reader reads files: the copy is one, for as long as it is read.
        with tempfile.TemporaryDirectory(prefix="bisca-log-") as folder:
            copy = Path(folder) / self.path.name
            copy.write_bytes(self.kept)
            try:
                return read_log(copy)
            except LogFormatError as problem:
                raise LogFormatError(with_file_name(str(problem), copy)) from None


def recorded_log(store: Store, match_id: str, log_path: str) -> RecordedLog:
    """Where the log of match ``match_id``, recorded at ``log_path``, is read: the copy a shared
    store keeps of it, else that file, or this data directory's copy of it
    (:meth:`DataDir.recorded_log`).  Blocking (the store, the disk): call it in a thread."""
    kept = store.logs.get(match_id) if store.shared else None
    if kept is None:  # SQLite, or a log that never completed (the machine that wrote it has it)
        return RecordedLog(DataDir(store.data_dir).recorded_log(match_id, log_path))
    return RecordedLog(log_file(Path(), match_id), kept.data, _public_key(kept.public_key))


def _public_key(text: str) -> bytes | None:
    """A key as the store records it (``ed25519:HEX``); ``None`` for none, or one that is not
    a key (nothing is trusted by it)."""
    try:
        return parse_public_key(text) if text else None
    except KeyFileError:
        return None


# ---- calls while the store is lost -----------------------------------------------------------

#: What a caller is told while the store does not answer (gRPC's UNAVAILABLE, the web's 503).
#: The store's own words name its address: they are for the server's log, not for every caller.
STORE_LOST = "the store is not reachable; try again"
#: How soon a caller is told to try again, and the first wait before the server looks whether
#: the store answers again (that wait doubles while it does not: :class:`StoreOutage`).
STORE_RETRY_S = 2.0


class StoreCalls:
    """How one front (the gRPC service, the web app) answers the calls that find its store lost:
    each is refused with UNAVAILABLE instead of failing with a traceback (a health check
    polling once a second filled the log with them), and the log says once that the store is
    lost and once that it answers again, found by looking at it meanwhile (the calls that do
    not need the store succeed during an outage too, so a success says nothing).  On the
    asyncio loop the front runs on."""

    def __init__(self, store: Store, log: logging.Logger, front: str) -> None:
        self._store = store
        self._outage = StoreOutage(log, front, STORE_RETRY_S)
        self._looking: asyncio.Task[None] | None = None

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """Around a call: a lost store's error becomes an :class:`OperatorError` UNAVAILABLE
        saying :data:`STORE_LOST`; any other error passes as it is."""
        try:
            yield
        except Exception as problem:
            if not is_store_lost(problem):
                raise
            self._lost(problem)
            raise OperatorError("UNAVAILABLE", STORE_LOST) from None

    def _lost(self, problem: Exception) -> None:
        if self._looking is not None and not self._looking.done():
            return  # said already; the look under way says when the store answers again
        wait = self._outage.failed(problem, f"{self._outage.what}: a call failed")
        self._looking = asyncio.get_running_loop().create_task(self._until_it_answers(wait))

    async def _until_it_answers(self, wait: float) -> None:
        while True:
            await asyncio.sleep(wait)
            try:
                await asyncio.to_thread(self._look)
            except Exception as problem:
                wait = self._outage.failed(
                    problem, f"{self._outage.what}: looking whether the store answers failed"
                )
                if is_store_lost(problem):
                    continue
                return  # a bug, logged in full: the next call that finds the store lost looks
            self._outage.answered()
            return

    def _look(self) -> int:
        """One read that reaches the store (it connects again, if it must)."""
        return self._store.schema_version
