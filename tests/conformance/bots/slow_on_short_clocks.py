"""Answers every request with a legal action (another one at each attempt), at once, except a
request whose clock is 300 ms or less: that one it answers after 0.6 s, the first time only
when started with ``once`` (a bot that reads the clock, delayed once by a loaded machine),
every time otherwise (a bot that assumes its usual thinking time)."""

from __future__ import annotations

import sys
import time

from _raw import reply, run

from bisca.v1 import arena_pb2 as pb

ONCE = sys.argv[1:] == ["once"]
slowed = 0


def answer(request: pb.ActionRequest) -> list[pb.BotMessage | bytes]:
    global slowed
    if request.clock.move_ms <= 300 and not (ONCE and slowed):
        slowed += 1
        time.sleep(0.6)
    legal = request.legal_actions
    return [reply(request, legal[(request.attempt - 1) % len(legal)])]


run(answer)
