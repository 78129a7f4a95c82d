"""A person's table on a league open to strangers: the sample bots and the operator's own
registered bots may sit at it; a league's versions (strangers' bots, hosted or connected)
play where the ladder seats them only — a stranger cannot keep another owner's bot busy at a
table of their own, nor deal it hands at will (a real ``bisca serve``, a connected version
online as a sample bot process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bisca.server.store import AccountStatus, Store
from tests.support.arena import stop_arena
from tests.support.league import open_ladder_league
from tests.support.waiting import poll_until

from .support import app_url, call

pytestmark = pytest.mark.system


@pytest.mark.parametrize("suspended", [False, True], ids=["active", "suspended"])
def test_a_leagues_connected_version_is_never_seated_at_a_persons_table(
    tmp_path: Path, suspended: bool
) -> None:
    data = tmp_path / "data"
    arena = open_ladder_league(tmp_path, data, ["ada"], ["--ladder", "poll_s=3600"])
    try:
        url = app_url(arena)
        if suspended:
            with Store(data / "bisca.sqlite3") as store:
                store.accounts.set_status("ada", AccountStatus.SUSPENDED)
        house, token = arena.register("house")
        arena.sample_bot(token, "greedy", "belote")
        # No cookie, no token: anybody who reaches the app.
        seats = ["", "adabot.v1", "greedy", "greedy"]
        request = {"game": "GAME_BELOTE", "settings": {"belote": {"deals": 1}}, "bots": seats}

        def seat_ada() -> tuple[int, str] | None:
            status, answer = call(f"{url}/api/tables", {"request": request})
            offline = status == 409 and "connected now" in str(answer)
            return None if offline else (status, str(answer))

        # Once ada's version has dialled in (its sample bot process), a table is asked for it.
        status, answer = poll_until("ada's version is online", seat_ada)
        assert status == 409 and "'adabot.v1' is a version of a league's account" in answer

        def listed() -> list[str] | None:
            status, bots = call(f"{url}/api/tables/bots?game=belote")
            assert status == 200, bots
            online: list[str] = bots["online"]
            return online if house in online else None

        assert "adabot.v1" not in poll_until("the operator's bot is online", listed)
        seats[1] = house  # the operator's own registered bot still sits
        status, table = call(f"{url}/api/tables", {"request": request})
        assert status == 201, table
    finally:
        stop_arena(arena)
