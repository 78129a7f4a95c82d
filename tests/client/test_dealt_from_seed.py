"""The SDK deals again from the revealed seed: a server that committed to one seed and dealt
from another is caught (a hostile-server review: both SDKs said "deal verified" for it)."""

from __future__ import annotations

import pytest

from bisca import wire
from bisca.client._deal import start_dealt_from
from bisca.engine import GAMES
from bisca.v1 import arena_pb2


def _shown(game: str, seed: int, seat: int) -> dict[int, arena_pb2.GameEvent]:
    """The events a seat is shown at the start of a match dealt from ``seed``."""
    state = GAMES[game].new_match(GAMES[game].settings({}), seed)
    return {
        index: wire.encode_game_event(game, index, event)
        for index, (audience, event) in enumerate(state.all_events(0))
        if audience >> seat & 1
    }


@pytest.mark.parametrize("game", ["belote", "bestia"])
def test_a_start_dealt_from_the_committed_seed_passes(game: str) -> None:
    settings = GAMES[game].settings({})
    for seat in range(GAMES[game].seats(settings)):
        assert start_dealt_from(game, settings, 7, seat, _shown(game, 7, seat)) is None


@pytest.mark.parametrize("game", ["belote", "bestia"])
def test_a_start_dealt_from_another_seed_is_caught(game: str) -> None:
    settings = GAMES[game].settings({})
    why = start_dealt_from(game, settings, 7, 1, _shown(game, 999, 1))
    assert why is not None and "is not what seed 7 deals" in why


def test_a_start_event_never_sent_is_caught() -> None:
    settings = GAMES["belote"].settings({})
    shown = _shown("belote", 7, 1)
    del shown[max(shown)]
    why = start_dealt_from("belote", settings, 7, 1, shown)
    assert why is not None and "was never sent" in why
