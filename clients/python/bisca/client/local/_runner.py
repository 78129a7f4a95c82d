"""Playing a match in-process: the engine and the bots' callbacks, one Python loop.

:func:`play_match` asks each seat's bot exactly what the arena would ask it (a
:class:`~bisca.client.Request` with the seat's observation and legal actions, the engine's own
values) and calls its hooks in the arena's order (``on_match_start``, ``on_event`` for every
event the seat may see before its next request, ``on_match_end``), with no server, socket or
sandbox in between.  The deal comes from the seed as it would in the arena, so a match is
reproducible, and the log it writes (``log=``) is the referee's format.

It is stricter than the arena: where the referee would reject an answer and ask again (or the
SDK would catch a bot's exception), the local runner stops at once, so the author sees the
traceback and the position.  An exception in a bot or a hook propagates as it is; an answer
that is no action of the game raises :class:`MalformedAnswer`, one that the rules forbid now
:class:`IllegalAnswer`, each naming the seat, the bot, the step and the action.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bisca.engine import (
    GAMES,
    IllegalActionError,
    MalformedActionError,
    MatchState,
    Outcome,
)
from bisca.v1 import arena_pb2

from .._types import (
    Bot,
    Clock,
    ClockSettings,
    MatchEnd,
    MatchStart,
    OnEvent,
    OnMatchEnd,
    OnMatchStart,
    SeatInfo,
    SeatResult,
)
from ..bots import make_bot
from ._log import LocalLog, Signer
from ._request import UNSHARED, pending, settle

#: The arena's default clock, which the requests show (nothing is timed in a local match).
DEFAULT_CLOCK = ClockSettings(move_ms=5_000, bank_ms=30_000, policy="default", strikes=3)


@dataclass(frozen=True)
class Player:
    """A seat's bot and its hooks (what :func:`bisca.client.run` takes), and its name."""

    bot: Bot
    name: str = ""
    on_match_start: OnMatchStart | None = None
    on_event: OnEvent | None = None
    on_match_end: OnMatchEnd | None = None


Seat = Player | Bot | str
"""A seat of :func:`play_match`: a :class:`Player`, a bare bot callback, or the name of a
sample bot (``"random"``, ``"greedy"``, ``"pimc"``: :data:`bisca.client.bots.BOTS`)."""


class AnswerError(Exception):
    """A bot's answer that the arena would have refused."""

    def __init__(self, problem: str, *, seat: int, bot: str, step: int, action: object) -> None:
        super().__init__(f"seat {seat} ({bot}) at step {step}: {problem}")
        self.problem = problem
        self.seat = seat
        self.bot = bot
        self.step = step
        self.action = action


class MalformedAnswer(AnswerError, TypeError):
    """The answer is not an action of the match's game at all."""


class IllegalAnswer(AnswerError, ValueError):
    """The answer is an action of the game, but the rules forbid it now."""


@dataclass(frozen=True)
class LocalResult:
    """How a local match came out."""

    game: str
    match_id: str
    seed: int
    names: tuple[str, ...]
    outcome: Outcome
    steps: int
    #: The final state, for a look at anything the outcome does not say.
    state: MatchState = field(repr=False)
    #: The log written (``None`` without ``log=``) and its final hash.
    log: Path | None = None
    log_hash: str = ""

    @property
    def scores(self) -> tuple[int, ...]:
        return self.outcome.scores

    @property
    def ranks(self) -> tuple[int, ...]:
        return self.outcome.ranks


def _player(seat: Seat, game: str, seed: int, number: int) -> Player:
    if isinstance(seat, Player):
        return seat
    if isinstance(seat, str):
        # Each sample bot gets a seed of its own, from the match's and its seat's.
        return Player(make_bot(game, seat, seed * 1_000 + number), name=seat)
    if callable(seat):
        return Player(seat, name=getattr(seat, "__name__", "") or f"bot{number}")
    raise TypeError(f"seat {number}: a Player, a bot callable or a sample bot's name, got {seat!r}")


def play_match(
    game: str,
    seats: Sequence[Seat],
    *,
    settings: object = None,
    seed: int = 0,
    log: str | Path | None = None,
    match_id: str = "",
    signer: Signer | None = None,
) -> LocalResult:
    """Play one match of ``game`` between ``seats`` (one per seat, in seat order).

    ``settings`` are the game's (its settings dataclass or a mapping, e.g. ``{"deals": 1}``);
    the number of seats must match them.  With ``log`` the match's log is written there
    (``bisca replay show|verify LOG``), signed when ``signer`` is given.  ``match_id`` defaults
    to ``local-GAME-SEED``.
    """
    spec = GAMES.get(game)
    if spec is None:
        raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(GAMES))}")
    if settings is None or isinstance(settings, Mapping):
        settings = spec.settings(settings)
    if not isinstance(settings, spec.settings_type):
        raise TypeError(f"{game} settings must be {spec.settings_type.__name__} or a mapping")
    expected = spec.seats(settings)
    if len(seats) != expected:
        raise ValueError(f"{game} with these settings has {expected} seats, got {len(seats)}")
    if seed < 0:
        raise ValueError(f"the seed must be 0 or more, got {seed}")
    players = [_player(seat, game, seed, number) for number, seat in enumerate(seats)]
    names = tuple(player.name or f"seat{number}" for number, player in enumerate(players))
    match_id = match_id or f"local-{game}-{seed}"
    state = spec.new_match(settings, seed)
    writer = None
    if log is not None:
        writer = LocalLog(
            Path(log),
            game=game,
            match_id=match_id,
            settings=settings,
            seed=seed,
            names=names,
            clock=arena_pb2.ClockSettings(
                move_ms=DEFAULT_CLOCK.move_ms,
                bank_ms=DEFAULT_CLOCK.bank_ms,
                policy=arena_pb2.TIMEOUT_POLICY_DEFAULT,
            ),
            signer=signer,
        )
    try:
        steps = _play(state, game, match_id, settings, seed, players, names, writer)
        outcome = state.outcome
        assert outcome is not None, "the loop ends with the match"
        log_hash = "" if writer is None else writer.complete(outcome, names, steps)
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    _end(players, names, match_id, seed, outcome)
    return LocalResult(
        game=game,
        match_id=match_id,
        seed=seed,
        names=names,
        outcome=outcome,
        steps=steps,
        state=state,
        log=None if writer is None else writer.path,
        log_hash=log_hash,
    )


def _play(
    state: MatchState,
    game: str,
    match_id: str,
    settings: object,
    seed: int,
    players: list[Player],
    names: tuple[str, ...],
    writer: LocalLog | None,
) -> int:
    infos = tuple(SeatInfo(seat, name, "0") for seat, name in enumerate(names))
    for number, player in enumerate(players):
        if player.on_match_start is not None:
            player.on_match_start(
                MatchStart(match_id, game, number, infos, settings, DEFAULT_CLOCK, resumed=False)
            )
    listeners = [(n, p.on_event) for n, p in enumerate(players) if p.on_event is not None]
    delivered = 0
    if writer is not None:
        writer.events(state, 0)
    bots = [player.bot for player in players]
    clock = Clock(DEFAULT_CLOCK.move_ms, DEFAULT_CLOCK.bank_ms)
    steps = 0
    refcount = getattr(sys, "getrefcount", lambda request: UNSHARED + 1)
    # The hot loop: what it does per decision is what the bench measures against the engine.
    while (seat := state.to_act) is not None:
        if listeners:
            delivered = _deliver(state, match_id, listeners, delivered)
        legal = tuple(state.legal_actions())
        request = pending(state, str(steps), match_id, game, seat, legal, clock)
        asked_at = time.time_ns() // 1000 if writer is not None else 0
        action = bots[seat](request)
        if refcount(request) > UNSHARED:  # the bot kept the request: see _request.py
            settle(request, UNSHARED + 1)
        del request
        if writer is not None:
            if action not in legal:
                _refuse(state, action, seat, names[seat], steps)
            writer.step(steps, state, seat, legal, action, asked_at)
        try:
            state.apply(action)
        except MalformedActionError as problem:
            raise MalformedAnswer(
                str(problem), seat=seat, bot=names[seat], step=steps, action=action
            ) from None
        except IllegalActionError as problem:
            raise IllegalAnswer(
                problem.reason, seat=seat, bot=names[seat], step=steps, action=action
            ) from None
        steps += 1
        if writer is not None:
            writer.events(state, steps)
    if listeners:
        _deliver(state, match_id, listeners, delivered)
    return steps


def _refuse(state: MatchState, action: object, seat: int, name: str, step: int) -> None:
    """Raise the error of an answer not among the legal actions (the state is unchanged)."""
    try:
        state.apply(action)
    except MalformedActionError as problem:
        raise MalformedAnswer(str(problem), seat=seat, bot=name, step=step, action=action) from None
    except IllegalActionError as problem:
        raise IllegalAnswer(problem.reason, seat=seat, bot=name, step=step, action=action) from None
    raise AssertionError("an action outside the legal list was applied")  # pragma: no cover


def _deliver(
    state: MatchState, match_id: str, listeners: list[tuple[int, OnEvent]], start: int
) -> int:
    """Hand each listening seat the events it may see from ``start`` on; the next start."""
    for seat, on_event in listeners:
        for event in state.events_for(seat, start):
            on_event(match_id, seat, event)
    return state.event_count


def _end(
    players: list[Player], names: tuple[str, ...], match_id: str, seed: int, outcome: Outcome
) -> None:
    results = tuple(
        SeatResult(
            seat=seat,
            bot_name=name,
            score=outcome.scores[seat],
            rank=outcome.ranks[seat],
            end="completed",
            forfeit_reason="",
            timeouts=0,
            defaults_played=0,
        )
        for seat, name in enumerate(names)
    )
    for seat, player in enumerate(players):
        if player.on_match_end is not None:
            player.on_match_end(MatchEnd(match_id, seat, "finished", results, "", seed))
