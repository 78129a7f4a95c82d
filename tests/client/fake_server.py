"""A scripted stand-in for the referee's Play RPC, for testing the SDK's gRPC plumbing.

Each connection runs ``script(fake, number, requests, context)``, a generator of server
messages; the fake records every Hello and ActionReply it reads.  The real referee's tests are
in tests/referee; these only check that the SDK moves messages and reconnects.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc

from bisca.v1 import arena_pb2, arena_pb2_grpc

Script = Callable[["FakeArena", int, Iterator[arena_pb2.BotMessage], Any], Iterator[Any]]


class FakeArena(arena_pb2_grpc.ArenaServicer):
    def __init__(self, script: Script) -> None:
        self.script = script
        self.hellos: list[arena_pb2.Hello] = []
        self.replies: list[arena_pb2.ActionReply] = []
        self.connected = threading.Event()
        self._lock = threading.Lock()

    def Play(  # the generated servicer's method name
        self, request_iterator: Iterator[arena_pb2.BotMessage], context: Any
    ) -> Iterator[arena_pb2.ServerMessage]:
        first = next(request_iterator)
        with self._lock:
            self.hellos.append(first.hello)
            number = len(self.hellos)
        self.connected.set()
        yield from self.script(self, number, request_iterator, context)

    def read_reply(self, requests: Iterator[arena_pb2.BotMessage]) -> arena_pb2.ActionReply:
        message = next(requests)
        with self._lock:
            self.replies.append(message.action)
        return message.action


def welcome() -> arena_pb2.ServerMessage:
    return arena_pb2.ServerMessage(
        welcome=arena_pb2.Welcome(protocol_version=1, bot_name="bot", connection_id="c1")
    )


def serve(fake: FakeArena, address: str) -> grpc.Server:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    register: Any = arena_pb2_grpc.add_ArenaServicer_to_server  # generated, unannotated
    register(fake, server)
    server.add_insecure_port(address)
    server.start()
    return server


def socket_address(directory: Path) -> str:
    return f"unix:{directory / 'arena.sock'}"
