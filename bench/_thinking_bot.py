"""A bot that thinks without working: it answers each request with a random legal action
(always the first would end most Belote deals in four passes) after a fixed delay, and
answers every open request on its own clock, so one process thinks for many matches at once
(the SDK answers one request at a time, which would make the bot, not the arena, the limit).
Almost no CPU: a timer thread and the stream.

Usage: ``_thinking_bot.py THINK_MS`` with ``BISCA_ADDRESS`` and ``BISCA_TOKEN`` set (as an
arena launching it sets them).  Exits when the server ends the stream.
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
                if message.WhichOneof("kind") == "action_request":
                    request = message.action_request
                    reply = pb.ActionReply(
                        request_id=request.request_id, action=choose(request.legal_actions)
                    )
                    timers.at(time.monotonic() + think_s, pb.BotMessage(action=reply))
        except grpc.RpcError:
            pass  # the server went away: nothing more to think about
        outbox.put(None)


if __name__ == "__main__":
    main()
