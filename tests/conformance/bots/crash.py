"""Answers legally, but its process exits (code 3) right after its 3rd answer."""

from __future__ import annotations

import itertools
import os
import sys
import time

from _raw import reply, run

from bisca.v1 import arena_pb2 as pb

answers = itertools.count(1)


def answer(request: pb.ActionRequest) -> list[pb.BotMessage | bytes]:
    if next(answers) > 3:
        print("crash.py: exiting on purpose", file=sys.stderr, flush=True)
        time.sleep(0.05)
        os._exit(3)
    return [reply(request, request.legal_actions[0])]


run(answer)
