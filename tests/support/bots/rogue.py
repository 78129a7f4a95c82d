"""A bot for the tests against a real server, speaking raw protobuf so it can misbehave on purpose.

Usage: ``rogue.py RECORD.jsonl [BEHAVIOUR ...]`` with ``BISCA_ADDRESS``/``BISCA_TOKEN`` set.
Every message it receives is appended to RECORD as one JSON line.  Behaviours:

* ``sleep_ms=N`` / ``sleep_on=K``: sleep N ms before answering (every request, or only the K-th);
* ``hold=PATH``: answer nothing until the file PATH exists (the test creates it when ready);
* ``illegal=N``: send N illegal actions before the legal one on every request;
* ``always_illegal``: only ever send illegal actions;
* ``never_answer``: read requests, answer none;
* ``crash_after=N``: exit abruptly after N answers;
* ``freeze_after=N``: SIGSTOP itself after N answers;
* ``stale_after=N``: after N answers, re-send an answer to the previous request (out of turn);
* ``garbage``: send bytes that are not a BotMessage right after the hello;
* ``oversized``: send a message over the server's size limit right after the hello;
* ``reconnect_after=N``: after N answers drop the connection and connect again with the token;
* ``protocol=N``: announce protocol version N.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import sys
import time

import grpc
from google.protobuf import json_format

from bisca.v1 import arena_pb2 as pb

record_path = sys.argv[1]
options: dict[str, str] = {}
for word in sys.argv[2:]:
    key, _, value = word.partition("=")
    options[key] = value

rng = random.Random(7)
answers = 0
sleep_ms = int(options.get("sleep_ms", "0"))
sleep_on = int(options["sleep_on"]) if "sleep_on" in options else None
hold = options.get("hold")


def record(message: pb.ServerMessage) -> None:
    with open(record_path, "a") as file:
        file.write(json.dumps(json_format.MessageToDict(message)) + "\n")


def illegal_action(request: pb.ActionRequest) -> pb.GameAction:
    """A card-play action that is not among the legal ones."""
    legal = {action.SerializeToString() for action in request.legal_actions}
    game = request.observation.WhichOneof("game")
    module = __import__(f"bisca.v1.{game}_pb2", fromlist=["Action"])
    for suit in range(1, 5):
        for rank in range(1, 11):
            card = module.Card(suit=suit, rank=rank)
            action = pb.GameAction(**{game: module.Action(play_card=module.PlayCard(card=card))})
            if action.SerializeToString() not in legal:
                return action
    raise AssertionError("every card is legal?")


def session(outbox: queue.Queue) -> str:
    """One connection; returns why it ended ("reconnect" or "done")."""
    global answers
    channel = grpc.insecure_channel(
        os.environ["BISCA_ADDRESS"], options=[("grpc.use_local_subchannel_pool", 1)]
    )
    play = channel.stream_stream(
        "/bisca.v1.Arena/Play",
        request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
        response_deserializer=pb.ServerMessage.FromString,
    )

    def outgoing():
        while True:
            item = outbox.get()
            if item is None:
                return
            yield item

    outbox.put(
        pb.BotMessage(
            hello=pb.Hello(
                token=os.environ["BISCA_TOKEN"],
                bot_name="rogue",
                bot_version="1",
                protocol_version=int(options.get("protocol", "1")),
                games=[pb.GAME_BELOTE, pb.GAME_BESTIA],
            )
        )
    )
    if "garbage" in options:
        outbox.put(b"\xff\xff\xff\xff not a protobuf")
    if "oversized" in options:
        outbox.put(pb.BotMessage(action=pb.ActionReply(request_id="x" * 100_000)))
    previous: pb.ActionRequest | None = None
    try:
        for message in play(outgoing()):
            record(message)
            kind = message.WhichOneof("kind")
            if kind != "action_request":
                continue
            request = message.action_request
            if "never_answer" in options:
                continue
            if "always_illegal" in options:
                outbox.put(
                    pb.BotMessage(
                        action=pb.ActionReply(
                            request_id=request.request_id, action=illegal_action(request)
                        )
                    )
                )
                continue
            if request.attempt == 1:
                for _ in range(int(options.get("illegal", "0"))):
                    outbox.put(
                        pb.BotMessage(
                            action=pb.ActionReply(
                                request_id=request.request_id, action=illegal_action(request)
                            )
                        )
                    )
            if request.attempt > 1 and "illegal" in options:
                continue  # the rejected attempts are already queued; the legal answer follows
            while hold and not os.path.exists(hold):
                time.sleep(0.01)
            if sleep_ms and (sleep_on is None or sleep_on == answers + 1):
                time.sleep(sleep_ms / 1000)
            outbox.put(
                pb.BotMessage(
                    action=pb.ActionReply(
                        request_id=request.request_id, action=rng.choice(request.legal_actions)
                    )
                )
            )
            answers += 1
            if previous is not None and options.get("stale_after") == str(answers - 1):
                outbox.put(
                    pb.BotMessage(
                        action=pb.ActionReply(
                            request_id=previous.request_id, action=previous.legal_actions[0]
                        )
                    )
                )
            previous = request
            if options.get("crash_after") == str(answers):
                time.sleep(0.2)
                os._exit(3)
            if options.get("freeze_after") == str(answers):
                time.sleep(0.2)
                os.kill(os.getpid(), signal.SIGSTOP)
            if options.get("reconnect_after") == str(answers):
                time.sleep(0.2)
                options.pop("reconnect_after")
                outbox.put(None)
                channel.close()
                return "reconnect"
    except grpc.RpcError as error:
        with open(record_path, "a") as file:
            file.write(
                json.dumps({"rpcError": {"code": error.code().name, "details": error.details()}})
                + "\n"
            )
    outbox.put(None)
    return "done"


while session(queue.Queue()) == "reconnect":
    pass
