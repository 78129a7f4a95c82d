"""The SDK against a server that misbehaves: text with terminal escape sequences in it, a
Welcome followed at once by a dropped stream, a stream that never says Welcome, a request with
no legal action.  Each is the server's fault, and none may hang the bot, drive the author's
terminal or be blamed on the bot's code."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bisca.client import Request, Session
from bisca.engine import new_match
from bisca.v1 import arena_pb2

from .support import action_request, through_wire

STATE = new_match("belote", seed=1)


def first_legal(request: Request[Any, Any]) -> Any:
    return request.legal_actions[0]


# ---- finding 7: a request with no legal action -----------------------------------------------


def test_a_request_without_legal_actions_is_logged_as_the_servers_fault_not_a_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    asked: list[Request[Any, Any]] = []

    def bot(request: Request[Any, Any]) -> Any:
        asked.append(request)
        return request.legal_actions[0]  # an IndexError (BotCrashed) if it were called

    session = Session(bot, token="t", name="b")
    session.hello()
    message = arena_pb2.ServerMessage()
    message.CopyFrom(action_request(STATE, "r-empty", "m-empty"))
    del message.action_request.legal_actions[:]
    caplog.set_level(logging.ERROR, logger="bisca.client")
    assert session.handle(through_wire(message)) == []
    assert asked == []
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    text = record.getMessage()
    assert "request r-empty of match m-empty" in text and "no legal actions" in text
    # The session goes on: the next, well-formed request is answered.
    assert len(session.handle(action_request(STATE, "r2", "m-empty"))) == 1
    assert [request.request_id for request in asked] == ["r2"]
