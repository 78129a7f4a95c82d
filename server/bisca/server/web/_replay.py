"""A finished match's replay for the browser: the log verified, then one frame per step.

The frames come from re-running the engine on the log (as ``bisca replay verify`` does), so
every seat's observation is there at every step, not only the acting seat's: the omniscient
table draws every hand, a seat's view draws exactly that seat's.  The acting seat's
observation is the log's own (the replay checked it is the engine's), and each frame carries
the log's account of the decision: the legal actions offered, the clock, the answer and how
long it took, the rejected attempts and a default played by the referee.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bisca import wire
from bisca.engine import GAMES, MatchState
from bisca.server.edge import operator
from bisca.server.errors import LogFormatError
from bisca.server.logs import Verdict, verify, why_unreadable, with_file_name
from bisca.server.records import RecordedMatch
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

from ._json import JsonObject, Problem, to_json


@dataclass
class _Frame:
    step: int
    events: list[pb.WatchedEvent]
    decision: log_pb2.LogStep | None
    observations: list[pb.GameObservation]

    def to_json(self) -> JsonObject:
        return {
            "step": self.step,
            "events": [to_json(event) for event in self.events],
            "decision": None if self.decision is None else to_json(self.decision),
            "observations": [to_json(observation) for observation in self.observations],
        }


def verdict_json(verdict: Verdict) -> JsonObject:
    """What the page shows of a verification: its lines, and whether the log can be trusted,
    without the server's folders (review 41: every line began with the log's whole path)."""
    return {
        "ok": verdict.ok,
        "complete": verdict.complete,
        "trusted": verdict.trusted,
        "signedBy": verdict.signed_by,
        "untrusted": verdict.untrusted,
        "problem": with_file_name(verdict.problem, verdict.path),
        "lines": [with_file_name(line, verdict.path) for line in verdict.lines()],
    }


def recorded_as(source: Path | operator.RecordedLog) -> operator.RecordedLog:
    """``source`` as a match's recorded log (a path: that file)."""
    return source if isinstance(source, operator.RecordedLog) else operator.RecordedLog(source)


def unreadable(what: str, path: Path, problem: OSError | LogFormatError) -> Problem:
    """409: ``what`` (a match's log, at ``path``) cannot be read, and why, without the
    server's folders (the answer is anybody's): the file's name stands for its path."""
    return Problem(409, f"{what} cannot be read: {why_unreadable(path, problem)}")


def replay_json(
    source: Path | operator.RecordedLog, public_key: bytes | None, records: dict[str, RecordedMatch]
) -> JsonObject:
    """The verification of the log at ``source`` (a file, or where the store says a match's
    log is) and its frames (those up to a divergence, when it diverges).  :class:`Problem` 409
    when it cannot be read as a log."""
    recorded = recorded_as(source)
    # Read once: what is verified is what is shown.
    try:
        log = recorded.read()
    except (OSError, LogFormatError) as problem:
        raise unreadable("the match's log", recorded.path, problem) from None
    verdict = verify(log, public_key, records)
    header = log.header
    if header is None:
        raise Problem(409, f"the log {recorded.path.name} has no header")
    frames = _frames(log.entries(), verdict)
    return {
        "header": to_json(header),
        "footer": None if log.footer is None else to_json(log.footer),
        "verdict": verdict_json(verdict),
        "frames": [frame.to_json() for frame in frames],
    }


def _frames(entries: Iterable[log_pb2.LogEntry], verdict: Verdict) -> list[_Frame]:
    game = ""
    state: MatchState | None = None
    seats = 0
    frames: list[_Frame] = []
    events: list[pb.WatchedEvent] = []
    # A diverging log is shown up to the step where it diverges (the rest is not the engine's).
    last_step = verdict.steps if not verdict.ok else None
    for entry in entries:
        kind = entry.WhichOneof("kind")
        if kind == "header":
            game = wire.game_name(entry.header.game)
            settings = wire.decode_game_settings(game, entry.header.settings)
            state = GAMES[game].new_match(settings, entry.header.seed)
            seats = len(entry.header.seats)
        elif kind == "events":
            events.extend(
                pb.WatchedEvent(index=e.index, audience=e.audience, event=e.event)
                for e in entry.events.events
            )
        elif kind == "step" and state is not None:
            step = entry.step
            if last_step is not None and step.step >= last_step:
                break
            decision = log_pb2.LogStep()
            decision.CopyFrom(step)
            decision.ClearField("observation")  # it is the acting seat's entry below
            observations = [_observation(game, state, seat) for seat in range(seats)]
            observations[step.seat] = step.observation
            frames.append(_Frame(step.step, events, decision, observations))
            events = []
            state.apply(wire.decode_game_action(game, step.action))
    if state is not None:
        frames.append(
            _Frame(
                len(frames),
                events,
                None,
                [_observation(game, state, seat) for seat in range(seats)],
            )
        )
    return frames


def _observation(game: str, state: MatchState, seat: int) -> pb.GameObservation:
    return wire.encode_game_observation(game, state.observation(seat))
