"""Whether the cards a seat was shown came from the seed the server committed to.

The commitment (``MatchStarted.deal_commitment``, opened by ``MatchEnded``) proves only that
the seed revealed at the end was fixed before the first card: a server could still commit to
one seed and deal from another.  The engine deals from a seed alone (its own SplitMix64
generator, the same in every version), so the bot deals again from the revealed seed and
compares what it was shown before anyone acted: the events the engine gives its seat at the
start of the match (Belote: its first five cards and the turned card; Bestia: the ante and the
turned trump: a seat looks at its cards only after the blind round, which depends on the
players' moves).  Later deals depend on the moves too (and on hidden cards: discards, other
hands), so a bot cannot deal them again on its own; the match's log can
(``bisca replay verify``), for whoever holds it.
"""

from __future__ import annotations

from collections.abc import Mapping

from bisca import wire
from bisca.engine import GAMES, Settings
from bisca.v1 import arena_pb2

#: The events of a match kept for the check, by index: those before the first action are
#: among the first few (6 in Belote, 8 in Bestia at 5 seats), the rest are not kept.
KEPT_EVENTS = 32
#: The largest event kept for the check: the start's events a seat is shown are tens of bytes
#: (38 at most, both games, every seat count); a bigger one is not one of them, and only its
#: size is kept (a server's events could otherwise fill the memory of the deal check).
MAX_KEPT_EVENT_BYTES = 16 * 1024


def start_dealt_from(
    game: str,
    settings: Settings,
    seed: int,
    seat: int,
    received: Mapping[int, arena_pb2.GameEvent],
    oversized: Mapping[int, int] | None = None,
) -> str | None:
    """``None`` when every event the engine gives ``seat`` before the first action of a match
    dealt from ``seed`` is the one the server sent with that index; else what differs."""
    not_a_seat = seat_outside(game, settings, seat)
    if not_a_seat is not None:
        return not_a_seat
    state = GAMES[game].new_match(settings, seed)
    for index, (audience, event) in enumerate(state.all_events(0)):
        if not audience >> seat & 1:
            continue
        expected = wire.encode_game_event(game, index, event)
        if oversized and index in oversized:
            return (
                f"event {index} is not what seed {seed} deals: {oversized[index]:,} bytes were sent"
            )
        sent = received.get(index)
        if sent is None:
            return f"event {index} of the start ({type(event).__name__}) was never sent"
        if sent != expected:
            return f"event {index} is not what seed {seed} deals: {_short(sent)} was sent"
    return None


def seat_outside(game: str, settings: Settings, seat: int) -> str | None:
    """Why ``seat`` is no seat of such a match (``None``: it is one).  A seat outside the
    table is shown no card of the start, so nothing would be compared: not a start that holds."""
    seats = GAMES[game].seats(settings)
    return (
        None if 0 <= seat < seats else f"seat {seat} is not a seat of a {seats}-seat {game} match"
    )


def _short(event: arena_pb2.GameEvent) -> str:
    text = " ".join(str(event).split())
    return text if len(text) <= 200 else text[:200] + "..."
