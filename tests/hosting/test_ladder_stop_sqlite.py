"""A served ladder (``bisca serve --ladder`` on a SQLite league) stopped as SIGTERM stops it
(``bisca serve`` leaves ``ladder_running``, then stops the arena) while a pairing is half
played: its first rotation finished, the second waits for its bots (operator re-test,
defect E).  Every rotation of the pairing is over afterwards: the finished one as it was, the
others failed with the stop's reason (not played, no match failed), none left waiting."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

import pytest

from bisca.engine import GAMES
from bisca.server.edge import ServerConfig
from bisca.server.hosting import Ladder, ladder_running
from bisca.server.league import SERVER_STOPPED_ROTATION, LadderSettings
from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.referee import ServerOptions
from bisca.server.sandbox import BotProcess, SandboxPolicy
from bisca.server.store import Store, open_store
from bisca.server.tournament import running_arena
from tests.support.league import PASSWORD, active_version, starter_bot
from tests.support.waiting import loop_until

pytestmark = pytest.mark.system

NAMES = ("ada", "bob", "cy", "dee")
ONE_DEAL = {"belote": GAMES["belote"].settings({"deals": 1})}
#: One pairing only: once its first rotation is over every version is at its pace.
ONE_PAIRING = LadderSettings(matches_per_hour=1, newcomer_matches=1, duplicate=True, poll_s=0.2)
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
            uploads = data / "submissions"
            for name in NAMES:
                store.accounts.create(name, PASSWORD)
                active_version(store, uploads, name, starter_bot(tmp_path / f"{name}bot"))
            ladder = Ladder(store, uploads, ONE_DEAL, ONE_PAIRING, random.Random(9))
            finished: list[MatchRecord] = []  # the first rotation, as its end left it
            keep = ladder.keep_stderr

            def keep_and_note(match_id: str, match_dir: Path, seats: list[int]) -> None:
                keep(match_id, match_dir, seats)
                record = store.matches.get(match_id)
                assert record is not None
                finished.append(record)

            ladder.keep_stderr = keep_and_note  # type: ignore[method-assign]
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
                return len(stalled) == len(NAMES) and len(waiting) == 1

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
