"""Answers every request with a legal action, under a request id of its own making."""

from __future__ import annotations

import itertools

from _raw import reply, run

numbers = itertools.count(1)
run(lambda request: [reply(request, request.legal_actions[0], f"made-up-{next(numbers)}")])
