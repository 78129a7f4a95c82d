"""The log of an in-process match: the referee's format (``proto/bisca/v1/log.proto``), so
``bisca replay show`` prints it and ``bisca replay verify`` re-runs the engine on it.

The framing and the hash chain are :mod:`bisca.wire`'s, the referee's own.  The file is written
as ``NAME.partial`` and renamed to ``NAME`` once its footer is written, like the referee's, and
an existing log is never written over.  There is no clock in a local match, so each step's
timings are the wall clock's and nothing is ever substituted.

A signature needs a key, and the SDK holds none: a log is signed only when the caller hands a
``signer`` (a function from the footer's chain to a ``LogSignature``; the server's
``ServerKey.sign`` is one).  ``bisca replay verify`` says of an unsigned log that it replays
(every step agrees with the engine) but is *untrusted*: nothing vouches for who played it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bisca import wire
from bisca.engine import ENGINE_VERSION, MatchState, Outcome
from bisca.v1 import arena_pb2, log_pb2

Signer = Callable[[bytes], log_pb2.LogSignature]
"""Signs the chain of a log's footer record (``bisca.server.logs.ServerKey.sign`` is one)."""

PARTIAL_SUFFIX = ".partial"


def _now_us() -> int:
    return time.time_ns() // 1000


class LocalLog:
    """Writes one local match's log to ``path`` (``FileExistsError`` if a log is there)."""

    def __init__(
        self,
        path: Path,
        *,
        game: str,
        match_id: str,
        settings: Any,
        seed: int,
        names: Sequence[str],
        clock: arena_pb2.ClockSettings,
        signer: Signer | None = None,
    ) -> None:
        if path.exists():
            raise FileExistsError(f"{path}: a match log is there already; it is not written over")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.partial_path = path.with_name(path.name + PARTIAL_SUFFIX)
        self._file = self.partial_path.open("wb")
        self._game = game
        self._signer = signer
        self._chain = wire.LOG_GENESIS
        self._events = 0
        self._write(
            log_pb2.LogEntry(
                header=log_pb2.LogHeader(
                    format_version=wire.LOG_FORMAT_VERSION,
                    engine_version=ENGINE_VERSION,
                    match_id=match_id,
                    game=wire.game_enum(game),
                    settings=wire.encode_game_settings(game, settings),
                    seed=seed,
                    seats=[
                        arena_pb2.SeatInfo(seat=seat, bot_name=name, bot_version="0")
                        for seat, name in enumerate(names)
                    ],
                    clock=clock,
                    started_at_us=_now_us(),
                )
            )
        )

    def _write(self, entry: log_pb2.LogEntry) -> None:
        framed, self._chain = wire.log_record(
            self._chain, entry.SerializeToString(deterministic=True)
        )
        self._file.write(framed)

    def step(
        self,
        number: int,
        state: MatchState,
        seat: int,
        legal: Sequence[Any],
        action: Any,
        requested_at_us: int,
    ) -> None:
        """The step ``number`` before ``action`` is applied to ``state``."""
        game = self._game
        answered = _now_us()
        self._write(
            log_pb2.LogEntry(
                step=log_pb2.LogStep(
                    step=number,
                    seat=seat,
                    request_id=str(number),
                    observation=wire.encode_game_observation(game, state.observation(seat)),
                    legal_actions=[wire.encode_game_action(game, a) for a in legal],
                    action=wire.encode_game_action(game, action),
                    requested_at_us=requested_at_us,
                    answered_at_us=answered,
                    used_us=answered - requested_at_us,
                )
            )
        )

    def events(self, state: MatchState, after_step: int) -> None:
        """The events ``state`` produced since the last call."""
        game = self._game
        first = self._events
        produced = state.all_events(first)
        self._events += len(produced)
        self._write(
            log_pb2.LogEntry(
                events=log_pb2.LogEvents(
                    after_step=after_step,
                    events=[
                        log_pb2.LoggedEvent(
                            index=index,
                            audience=audience,
                            event=wire.encode_game_event(game, index, event),
                        )
                        for index, (audience, event) in enumerate(produced, first)
                    ],
                )
            )
        )

    def complete(self, outcome: Outcome, names: Sequence[str], steps: int) -> str:
        """Write the footer (and the signature), publish the log; the footer's hex chain."""
        self._write(
            log_pb2.LogEntry(
                footer=log_pb2.LogFooter(
                    status=arena_pb2.MATCH_STATUS_FINISHED,
                    seats=[
                        arena_pb2.SeatResult(
                            seat=seat,
                            bot_name=name,
                            score=outcome.scores[seat],
                            rank=outcome.ranks[seat],
                            end=arena_pb2.SEAT_END_COMPLETED,
                        )
                        for seat, name in enumerate(names)
                    ],
                    ended_at_us=_now_us(),
                    steps=steps,
                    final_hash=self._chain,
                )
            )
        )
        footer_chain = self._chain
        if self._signer is not None:
            self._write(log_pb2.LogEntry(signature=self._signer(footer_chain)))
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self.partial_path, self.path)
        return footer_chain.hex()

    def abandon(self) -> None:
        """Close without a footer: the ``.partial`` file stays, an incomplete log."""
        self._file.close()
