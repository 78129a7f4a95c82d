"""Bots for driving the referee without a network: a connection is two callables on the
referee's entry points, and what a bot says is scheduled through the trio token as the
transport schedules it."""

from __future__ import annotations

import trio

from bisca.server.referee import Referee
from bisca.v1 import arena_pb2 as pb

from .waiting import wait_until


def hello(token: str, *games: int) -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(token=token, protocol_version=1, games=list(games) or [pb.GAME_BELOTE])
    )


class AutoBot:
    """A connection that answers every action request with its first legal action (when
    ``playing``), and records everything it receives."""

    def __init__(self, referee: Referee, connection_id: str, *, playing: bool = True) -> None:
        self.referee = referee
        self.id = connection_id
        self.playing = playing
        self.received: list[pb.ServerMessage] = []
        self.closed = False
        self._token = trio.lowlevel.current_trio_token()
        referee.connection_opened(connection_id, self._receive, self._close)

    def say(self, message: pb.BotMessage) -> None:
        self._token.run_sync_soon(self.referee.message_received, self.id, message)

    def disconnect(self) -> None:
        self.closed = True
        self._token.run_sync_soon(self.referee.connection_closed, self.id)

    def _close(self) -> None:
        if not self.closed:
            self.disconnect()

    def _receive(self, data: bytes) -> None:
        if self.closed:
            return
        message = pb.ServerMessage.FromString(data)
        self.received.append(message)
        if self.playing and message.WhichOneof("kind") == "action_request":
            request = message.action_request
            self.say(
                pb.BotMessage(
                    action=pb.ActionReply(
                        request_id=request.request_id, action=request.legal_actions[0]
                    )
                )
            )

    def of_kind(self, kind: str) -> list[pb.ServerMessage]:
        return [m for m in self.received if m.WhichOneof("kind") == kind]


async def connect(referee: Referee, names: list[str], **options: bool) -> dict[str, AutoBot]:
    """One welcomed AutoBot per name, with one-time tokens."""
    bots = {}
    for name in names:
        bot = bots[name] = AutoBot(referee, f"conn-{name}", **options)
        bot.say(hello(referee.add_ephemeral_bot(name)))
    await wait_until(lambda: all(bot.of_kind("welcome") for bot in bots.values()))
    return bots
