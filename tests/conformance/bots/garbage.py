"""Answers every request with bytes that are not a BotMessage."""

from __future__ import annotations

from _raw import run

run(lambda request: [b"\xff\xff\xff\xff not a protobuf"])
