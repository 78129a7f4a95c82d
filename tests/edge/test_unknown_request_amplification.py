"""A welcomed bot that never reads may not make the server hold many times what it sends:
the answer to a reply naming no open request repeats at most a short part of the request id
(it once quoted a 60,000-character id twice, once through ``repr``: ~300 KB an answer, ~3 GB
for a stream at the 10,000-message cap), and the unread answers of a stream are capped in
bytes as well as in number (``MAX_UNSENT_BYTES``).

Run against an in-process server; what is measured is the bytes in the stream's outbox.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc

from bisca.server.edge import ServerConfig, running_server
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.support.refusals import ENDLESS_REFUSALS

SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 4096)]
SENT = 60
#: A request id just under the referee's 64 KiB limit, of characters ``repr`` writes as 4.
BULKY = pb.BotMessage(action=pb.ActionReply(request_id="\x01" * 60_000))


def _outbox_of(send: object) -> asyncio.Queue:  # the transport's queue behind ``send``
    for cell in send.__closure__ or ():  # type: ignore[attr-defined]
        if isinstance(cell.cell_contents, asyncio.Queue):
            return cell.cell_contents
    raise AssertionError("no outbox")


def test_answers_a_bot_does_not_read_are_bounded_by_what_it_sent(tmp_path: Path) -> None:
    async def scenario() -> None:
        config = ServerConfig(
            data_dir=tmp_path, listen=["127.0.0.1:0"], admin_token="admin", options=ENDLESS_REFUSALS
        )
        async with running_server(config) as server:
            token = server.store.bots.add("deaf")
            referee = server.referee
            async with grpc.aio.insecure_channel(server.address, options=SMALL_WINDOW) as channel:
                call = arena_pb2_grpc.ArenaStub(channel).Play()
                await call.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=1)))
                assert (await call.read()).WhichOneof("kind") == "welcome"
                (connection,) = referee.online["deaf"]
                send = connection.write
                outbox = _outbox_of(send)
                answered = 0

                def counted(message: bytes) -> None:  # what the referee answers, counted
                    nonlocal answered
                    answered += 1
                    send(message)

                connection.write = counted
                for _ in range(SENT):
                    await call.write(BULKY)
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 60
                # Every message answered: what the bot has not read of the answers (all but
                # the few its receive window took) waits in the outbox.
                while answered < SENT and loop.time() < deadline:
                    await asyncio.sleep(0.05)
                assert answered == SENT, f"{answered} of {SENT} messages answered"
                held = sum(len(m) for m in list(outbox._queue) if isinstance(m, bytes))  # type: ignore[attr-defined]
                sent = SENT * BULKY.ByteSize()
                print(
                    f"bot sent {sent} bytes; server holds {held} bytes in "
                    f"{outbox.qsize()} unread answers"
                )
                call.cancel()
                assert held <= sent, (
                    f"the server holds {held / sent:.1f}x what the bot sent it "
                    f"({held} bytes for {sent}); at the 10,000-message cap that is "
                    f"{held // outbox.qsize() * 10_000 / 1e9:.1f} GB for one stream"
                )

    asyncio.run(scenario())
