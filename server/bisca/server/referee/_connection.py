"""One bot's stream as the referee sees it, and what the transport hands it.

The transport edge parses every inbound message before the referee sees it: a
``pb.BotMessage``, or :class:`Malformed` / :class:`TooLarge` for bytes that are not one (the
stream never dies of them).  Outbound, a connection is two non-blocking callables the edge
gives the referee: ``write`` enqueues a serialized ``ServerMessage`` (the referee serializes:
a match builds its messages from parts serialized once, ``_outgoing.py``), ``close`` ends the
stream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bisca.v1 import arena_pb2 as pb

from . import _messages as messages

#: Enqueues one serialized ``pb.ServerMessage`` on the stream; never blocks.
Send = Callable[[bytes], None]

#: Messages of a bot the referee answers with a refusal (an error, the stream going on) before
#: any of its matches has sent it a message ...
REFUSALS_AT_START = 32
#: ... and how many more each message of a match to it allows (a late answer to a request is
#: refused, so an honest bot may have one refused per request), banked up to a bound.  A bot
#: past them sends what nothing the referee said explains: each refusal costs the referee a
#: parse, a judgement and an answer, and a bot sending them in a loop (thousands of empty
#: messages packed in one DATA frame) took a core of its arena (review 42).  Its stream ends.
REFUSALS_PER_MESSAGE_SENT = 2
MOST_REFUSALS_BANKED = 1024


@dataclass(frozen=True)
class Malformed:
    """Bytes from a bot that are not a ``BotMessage`` (the transport never fails on them)."""

    size: int
    reason: str


@dataclass(frozen=True)
class TooLarge:
    """A message over the referee's size limit, refused unread."""

    size: int


#: What the transport hands the referee for each message a bot sent.
Inbound = pb.BotMessage | Malformed | TooLarge


@dataclass(eq=False)
class Connection:
    """One bot's Play stream."""

    id: str
    write: Send
    close: Callable[[], None]
    bot: str | None = None
    bot_version: str = ""
    games: frozenset[str] = frozenset()
    alive: bool = True
    #: A Hello arrived (it may still be being checked): any other is a duplicate.
    said_hello: bool = False
    #: The peer's address as gRPC names it (``ipv4:127.0.0.1:5000``, ``unix:``).
    peer: str = ""
    #: Messages that came after the Hello, before it was answered: played once it is.
    early: list[Inbound] = field(default_factory=list)
    #: Their serialized size together (bounded, as their number is: ``_referee.py``).
    early_bytes: int = 0
    #: The protocol version its Hello said, and whether it gets events as they happen (version
    #: 1 always; version 2 when its Hello asked) or inside its seats' next messages.
    protocol: int = 0
    live_events: bool = True
    #: Ends the referee's wait for its Hello (it is welcomed, or gone).
    stop_waiting_for_hello: Callable[[], None] = lambda: None
    #: Messages of the bot the referee may still refuse with the stream going on.
    refusals_left: int = REFUSALS_AT_START

    def send(self, message: pb.ServerMessage) -> None:
        self.write(message.SerializeToString())

    def deliver(self, data: bytes) -> None:
        """A match's message to the bot (serialized): written, and one more refusal allowed
        for each the bot may answer late."""
        self.write(data)
        self.refusals_left = min(
            MOST_REFUSALS_BANKED, self.refusals_left + REFUSALS_PER_MESSAGE_SENT
        )

    def refused(self, answer: pb.ServerMessage) -> None:
        """A message of the bot's refused with ``answer``, the stream going on; past the
        refusals left, the stream ends with a fatal error instead."""
        if self.refusals_left > 0:
            self.refusals_left -= 1
            self.send(answer)
            return
        self.error(
            answer.error.code,
            f"{answer.error.message}; and more of this bot's messages were refused than the "
            f"referee's messages explain ({REFUSALS_AT_START}, and "
            f"{REFUSALS_PER_MESSAGE_SENT} for each message a match sent it): the stream is "
            "ended",
            fatal=True,
        )

    def error(self, code: pb.ErrorCode, message: str, *, fatal: bool = False, **where: str) -> None:
        if fatal:
            self.refuse(messages.error(code, message, fatal=True, **where))
        else:
            self.send(messages.error(code, message, fatal=False, **where))

    def refuse(self, error: pb.ServerMessage) -> None:
        """Send a fatal ``error`` and end the stream."""
        self.send(error)
        self.close()
        self.alive = False
