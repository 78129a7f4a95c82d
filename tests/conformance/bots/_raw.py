"""The loop of the deliberately broken bots: raw protobuf over one Play stream at a time.

Each broken bot is a few lines that say how to answer an ``ActionRequest`` (a list of
``BotMessage`` values or raw bytes to send); everything else is done right here, so every bot
fails for its one reason only: it says a proper Hello with ``BISCA_TOKEN``, reconnects when the
server drops the stream (``UNAVAILABLE``), and exits when the server closes it cleanly.
"""

from __future__ import annotations

import os
import queue
import sys
import time
from collections.abc import Callable, Iterator

import grpc

from bisca.v1 import arena_pb2 as pb

Outgoing = pb.BotMessage | bytes
Answer = Callable[[pb.ActionRequest], list[Outgoing]]

RECONNECTS = 20


def _serialize(message: Outgoing) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def _session(address: str, token: str, answer: Answer) -> bool:
    """One connection; ``True`` when the server dropped it (reconnect), ``False`` when done."""
    outbox: queue.SimpleQueue[Outgoing | None] = queue.SimpleQueue()
    outbox.put(
        pb.BotMessage(
            hello=pb.Hello(
                token=token,
                bot_name=os.path.basename(sys.argv[0]).removesuffix(".py"),
                bot_version="1",
                protocol_version=pb.PROTOCOL_VERSION_CURRENT,
                games=[pb.GAME_BELOTE, pb.GAME_BESTIA],
            )
        )
    )

    def outgoing() -> Iterator[Outgoing]:
        while (item := outbox.get()) is not None:
            yield item

    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream(
            "/bisca.v1.Arena/Play",
            request_serializer=_serialize,
            response_deserializer=pb.ServerMessage.FromString,
        )
        try:
            for message in play(outgoing()):
                if message.WhichOneof("kind") == "action_request":
                    for item in answer(message.action_request):
                        outbox.put(item)
        except grpc.RpcError as error:
            print(f"stream failed: {error.code()}", file=sys.stderr, flush=True)
            return error.code() == grpc.StatusCode.UNAVAILABLE
        finally:
            outbox.put(None)
    return False


def run(answer: Answer) -> None:
    address = os.environ["BISCA_ADDRESS"]
    token = os.environ["BISCA_TOKEN"]
    for _ in range(RECONNECTS):
        if not _session(address, token, answer):
            return
        time.sleep(0.05)


def reply(request: pb.ActionRequest, action: pb.GameAction, request_id: str = "") -> pb.BotMessage:
    return pb.BotMessage(
        action=pb.ActionReply(request_id=request_id or request.request_id, action=action)
    )
