"""A bot that thinks without working: it answers each request with a random legal action
(always the first would end most Belote deals in four passes) after a fixed delay, and
answers every open request on its own clock, so one process thinks for many matches at once
(the SDK answers one request at a time, which would make the bot, not the arena, the limit).
Almost no CPU: a timer thread and the stream.

Usage: ``_thinking_bot.py THINK_MS [FAULT]`` with ``BISCA_ADDRESS`` and ``BISCA_TOKEN`` set
(as an arena launching it sets them).  Exits when the server ends the stream.  The soak run
(``soak.py``) gives some a FAULT:

* ``crash``: exits abruptly (status 3), mid-match, 20 to 50 s after it started;
* ``hang``: 10 to 30 s after it started, stays connected and answers nothing more;
* ``late``: every 8th answer comes 400 ms late (past a 200 ms move: the bank pays, then the
  clock's timeouts);
* ``flood``: with every answer, 20 answers to requests that do not exist and the same answer
  again.
"""

from __future__ import annotations

import heapq
import itertools
import os
import queue
import random
import sys
import threading
import time
from collections.abc import Iterator

import grpc

from bisca.v1 import arena_pb2 as pb

Outgoing = pb.BotMessage | None


class Timers:
    """Replies due at their times, put in ``outbox`` by one thread."""

    def __init__(self, outbox: queue.SimpleQueue[Outgoing]) -> None:
        self.outbox = outbox
        self.due: list[tuple[float, int, pb.BotMessage]] = []
        self.order = itertools.count()
        self.changed = threading.Condition()
        threading.Thread(target=self._run, daemon=True).start()

    def at(self, when: float, message: pb.BotMessage) -> None:
        with self.changed:
            heapq.heappush(self.due, (when, next(self.order), message))
            self.changed.notify()

    def _run(self) -> None:
        while True:
            with self.changed:
                while not self.due or self.due[0][0] > time.monotonic():
                    self.changed.wait(self.due[0][0] - time.monotonic() if self.due else None)
                _, _, message = heapq.heappop(self.due)
            self.outbox.put(message)


def main() -> None:
    think_s = int(sys.argv[1]) / 1000
    fault = sys.argv[2] if len(sys.argv) > 2 else ""
    born = time.monotonic()
    rng = random.Random()
    crash_at = born + rng.uniform(20, 50)
    hang_at = born + rng.uniform(10, 30)
    answers = 0
    outbox: queue.SimpleQueue[Outgoing] = queue.SimpleQueue()
    timers = Timers(outbox)
    choose = random.Random(7).choice
    outbox.put(
        pb.BotMessage(
            hello=pb.Hello(
                token=os.environ["BISCA_TOKEN"],
                bot_name="thinking",
                bot_version="1",
                protocol_version=pb.PROTOCOL_VERSION_2,
                games=[pb.GAME_BELOTE, pb.GAME_BESTIA],
            )
        )
    )

    def outgoing() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    with grpc.insecure_channel(os.environ["BISCA_ADDRESS"]) as channel:
        play = channel.stream_stream(
            "/bisca.v1.Arena/Play",
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.ServerMessage.FromString,
        )
        try:
            for message in play(outgoing()):
                if message.WhichOneof("kind") != "action_request":
                    continue
                now = time.monotonic()
                if fault == "crash" and now > crash_at:
                    os._exit(3)
                if fault == "hang" and now > hang_at:
                    continue
                request = message.action_request
                reply = pb.ActionReply(
                    request_id=request.request_id, action=choose(request.legal_actions)
                )
                answers += 1
                late = 0.4 if fault == "late" and answers % 8 == 0 else 0.0
                timers.at(now + think_s + late, pb.BotMessage(action=reply))
                if fault == "flood":
                    for number in range(20):
                        bogus = pb.ActionReply(request_id=f"bogus-{number}", action=reply.action)
                        outbox.put(pb.BotMessage(action=bogus))
                    timers.at(now + think_s, pb.BotMessage(action=reply))
        except grpc.RpcError:
            pass  # the server went away: nothing more to think about
        outbox.put(None)


if __name__ == "__main__":
    main()
