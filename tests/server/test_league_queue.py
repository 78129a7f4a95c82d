"""The league's queue while a round of matches is formed."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from bisca.engine import GAMES
from bisca.server.league import Matchmaker
from bisca.server.referee import Referee, ServerOptions
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb

from .support import AutoBot, hello, wait_until


def test_a_bot_that_leaves_while_a_league_round_is_formed_is_not_matched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight bots wait: two Belote matches in one round.  One of them disconnects while the
    first match is being recorded; the second match is not formed with it."""
    store = Store.in_directory(tmp_path)
    tokens = {f"bot{n}": store.add_bot(f"bot{n}") for n in range(8)}
    create = store.create_match
    left: list[str] = []

    async def scenario() -> None:
        referee = Referee(store, ServerOptions(hello_timeout=30))
        trio_token = trio.lowlevel.current_trio_token()

        def create_while_one_leaves(match_id: str, game: str, *args: object, **kw: object) -> None:
            if not left:  # the first match: a bot it does not seat leaves meanwhile
                bots: list[str] = args[2]  # type: ignore[assignment]
                leaving = next(name for name in tokens if name not in bots)
                left.append(leaving)
                trio.from_thread.run_sync(
                    referee.connection_closed, f"conn-{leaving}", trio_token=trio_token
                )
            create(match_id, game, *args, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(store, "create_match", create_while_one_leaves)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            for name, token in tokens.items():
                AutoBot(referee, f"conn-{name}", playing=False).say(hello(token, pb.GAME_BELOTE))
            await wait_until(lambda: len(referee.online) == 8)
            matchmaker = Matchmaker(referee, {"belote": GAMES["belote"].settings({"deals": 1})})
            await matchmaker.form_matches()  # one round
            seated = [bot for runner in referee.matches.values() for bot in runner.bots]
            assert left and left[0] not in seated
            assert matchmaker.formed == 1
            nursery.cancel_scope.cancel()

    trio.run(scenario)
