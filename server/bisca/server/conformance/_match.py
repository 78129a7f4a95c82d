"""The matches the checker plays with the bot, and the requests it sends in them.

A :class:`ScriptedMatch` is a real engine state, the bot's seats in it and the messages of it
(through :mod:`._script`): it starts, brings the bot up to date, asks for actions, plays the
scripted seats and ends.  The :class:`Ledger` keeps every request sent (:class:`Sent`) by its
id for as long as the run lasts, so an answer that arrives a check late is still recognised,
and the matches of the running check, which are aborted when it is over.

Events reach the bot as the referee would send them for its Hello: each step's at once in
``EventBatch`` messages (live events), or kept per seat and carried by the seat's next
``ActionRequest`` or ``MatchEnded`` (protocol 2's default).
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bisca.engine import Action, Settings
from bisca.server.referee import Asked
from bisca.v1 import arena_pb2 as pb

from . import _script as script
from ._harness import Harness


@dataclass
class Sent:
    """An ``ActionRequest`` sent to the bot, and what became of it."""

    request_id: str
    match: ScriptedMatch
    seat: int
    attempt: int
    legal: list[Action]
    legal_messages: list[pb.GameAction]
    phase: str
    move_ms: int
    sent_at: float
    status: Literal["open", "answered", "withdrawn"] = "open"
    answered_with: str = ""
    rejected: Action | None = None  # an action refused on purpose, which must not come back
    ended_by_match: bool = False  # withdrawn because its match ended
    check: str = ""  # the name of the check that sent it

    @property
    def deadline(self) -> float:
        return self.sent_at + self.move_ms / 1000

    @property
    def asked(self) -> Asked:
        """The request as the referee's judge sees it.  Each attempt the checker sends is the
        last it allows (a refused answer fails the check), so a rejection says no attempt is
        left, as the referee's rejection of a last attempt does."""
        match = self.match
        return Asked(
            self.request_id,
            match.id,
            self.seat,
            match.game,
            match.state,
            attempt=self.attempt,
            attempts=self.attempt,
        )

    def describe(self) -> str:
        sent = "sent (then withdrawn by MatchEnded)" if self.ended_by_match else "sent"
        return (
            f"{sent}: ActionRequest {self.request_id} (match {self.match.id}, seat {self.seat}, "
            f"attempt {self.attempt}, {self.match.game} {self.phase}, clock {self.move_ms} ms), "
            f"legal: {script.actions_text(self.legal_messages)}"
        )


@dataclass
class Answer:
    """A judged answer: legal, in time, to an open request."""

    sent: Sent
    action: Action
    message: pb.GameAction
    elapsed_ms: float

    @property
    def text(self) -> str:
        return script.action_text(self.message)


class Ledger:
    """Every request sent to the bot, by id, and the matches of the running check."""

    def __init__(self, harness: Harness, move_ms: int) -> None:
        self.harness = harness
        #: The clock of every request, unless a check gives its own.
        self.move_ms = move_ms
        self.requests: dict[str, Sent] = {}
        self.matches: list[ScriptedMatch] = []
        self.current_check = ""
        self._request_numbers = 0

    def new_request_id(self) -> str:
        self._request_numbers += 1
        return f"r{self._request_numbers}-{secrets.token_hex(2)}"

    def new_match(
        self,
        game: str,
        settings: Settings,
        state: script.State,
        seed: int,
        bot_seats: Sequence[int],
        move_ms: int | None = None,
    ) -> ScriptedMatch:
        match = ScriptedMatch(self, game, settings, state, seed, bot_seats, move_ms or self.move_ms)
        self.matches.append(match)
        return match

    def situation_match(self, game: str, label: str, move_ms: int | None = None) -> ScriptedMatch:
        """A match in the situation ``label``, the bot in the seat to act, started and brought
        up to date with its history."""
        found = script.situation(game, label)
        state = found.state()
        assert state.to_act is not None
        match = self.new_match(game, found.settings, state, found.seed, [state.to_act], move_ms)
        match.start()
        match.history()
        return match

    def open_lines(self) -> list[str]:
        """The requests of the running check not answered yet, for a failure's details."""
        return [
            sent.describe()
            for match in self.matches
            for sent in match.requests
            if sent.status != "answered"
        ]

    def end_check(self) -> None:
        """The check is over: abort its matches still running, and forget them."""
        for match in self.matches:
            if not match.ended:
                match.abort("bisca check-bot: this check is over")
        self.matches = []


class ScriptedMatch:
    """A match the checker plays with the bot: a real engine state and the bot's seats."""

    def __init__(
        self,
        ledger: Ledger,
        game: str,
        settings: Settings,
        state: script.State,
        seed: int,
        bot_seats: Sequence[int],
        move_ms: int,
    ) -> None:
        self.ledger = ledger
        self.id = "m-" + secrets.token_hex(4)
        self.game = game
        self.settings = settings
        self.state = state
        self.seed = seed
        self.bot_seats = sorted(set(bot_seats))
        self.move_ms = move_ms
        self.names = [
            ledger.harness.bot_name if seat in self.bot_seats else f"scripted-{seat}"
            for seat in range(state.num_seats)
        ]
        self.delivered = 0
        self.ended = False
        self.requests: list[Sent] = []
        #: Per bot seat, the serialized events its next request or end carries (without live
        #: events).
        self.unsent: dict[int, list[bytes]] = {seat: [] for seat in self.bot_seats}
        #: Events sent inside requests and ends so far.
        self.carried = 0

    def _write(self, data: bytes) -> None:
        self.ledger.harness.write(data)

    def _take_unsent(self, seat: int) -> list[bytes]:
        events, self.unsent[seat] = self.unsent[seat], []
        self.carried += len(events)
        return events

    def start(self, *, resumed: bool = False) -> None:
        for seat in self.bot_seats:
            self.ledger.harness.send(
                script.match_started(
                    self.id,
                    self.game,
                    self.settings,
                    seat,
                    self.names,
                    self.move_ms,
                    resumed=resumed,
                )
            )

    def history(self) -> None:
        """Every event so far that each bot seat may see, one batch per seat: how the referee
        brings a resumed seat up to date, and how a scripted situation starts mid-match."""
        self.delivered = 0
        for seat in self.bot_seats:
            self.unsent[seat] = []
        self.events()

    def events(self, *, split: bool = False) -> int:
        """Hand over the events since the last call: sent now with live events (returns the
        number of batches), else kept for each seat's next message (returns 0)."""
        events = script.seat_events(self.game, self.state, self.delivered, self.bot_seats)
        self.delivered = self.state.event_count
        if not self.ledger.harness.live_events:
            for seat, visible in events.items():
                self.unsent[seat].extend(visible)
            return 0
        sent = 0
        for seat, visible in events.items():
            for batch in script.event_batches(self.id, seat, visible, split=split):
                self._write(batch)
                sent += 1
        return sent

    def request(self, move_ms: int | None = None) -> Sent:
        seat = self.state.to_act
        assert seat is not None and seat in self.bot_seats, "not the bot's turn"
        sent = Sent(
            check=self.ledger.current_check,
            request_id=self.ledger.new_request_id(),
            match=self,
            seat=seat,
            attempt=1,
            legal=list(self.state.legal_actions()),
            legal_messages=[],
            phase=script.phase_name(self.state),
            move_ms=move_ms or self.move_ms,
            sent_at=0.0,
        )
        self.requests.append(sent)
        self.ledger.requests[sent.request_id] = sent
        self.send_request(sent)
        return sent

    def send_request(self, sent: Sent, *, attempt: int | None = None) -> None:
        """(Re)send ``sent`` with a fresh clock (and a new attempt number)."""
        if attempt is not None:
            sent.attempt = attempt
        data = script.action_request(
            sent.request_id,
            self.id,
            self.game,
            self.state,
            sent.move_ms,
            sent.attempt,
            self._take_unsent(sent.seat),
        )
        # (What the report names is what the bot was sent: read back from its bytes.)
        sent.legal_messages = list(pb.ServerMessage.FromString(data).action_request.legal_actions)
        sent.status = "open"
        sent.sent_at = time.monotonic()
        self._write(data)

    def apply(self, answer: Answer) -> None:
        self.state.apply(answer.action)

    def play_scripted(self, rng: random.Random, *, split: bool = False) -> int:
        """Play random legal actions for the scripted seats, sending the bot every step's
        events, until a bot seat is to act or the match is over; returns the batches sent."""
        batches = self.events(split=split)
        while self.state.to_act is not None and self.state.to_act not in self.bot_seats:
            self.state.apply(rng.choice(self.state.legal_actions()))
            batches += self.events(split=split)
        return batches

    def finish(self) -> None:
        self.events()
        for seat in self.bot_seats:
            self._write(
                script.match_ended(
                    self.id,
                    seat,
                    pb.MATCH_STATUS_FINISHED,
                    state=self.state,
                    names=self.names,
                    seed=self.seed,
                    events=self._take_unsent(seat),
                )
            )
        self.ended = True

    def abort(self, reason: str) -> None:
        """End the match as failed, withdrawing its open requests."""
        for sent in self.requests:
            if sent.status == "open":
                sent.status = "withdrawn"
                sent.ended_by_match = True
        for seat in self.bot_seats:
            self._write(
                script.match_ended(
                    self.id,
                    seat,
                    pb.MATCH_STATUS_FAILED,
                    reason=reason,
                    events=self._take_unsent(seat),
                )
            )
        self.ended = True
