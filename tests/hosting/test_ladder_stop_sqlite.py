"""A served ladder (``bisca serve --ladder`` on a SQLite league) stopped as SIGTERM stops it
(``bisca serve`` leaves ``ladder_running``, then stops the arena) while a pairing is half
played: its first rotation finished, the second waits for its bots (operator re-test,
defect E).  Every rotation of the pairing is over afterwards: the finished one as it was, the
others failed with the stop's reason (not played, no match failed), none left waiting."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from bisca.server.edge import ServerConfig
from bisca.server.hosting import ladder_running
from bisca.server.league import SERVER_STOPPED_ROTATION
from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.referee import ServerOptions
from bisca.server.sandbox import BotProcess, SandboxPolicy
from bisca.server.store import Store, open_store
from bisca.server.tournament import running_arena
from tests.support.league import LADDER_ACCOUNTS, on_rotation_end, one_pairing_ladder
from tests.support.waiting import loop_until

pytestmark = pytest.mark.system

#: A bot that starts and never connects: the second rotation waits for its bots until the stop
#: (a slow bot's start, as the operator's was when the server stopped).
NEVER_CONNECTS = [sys.executable, "-c", "import time; time.sleep(600)"]
#: Long enough that the waiting rotation never fails by itself before the stop.
JOIN_TIMEOUT_S = 600.0


def _deal(store: Store, seed: int) -> list[MatchRecord]:
    return store.matches.find(None, None, game="belote", seed=seed)


def test_a_stop_closes_every_rotation_of_the_pairing_in_play(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"

    async def scenario() -> tuple[MatchRecord, list[str]]:
        config = ServerConfig(
            data_dir=data,
            listen=["127.0.0.1:0"],
            admin_token="t" * 32,
            options=ServerOptions(join_timeout=JOIN_TIMEOUT_S),
        )
        async with running_arena(config, SandboxPolicy(enabled=False)) as (server, launcher):
            store = server.referee.store
            ladder = one_pairing_ladder(store, tmp_path)
            finished: list[MatchRecord] = []  # the first rotation, as its end left it
            on_rotation_end(ladder, finished.append)
            launch = launcher.process
            stalled: list[BotProcess] = []  # the seats launched after the first rotation

            def launch_stalled_once_one_finished(
                argv: list[str], token: str, log_prefix: Path, **options: object
            ) -> BotProcess:
                if not finished:
                    return launch(argv, token, log_prefix, **options)  # type: ignore[arg-type]
                process = launch(NEVER_CONNECTS, token, log_prefix, **options)  # type: ignore[arg-type]
                stalled.append(process)
                return process

            monkeypatch.setattr(launcher, "process", launch_stalled_once_one_finished)

            def second_rotation_waits() -> bool:
                runners = server.referee.matches.values()
                waiting = [r for r in runners if r.status is MatchStatus.WAITING]
                return len(stalled) == len(LADDER_ACCOUNTS) and len(waiting) == 1

            async with ladder_running(ladder, server, launcher):
                await loop_until(
                    second_rotation_waits, "the second rotation waiting for its bots", 180
                )
            seed = finished[0].seed
            # Before the arena stops: what the ladder left after its own stop.
            left_waiting = [m.id for m in _deal(store, seed) if m.status is MatchStatus.WAITING]
        return finished[0], left_waiting

    before, left_waiting = asyncio.run(scenario())
    assert before.status is MatchStatus.FINISHED
    assert not left_waiting, "no rotation left waiting by the ladder's stop"
    # After the server stopped, as the next start (or an operator) reads the store.
    with open_store(None, data) as store:
        deal = _deal(store, before.seed)
        after = store.matches.get(before.id)
    assert after == before, "the finished rotation's result is untouched"
    assert len(deal) == 4
    others = [(m.status, m.reason) for m in deal if m.id != before.id]
    assert others == [(MatchStatus.FAILED, SERVER_STOPPED_ROTATION)] * 3, others
