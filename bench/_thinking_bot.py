"""A bot that thinks without working: it answers each request with a random legal action
(always the first would end most Belote deals in four passes) after a fixed delay, and
answers every open request on its own clock, so one process thinks for many matches at once
(the SDK answers one request at a time, which would make the bot, not the arena, the limit).
Almost no CPU: a timer thread and the stream.

Usage: ``_thinking_bot.py THINK_MS [FAULT [MOVE_MS BANK_MS]]`` with ``BISCA_ADDRESS`` and
``BISCA_TOKEN`` set (as an arena launching it sets them).  Exits when the server ends the
stream.  Some are given a FAULT, for a process that plays many matches (a tournament's bot):

* ``crash``: exits abruptly (status 3), mid-match, 20 to 50 s after it started;
* ``hang``: 10 to 30 s after it started, stays connected and answers nothing more;
* ``late``: every 8th answer comes 400 ms late (past a 200 ms move: the bank pays, then the
  clock's timeouts);
* ``flood``: with every answer, 20 answers to requests that do not exist and the same answer
  again.

Given the clock of its matches (``MOVE_MS BANK_MS``), the process is taken to play one match
(a ladder launches a hosted version per match, on the arena's clock: ``soak.py``), and its
fault comes within that match:

* ``crash``: exits abruptly (status 3) after its 2nd to 6th answer;
* ``hang``: in one match of four, after its 5th to 8th answer, answers nothing more (its
  next move times out past the move and the whole bank, the later ones past the move);
* ``late``: in one match of four, one answer (its 3rd to 6th) comes past the move and the
  whole bank (a timeout: the referee plays the default, and the answer comes to a request
  that is over);
* ``flood``: as above.

A flooding bot says on stderr, when its stream ends, how many answers to requests that do not
exist it sent and how many errors the server answered.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import queue
import random
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

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


@dataclass
class Fault:
    """When the fault strikes: by the clock of a long-lived process, or, in a process that
    plays one match (``per_match``), by its answers."""

    kind: str
    crash_at: float = math.inf
    hang_at: float = math.inf
    #: In one match: the answer after which it crashes or hangs, the one that comes late.
    after: int = 0
    late_s: float = 0.0

    @classmethod
    def of(cls, argv: list[str], rng: random.Random) -> Fault:
        kind = argv[2] if len(argv) > 2 else ""
        if len(argv) <= 3:
            born = time.monotonic()
            return cls(kind, born + rng.uniform(20, 50), born + rng.uniform(10, 30))
        move_s, bank_s = int(argv[3]) / 1000, int(argv[4]) / 1000
        if kind not in ("crash", "hang", "late"):
            return cls(kind)
        if kind != "crash" and rng.random() >= 1 / 4:
            return cls("")  # not in this match
        after = {"crash": rng.randint(2, 6), "hang": rng.randint(5, 8), "late": rng.randint(3, 6)}
        return cls(kind, after=after[kind], late_s=move_s + bank_s + 1)

    @property
    def per_match(self) -> bool:
        return self.after > 0

    def crashes(self, now: float, answers: int) -> bool:
        return self.kind == "crash" and (now > self.crash_at or 0 < self.after <= answers)

    def hangs(self, now: float, answers: int) -> bool:
        return self.kind == "hang" and (now > self.hang_at or 0 < self.after <= answers)

    def lateness(self, answers: int) -> float:
        """How late answer number ``answers`` comes."""
        if self.kind != "late":
            return 0.0
        if self.per_match:
            return self.late_s if answers == self.after else 0.0
        return 0.4 if answers % 8 == 0 else 0.0


def main() -> None:
    think_s = int(sys.argv[1]) / 1000
    rng = random.Random()
    fault = Fault.of(sys.argv, rng)
    answers = bogus_sent = errors = 0
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
                kind = message.WhichOneof("kind")
                if kind == "error":
                    errors += 1
                if kind != "action_request":
                    continue
                now = time.monotonic()
                if fault.crashes(now, answers):
                    os._exit(3)
                if fault.hangs(now, answers):
                    continue
                request = message.action_request
                reply = pb.ActionReply(
                    request_id=request.request_id, action=choose(request.legal_actions)
                )
                answers += 1
                timers.at(now + think_s + fault.lateness(answers), pb.BotMessage(action=reply))
                if fault.kind == "flood":
                    for number in range(20):
                        bogus = pb.ActionReply(request_id=f"bogus-{number}", action=reply.action)
                        outbox.put(pb.BotMessage(action=bogus))
                    timers.at(now + think_s, pb.BotMessage(action=reply))
                    bogus_sent += 21
        except grpc.RpcError:
            pass  # the server went away: nothing more to think about
        outbox.put(None)
    if fault.kind == "flood":
        print(
            f"flood: {bogus_sent} answers to requests that do not exist sent, "
            f"{errors} errors answered",
            file=sys.stderr,
            flush=True,
        )


if __name__ == "__main__":
    main()
