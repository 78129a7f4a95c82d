"""A spectator may not watch a finished match over gRPC ``WatchMatch`` while its
duplicate-deal twin is still played: the public view of a finished Belote match shows every
card each seat played and the turned card, the whole deal of the twin.  Refused
(PERMISSION_DENIED, naming the twin), as ``GetMatch`` seals the seed and the web's replay
answers 403.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import grpc

from bisca.server.edge import ServerConfig, opened_watch, running_server
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.support.served import asked_match

SEED = 424242
ADMIN = [("authorization", "Bearer admin")]


async def _play(address: str, token: str) -> None:
    """A bot playing its last legal action (it bids, so cards are played) until its match ends."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        await call.write(
            pb.BotMessage(hello=pb.Hello(token=token, protocol_version=1, games=[pb.GAME_BELOTE]))
        )
        while (message := await call.read()) is not grpc.aio.EOF:
            kind = message.WhichOneof("kind")
            if kind == "action_request":
                request = message.action_request
                await call.write(
                    pb.BotMessage(
                        action=pb.ActionReply(
                            request_id=request.request_id, action=request.legal_actions[-1]
                        )
                    )
                )
            elif kind == "match_ended":
                break
        call.cancel()


def test_a_spectator_cannot_watch_the_finished_twin_of_a_deal_still_played(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        config = ServerConfig(data_dir=tmp_path, listen=["127.0.0.1:0"], admin_token="admin")
        async with running_server(config) as server:
            names = [f"b{n}" for n in range(4)]
            tokens = [server.store.bots.add(name) for name in names]
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = arena_pb2_grpc.ArenaStub(channel)
                settings = pb.GameSettings()
                settings.belote.deals = 1

                def create() -> pb.CreateMatchRequest:
                    return pb.CreateMatchRequest(
                        game=pb.GAME_BELOTE,
                        settings=settings,
                        seed=SEED,
                        bots=names,
                        join_timeout_ms=120_000,
                    )

                finished = (await stub.CreateMatch(create(), metadata=ADMIN)).match_id
                await asyncio.wait_for(
                    asyncio.gather(*(_play(server.address, t) for t in tokens)), 120
                )
                for _ in range(600):
                    info = await stub.GetMatch(
                        pb.GetMatchRequest(match_id=finished), metadata=ADMIN
                    )
                    if info.status == pb.MATCH_STATUS_FINISHED:
                        break
                    await asyncio.sleep(0.1)
                assert info.status == pb.MATCH_STATUS_FINISHED, info
                # Its twin: dealt from the same seed, waiting for its bots (so not over).
                twin = (await stub.CreateMatch(create(), metadata=ADMIN)).match_id
                info = await stub.GetMatch(pb.GetMatchRequest(match_id=finished), metadata=ADMIN)
                assert info.seed_sealed and info.seed == 0, "the deal is sealed by the rule"

                spectator = [("authorization", f"Bearer {server.spectator_token}")]
                shown: list[str] = []
                try:
                    async for update in stub.WatchMatch(
                        pb.WatchMatchRequest(match_id=finished), metadata=spectator
                    ):
                        if update.WhichOneof("kind") == "events":
                            for watched in update.events.events:
                                event = watched.event.belote
                                kind = event.WhichOneof("event")
                                if kind == "card_played":
                                    shown.append(
                                        f"seat {event.card_played.seat}: "
                                        f"{event.card_played.card}".replace("\n", " ")
                                    )
                                elif kind == "card_turned":
                                    shown.append(f"turned: {event.card_turned}".replace("\n", " "))
                except grpc.aio.AioRpcError as refused:
                    print("refused:", refused.code(), refused.details())
                assert shown == [], (
                    f"while {twin} is played with the same deal, a spectator of {finished} was "
                    f"shown {len(shown)} cards of that deal, e.g. {shown[:5]}"
                )

    asyncio.run(scenario())


def test_a_watch_its_client_left_while_it_opened_leaves_no_watcher(tmp_path: Path) -> None:
    """The spectator's call is cancelled while its watch is being opened in trio (the client
    gone): the watcher opened meanwhile is stopped at once, not fed until the match ends."""

    async def scenario() -> None:
        config = ServerConfig(data_dir=tmp_path, listen=["127.0.0.1:0"], admin_token="admin")
        async with running_server(config) as server, asked_match(server, "idle") as runner:
            request = pb.WatchMatchRequest(match_id=runner.id)
            for _ in range(5):
                opening = asyncio.ensure_future(
                    opened_watch(server.guest, server.referee, request, lambda update: None)
                )
                for _ in range(3):  # (started: its call is on its way into trio)
                    await asyncio.sleep(0)
                opening.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await opening
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 10
            while runner.audience.watchers and loop.time() < deadline:
                await asyncio.sleep(0.01)
            assert runner.audience.watchers == []

    asyncio.run(scenario())
