"""What ``bisca check-bot`` says: a failure's reason, one line per check, the totals.

Also how those lines name a few messages: a server message in brief (the last ones sent are
named when the bot drops its stream), bytes that are not a ``BotMessage``, and a Hello with its
token hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf.message import Message

from bisca.server.referee import MAX_BOT_MESSAGE_BYTES, Malformed, TooLarge
from bisca.v1 import arena_pb2 as pb

from . import _script as script


class CheckFailed(Exception):
    """Why a check failed: a sentence, then the messages involved (one per line)."""

    def __init__(self, reason: str, *details: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details = list(details)


class LateAnswer(CheckFailed):
    """A request's clock ran out before its answer came (none came, or it came late)."""


@dataclass
class CheckResult:
    name: str
    passed: bool
    text: str
    details: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        head = f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.text}"
        return [head, *(f"      {detail}" for detail in self.details)]


@dataclass
class Report:
    command: str
    games: list[str]
    stderr_path: Path
    results: list[CheckResult] = field(default_factory=list)
    process_end: str = ""

    @property
    def passed(self) -> int:
        return sum(1 for result in self.results if result.passed)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def exit_code(self) -> int:
        return 0 if self.results and not self.failed else 1

    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"


MESSAGE_NAMES = {
    "welcome": "Welcome",
    "match_started": "MatchStarted",
    "events": "EventBatch",
    "action_request": "ActionRequest",
    "action_rejected": "ActionRejected",
    "match_ended": "MatchEnded",
    "error": "Error",
}


def message_summary(message: pb.ServerMessage) -> str:
    """A server message in a few words: its kind and ids."""
    kind = message.WhichOneof("kind")
    if kind is None:
        return "an empty ServerMessage"
    body: Message = getattr(message, kind)
    words = [MESSAGE_NAMES.get(kind, kind)]
    if kind == "action_request":
        words.append(message.action_request.request_id)
    elif kind == "action_rejected":
        words.append(message.action_rejected.request_id)
    where = [
        f"{name} {getattr(body, field)}"
        for field, name in (("match_id", "match"), ("seat", "seat"))
        if field in body.DESCRIPTOR.fields_by_name
    ]
    if kind == "events":
        where.append(f"{len(message.events.events)} event(s)")
    if kind == "match_ended":
        where.append(pb.MatchStatus.Name(message.match_ended.status).removeprefix("MATCH_STATUS_"))
    return " ".join(words) + (f" ({', '.join(where)})" if where else "")


def inbound_text(message: Malformed | TooLarge) -> str:
    if isinstance(message, TooLarge):
        return f"a message of {message.size} bytes, over the {MAX_BOT_MESSAGE_BYTES}-byte limit"
    return f"{message.size} bytes that are not a bisca.v1.BotMessage ({message.reason})"


def hello_text(hello: pb.Hello) -> str:
    """``Hello`` and its fields on one line, the token hidden: a report never shows one."""
    return "Hello " + script.one_line(hello_without_token(hello))


def hello_without_token(hello: pb.Hello) -> pb.Hello:
    shown = pb.Hello()
    shown.CopyFrom(hello)
    if shown.token:
        shown.token = "…"
    return shown
