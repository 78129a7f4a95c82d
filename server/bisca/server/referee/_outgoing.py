"""What a match sends and logs, as bytes: every part serialized once, then wrapped where it
goes.

A decision's observation and legal actions are serialized once (:class:`Question`); those very
bytes are the body of the ``ActionRequest`` on the wire (and of every copy of it re-sent with a
fresher clock) and of the ``LogStep`` in the log, which gives them the same field numbers.  An
event is serialized once as a ``GameEvent`` and the same bytes go into each seat's messages,
the log's ``LogEvents`` and the spectators' view.  A legal action that comes back (the same
card, the same bid) is serialized once per match.  Nothing here builds a message object for a
value it has the bytes of: protobuf parsers read fields concatenated in any order exactly as
the bytes protobuf writes itself (``bisca.wire._fields``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from bisca import wire
from bisca.engine import Action, Event, Observation
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

_f = wire.field_number
_length = wire.length_field
_varint = wire.varint_field
_size = wire.varint

# ServerMessage kinds, and the fields of the messages built here.
_ACTION_REQUEST = _f(pb.ServerMessage, "action_request")
_ACTION_REQUEST_KEY = wire.varint(_ACTION_REQUEST << 3 | 2)  # a length-delimited field's key
_EVENT_BATCH = _f(pb.ServerMessage, "events")
_MATCH_ENDED = _f(pb.ServerMessage, "match_ended")
_REQUEST_ID = _f(pb.ActionRequest, "request_id")
_REQUEST_MATCH = _f(pb.ActionRequest, "match_id")
_REQUEST_SEAT = _f(pb.ActionRequest, "seat")
_REQUEST_CLOCK = _f(pb.ActionRequest, "clock")
_REQUEST_ATTEMPT = _f(pb.ActionRequest, "attempt")
_REQUEST_EVENTS = _f(pb.ActionRequest, "events")
_ENDED_EVENTS = _f(pb.MatchEnded, "events")
_BATCH_EVENTS = _f(pb.EventBatch, "events")
_CLOCK_MOVE = _f(pb.ClockState, "move_ms")
_CLOCK_BANK = _f(pb.ClockState, "bank_ms")
_EVENT_INDEX = _f(pb.GameEvent, "index")
_ENTRY_STEP = _f(log_pb2.LogEntry, "step")
_STEP_ACTION = _f(log_pb2.LogStep, "action")
_ENTRY_EVENTS = _f(log_pb2.LogEntry, "events")
_LOGGED_INDEX = _f(log_pb2.LoggedEvent, "index")
_LOGGED_AUDIENCE = _f(log_pb2.LoggedEvent, "audience")
_LOGGED_EVENT = _f(log_pb2.LoggedEvent, "event")
_EVENTS_AFTER = _f(log_pb2.LogEvents, "after_step")
_EVENTS_LIST = _f(log_pb2.LogEvents, "events")
# The keys of the length-delimited fields written part by part below.
_REQUEST_CLOCK_KEY = wire.varint(_REQUEST_CLOCK << 3 | 2)
_REQUEST_EVENTS_KEY = wire.varint(_REQUEST_EVENTS << 3 | 2)
_LOGGED_EVENT_KEY = wire.varint(_LOGGED_EVENT << 3 | 2)
_EVENTS_LIST_KEY = wire.varint(_EVENTS_LIST << 3 | 2)

# One question's bytes serve the request and the log step: the same field numbers in both.
_OBSERVATION = _f(pb.ActionRequest, "observation")
_OBSERVATION_KEY = wire.varint(_OBSERVATION << 3 | 2)
_LEGAL = _f(pb.ActionRequest, "legal_actions")
if (
    _f(log_pb2.LogStep, "observation"),
    _f(log_pb2.LogStep, "legal_actions"),
) != (_OBSERVATION, _LEGAL):
    raise TypeError("ActionRequest and LogStep must number observation and legal actions alike")

#: Distinct actions a match keeps the bytes of (a Belote match uses a few dozen).
_ACTION_MEMO_LIMIT = 4_096


class GameEncoder:
    """One match's engine values as serialized ``bisca.v1`` wrapper messages."""

    def __init__(self, game: str) -> None:
        self._codec = wire.codec(game)
        self._action_field = _f(pb.GameAction, game)
        self._event_field = _f(pb.GameEvent, game)
        self._observation_field = _f(pb.GameObservation, game)
        # Per action: the action itself (so its id is not reused while it is kept), its
        # ``GameAction`` and its legal-actions field.  Keyed by identity: the engines hand out
        # the same action objects every time, and hashing a dataclass costs more than writing
        # its bytes again for one that is new.
        self._actions: dict[int, tuple[Action, bytes, bytes]] = {}
        self._event_key = wire.varint(self._event_field << 3 | 2)
        self._observation_key = wire.varint(self._observation_field << 3 | 2)

    def _known(self, action: Action) -> tuple[Action, bytes, bytes]:
        known = self._actions.get(id(action))
        if known is None or known[0] is not action:
            game_action = _length(self._action_field, self._codec.serialize_action(action))
            known = (action, game_action, _length(_LEGAL, game_action))
            if len(self._actions) >= _ACTION_MEMO_LIMIT:
                self._actions.clear()
            self._actions[id(action)] = known
        return known

    def action(self, action: Action) -> bytes:
        """A ``GameAction``, serialized once per action."""
        return self._known(action)[1]

    def event(self, index: int, event: Event) -> bytes:
        """A ``GameEvent`` with its index in the match's event record."""
        inner = self._codec.serialize_event(event)
        return b"".join((_varint(_EVENT_INDEX, index), self._event_key, _size(len(inner)), inner))

    def question(self, observation: Observation, legal: Sequence[Action]) -> bytes:
        """The observation and legal-action fields of a request (and of its log step)."""
        inner = self._codec.serialize_observation(observation)
        inner_size = _size(len(inner))
        # ``GameObservation`` holds the game's observation: its size is its key's, its size's
        # and the observation's; every part is copied once, by the join.
        wrapper_size = len(self._observation_key) + len(inner_size) + len(inner)
        parts = [_OBSERVATION_KEY, _size(wrapper_size), self._observation_key, inner_size, inner]
        actions = self._actions
        for action in legal:
            known = actions.get(id(action))
            if known is None or known[0] is not action:
                known = self._known(action)
            parts.append(known[2])
        return b"".join(parts)


def action_request(
    head: bytes, question: bytes, move_ms: int, bank_ms: int, attempt: int, events: list[bytes]
) -> bytes:
    """A ``ServerMessage`` holding an ``ActionRequest``: ``head`` its serialized ids (request,
    match, seat), ``question`` from :meth:`GameEncoder.question`, then the clock, the attempt
    and the events carried."""
    clock = _varint(_CLOCK_MOVE, move_ms) + _varint(_CLOCK_BANK, bank_ms)
    tail = [_REQUEST_CLOCK_KEY, _size(len(clock)), clock, _varint(_REQUEST_ATTEMPT, attempt)]
    for event in events:
        tail += (_REQUEST_EVENTS_KEY, _size(len(event)), event)
    # One join: the question (the bulk of the bytes) is copied once, not once per part.
    size = len(head) + len(question) + sum(map(len, tail))
    return b"".join((_ACTION_REQUEST_KEY, _size(size), head, question, *tail))


def request_head(request_id: str, match_id: str, seat: int) -> bytes:
    """A request's ids, as ``ActionRequest(request_id=, match_id=, seat=)`` serializes them."""
    return (
        _string(_REQUEST_ID, request_id)
        + _string(_REQUEST_MATCH, match_id)
        + _varint(_REQUEST_SEAT, seat)
    )


def _string(number: int, text: str) -> bytes:
    """A string field; nothing for "" (proto3's default is never written)."""
    return _length(number, text.encode()) if text else b""


def event_batch(match_id: str, seat: int, events: list[bytes]) -> bytes:
    """A ``ServerMessage`` holding an ``EventBatch`` of serialized ``GameEvent`` values."""
    return _length(
        _EVENT_BATCH, _event_batch_head(match_id, seat) + wire.repeated_field(_BATCH_EVENTS, events)
    )


@functools.lru_cache(maxsize=4_096)
def _event_batch_head(match_id: str, seat: int) -> bytes:
    """An ``EventBatch``'s ids, serialized once per seat of a match (with live events a
    match sends every seat a batch at every decision)."""
    return pb.EventBatch(match_id=match_id, seat=seat).SerializeToString()


def match_ended(ended: pb.MatchEnded, events: list[bytes]) -> bytes:
    """A ``ServerMessage`` holding ``ended`` and the events it carries."""
    body = ended.SerializeToString() + wire.repeated_field(_ENDED_EVENTS, events)
    return _length(_MATCH_ENDED, body)


def log_step(step: log_pb2.LogStep, question: bytes, action: bytes) -> bytes:
    """A ``LogEntry`` holding ``step`` (without observation, legal actions and action), the
    question's bytes as they were sent and the ``GameAction`` played."""
    body = step.SerializeToString(deterministic=True) + question + _length(_STEP_ACTION, action)
    return _length(_ENTRY_STEP, body)


def log_events(after_step: int, events: Sequence[tuple[int, int, bytes]]) -> bytes:
    """A serialized ``LogEvents``: ``(index, audience, GameEvent bytes)`` per event."""
    parts = [_varint(_EVENTS_AFTER, after_step)]
    for index, audience, event in events:
        logged = b"".join(
            (
                _varint(_LOGGED_INDEX, index),
                _varint(_LOGGED_AUDIENCE, audience),
                _LOGGED_EVENT_KEY,
                _size(len(event)),
                event,
            )
        )
        parts += (_EVENTS_LIST_KEY, _size(len(logged)), logged)
    return b"".join(parts)


def log_events_entry(batch: bytes) -> bytes:
    """A ``LogEntry`` holding a serialized ``LogEvents``."""
    return _length(_ENTRY_EVENTS, batch)
