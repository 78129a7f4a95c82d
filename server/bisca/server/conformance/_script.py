"""The material of ``bisca check-bot``'s script: real engine states and the messages of them.

Every observation and legal-action list the checker sends comes from a real engine state
through the referee's own message builders (``bisca.server.referee.outgoing`` and
``messages``), so a bot is judged on exactly the bytes the arena would send it.  The
situations a check needs (a Bestia controbuio call, a Belote card to follow...) are reached by
playing real matches: seeds in order, each followed by a seeded random walk, until the
predicate holds.  Searching at run time rather than pinning seeds keeps the checker right when
the engine's deals or rules change; a walk costs microseconds per step and every situation is
found within a few hundred steps, deterministically.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from google.protobuf import text_format
from google.protobuf.message import Message

from bisca.engine import GAMES, Action, MatchState, Observation, Settings
from bisca.engine import belote as belote_engine
from bisca.engine import bestia as bestia_engine
from bisca.server.records import SeatEnd, SeatRecord
from bisca.server.referee import messages, outgoing, result_message
from bisca.v1 import arena_pb2 as pb

State = MatchState
Predicate = Callable[[State, Observation], bool]

#: Settings of the situations (the engine's defaults) and of the short full matches.
SITUATION_SETTINGS: dict[str, dict[str, int]] = {"belote": {}, "bestia": {}}
FULL_MATCH_SETTINGS: dict[str, dict[str, int]] = {
    "belote": {"deals": 1},
    "bestia": {"seats": 4, "rounds": 1, "giro_max_hands": 1},
}
FULL_MATCH_SEED = 2026

_SEEDS = 2_000
_STEPS = 2_000


# --------------------------------------------------------------------------------------------
# Situations


@dataclass(frozen=True)
class Situation:
    """A state of a real match: the game's settings, a seed and the actions from the start."""

    game: str
    label: str
    settings: Settings
    seed: int
    actions: tuple[Action, ...]

    def state(self) -> State:
        """A fresh state in this situation (each call replays it)."""
        state = GAMES[self.game].new_match(self.settings, self.seed)
        for action in self.actions:
            state.apply(action)
        return state


def _belote_playing(leading: bool) -> Predicate:
    def holds(state: State, observation: Observation) -> bool:
        if not isinstance(observation, belote_engine.BeloteObservation):
            return False
        if observation.phase is not belote_engine.Phase.PLAYING:
            return False
        tricks = observation.tricks
        in_progress = bool(tricks) and tricks[-1].winner is None and bool(tricks[-1].plays)
        return in_progress != leading

    return holds


def _is_phase(phase: belote_engine.Phase | bestia_engine.Phase) -> Predicate:
    return lambda state, observation: observation.phase is phase


def _with_choice(predicate: Predicate, at_least: int) -> Predicate:
    return lambda state, observation: (
        predicate(state, observation) and len(state.legal_actions()) >= at_least
    )


# Bestia's rarer decisions (a controbuio call, a dealer's discard after a rubata) come after
# raises, calls, steals and assists; a walk that favours them reaches every phase in a few
# dozen steps.
_BESTIA_BIAS: dict[type, int] = {
    bestia_engine.Raise: 6,
    bestia_engine.Call: 6,
    bestia_engine.Steal: 6,
    bestia_engine.Assist: 6,
}

#: The phase situations, per game: label -> predicate (in the order the checks run).
PHASES: dict[str, dict[str, Predicate]] = {
    "belote": {
        "bidding round 1": _is_phase(belote_engine.Phase.BIDDING_ROUND_1),
        "bidding round 2": _is_phase(belote_engine.Phase.BIDDING_ROUND_2),
        "card play, leading": _belote_playing(leading=True),
        "card play, following": _belote_playing(leading=False),
    },
    "bestia": {
        phase.value.replace("_", " "): _is_phase(phase)
        for phase in bestia_engine.Phase
        if phase is not bestia_engine.Phase.MATCH_OVER
    },
}

#: Situations of the other checks: label -> predicate.
EXTRA: dict[str, dict[str, Predicate]] = {
    "belote": {
        "a choice of cards": _with_choice(_belote_playing(leading=True), 3),
        "short clock": _is_phase(belote_engine.Phase.BIDDING_ROUND_1),
        "first match": _is_phase(belote_engine.Phase.BIDDING_ROUND_2),
        "second match": _with_choice(_belote_playing(leading=False), 1),
        "reconnect": _belote_playing(leading=False),
    },
    "bestia": {
        "a choice of cards": _with_choice(_is_phase(bestia_engine.Phase.PLAYING), 3),
        "short clock": _is_phase(bestia_engine.Phase.OPENING),
        "first match": _is_phase(bestia_engine.Phase.EXCHANGE),
        "second match": _is_phase(bestia_engine.Phase.PLAYING),
        "reconnect": _is_phase(bestia_engine.Phase.EXCHANGE),
    },
}


@cache
def situation(game: str, label: str) -> Situation:
    """The first situation of ``game`` that the predicate ``label`` describes."""
    predicate = PHASES[game].get(label) or EXTRA[game][label]
    bias = _BESTIA_BIAS if game == "bestia" else {}
    settings = GAMES[game].settings(SITUATION_SETTINGS[game])
    return reach(game, label, settings, predicate, bias)


def reach(
    game: str, label: str, settings: Settings, predicate: Predicate, bias: Mapping[type, int]
) -> Situation:
    """Search seeds in order, each with a random walk seeded by it, for a state where
    ``predicate(state, observation of the seat to act)`` holds."""
    for seed in range(_SEEDS):
        state = GAMES[game].new_match(settings, seed)
        rng = random.Random(seed)
        actions: list[Action] = []
        for _ in range(_STEPS):
            seat = state.to_act
            if seat is None:
                break
            if predicate(state, state.observation(seat)):
                return Situation(game, label, settings, seed, tuple(actions))
            legal = state.legal_actions()
            weights = [bias.get(type(action), 1) for action in legal]
            action = rng.choices(legal, weights)[0]
            state.apply(action)
            actions.append(action)
    raise LookupError(f"no {game} state found for {label!r} in {_SEEDS} seeds")


def full_match_state(game: str) -> tuple[Settings, State]:
    settings = GAMES[game].settings(FULL_MATCH_SETTINGS[game])
    return settings, GAMES[game].new_match(settings, FULL_MATCH_SEED)


def phase_name(state: State) -> str:
    """The phase of the seat to act, as a word for the report."""
    seat = state.to_act
    if seat is None:
        return "match over"
    return str(state.observation(seat).phase.value).replace("_", " ")


# --------------------------------------------------------------------------------------------
# Messages


@cache
def encoder(game: str) -> outgoing.GameEncoder:
    """The referee's encoder of ``game``'s values (one per game: it keeps the bytes of the
    actions it serialized, as a match's does)."""
    return outgoing.GameEncoder(game)


def match_started(
    match_id: str,
    game: str,
    settings: Settings,
    seat: int,
    names: list[str],
    move_ms: int,
    *,
    resumed: bool = False,
) -> pb.ServerMessage:
    """A seat's ``MatchStarted``: no time bank, and no deal commitment (a scripted match's
    deal is the engine's, from a seed the checker chose; it commits to nothing)."""
    return messages.match_started(
        match_id,
        game,
        settings,
        seat,
        [pb.SeatInfo(seat=number, bot_name=name) for number, name in enumerate(names)],
        pb.ClockSettings(move_ms=move_ms, bank_ms=0, policy=pb.TIMEOUT_POLICY_DEFAULT),
        resumed=resumed,
        deal_commitment=b"",
    )


def seat_events(game: str, state: State, start: int, seats: list[int]) -> dict[int, list[bytes]]:
    """The events from index ``start`` on that each of ``seats`` may see, serialized once
    each as the referee serializes them (``GameEvent`` bytes)."""
    encoded = [
        (audience, encoder(game).event(start + offset, event))
        for offset, (audience, event) in enumerate(state.all_events(start))
    ]
    return {seat: [data for audience, data in encoded if audience >> seat & 1] for seat in seats}


def event_batches(match_id: str, seat: int, events: list[bytes], *, split: bool) -> list[bytes]:
    """``events`` in one ``EventBatch``, or with ``split`` one per event (as a referee that
    sends each step at once); none for no events."""
    groups = [[event] for event in events] if split else ([events] if events else [])
    return [outgoing.event_batch(match_id, seat, group) for group in groups]


def action_request(
    request_id: str,
    match_id: str,
    game: str,
    state: State,
    move_ms: int,
    attempt: int = 1,
    events: Sequence[bytes] = (),
) -> bytes:
    """The ``ActionRequest`` of the seat to act (no time bank), carrying ``events``."""
    seat = state.to_act
    assert seat is not None, "the match is over"
    question = encoder(game).question(state.observation(seat), state.legal_actions())
    head = outgoing.request_head(request_id, match_id, seat)
    return outgoing.action_request(head, question, move_ms, 0, attempt, list(events))


def match_ended(
    match_id: str,
    seat: int,
    status: pb.MatchStatus,
    *,
    state: State | None = None,
    names: list[str] | None = None,
    reason: str = "",
    seed: int = 0,
    events: Sequence[bytes] = (),
) -> bytes:
    """A seat's ``MatchEnded``, with every seat's result when the match is over."""
    results = []
    outcome = state.outcome if state is not None else None
    if outcome is not None and names is not None:
        results = [
            result_message(
                SeatRecord(
                    seat=number,
                    bot_name=names[number],
                    bot_version="",
                    score=outcome.scores[number],
                    rank=outcome.ranks[number],
                    end=SeatEnd.COMPLETED,
                    forfeit_reason="",
                    timeouts=0,
                    defaults_played=0,
                )
            )
            for number in range(len(names))
        ]
    ended = pb.MatchEnded(
        match_id=match_id, seat=seat, status=status, seats=results, reason=reason, seed=seed
    )
    return outgoing.match_ended(ended, list(events))


def one_line(message: Message, limit: int = 160) -> str:
    """A protobuf message in one line of text format, cut at ``limit`` characters."""
    text = text_format.MessageToString(message, as_one_line=True).strip() or "{}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def action_text(action: pb.GameAction) -> str:
    """A ``GameAction`` without its game wrapper: ``play_card { card { ... } }``."""
    which = action.WhichOneof("game")
    if which is None:
        return "an empty GameAction"
    return one_line(getattr(action, which))


def actions_text(actions: list[pb.GameAction], limit: int = 6) -> str:
    shown = " | ".join(action_text(a) for a in actions[:limit])
    more = len(actions) - limit
    return shown + (f" | … ({more} more)" if more > 0 else "")
