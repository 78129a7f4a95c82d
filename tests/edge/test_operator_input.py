"""Operator requests (and ``bisca match`` options) the server cannot honour are refused,
naming the value."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from bisca.server.edge import operator
from bisca.server.errors import OperatorError
from bisca.server.referee import Referee
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb


def _create(tmp_path: Path, request: pb.CreateMatchRequest) -> pb.MatchInfo:
    store = Store.in_directory(tmp_path)
    for name in "abcd":
        store.bots.add(name)
    referee = Referee(store)

    async def scenario() -> pb.MatchInfo | OperatorError:
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            try:
                return await operator.create_match(referee, request)
            except OperatorError as refused:
                return refused
            finally:
                nursery.cancel_scope.cancel()

    result = trio.run(scenario)
    if isinstance(result, OperatorError):
        raise result
    return result


@pytest.mark.parametrize("seed", [2**63, 2**64 - 1])
def test_a_seed_the_store_cannot_keep_is_refused(tmp_path: Path, seed: int) -> None:
    request = pb.CreateMatchRequest(game=pb.GAME_BELOTE, bots=list("abcd"), seed=seed)
    with pytest.raises(OperatorError) as refused:
        _create(tmp_path, request)
    assert refused.value.status == "INVALID_ARGUMENT"
    assert f"seed {seed} is out of range" in refused.value.message


def test_an_unknown_timeout_policy_is_refused(tmp_path: Path) -> None:
    request = pb.CreateMatchRequest(
        game=pb.GAME_BELOTE, bots=list("abcd"), clock=pb.ClockSettings(policy=99)
    )
    with pytest.raises(OperatorError) as refused:
        _create(tmp_path, request)
    assert refused.value.status == "INVALID_ARGUMENT"
    assert "unknown timeout policy 99" in refused.value.message


def test_an_unspecified_timeout_policy_takes_the_servers(tmp_path: Path) -> None:
    info = _create(tmp_path, pb.CreateMatchRequest(game=pb.GAME_BELOTE, bots=list("abcd")))
    assert info.clock.policy == pb.TIMEOUT_POLICY_DEFAULT
