"""Answers every request legally, then answers it again."""

from __future__ import annotations

from _raw import reply, run

run(lambda request: [reply(request, request.legal_actions[0])] * 2)
