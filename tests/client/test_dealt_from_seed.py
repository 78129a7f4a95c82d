"""The SDK deals again from the revealed seed: a server that committed to one seed and dealt
from another is caught (a hostile-server review: both SDKs said "deal verified" for it), and so
is each way review 37 found to show the seat other cards all the same: a rigged copy of an
event sent before an honest one, a start event meant for another seat, a Bestia seat's rigged
first look at its cards, a Belote request whose hand is not the dealt one."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest

from bisca import wire
from bisca.client._deal import ShownStart, start_dealt_from
from bisca.engine import GAMES, MatchState, bestia
from bisca.v1 import arena_pb2, belote_pb2, bestia_pb2
from bisca.v1 import arena_pb2 as pb
from tests.support.arena import Arena
from tests.support.commands import sample_bot
from tests.support.waiting import poll_until

from .support import a_card_not_in

#: A length-delimited field number 99 (no message here has one) of 100,000 bytes.
UNKNOWN_100K = b"\x9a\x06" + b"\xa0\x8d\x06" + bytes(100_000)


def _events(game: str, seed: int, seat: int, **settings: Any) -> list[arena_pb2.GameEvent]:
    """The events a seat is shown at the start of a match dealt from ``seed``."""
    state = GAMES[game].new_match(GAMES[game].settings(settings), seed)
    return [
        wire.encode_game_event(game, index, event)
        for index, (audience, event) in enumerate(state.all_events(0))
        if audience >> seat & 1
    ]


def _shown(events: list[arena_pb2.GameEvent]) -> ShownStart:
    shown = ShownStart()
    for event in events:
        shown.show(event)
    return shown


def _played_until_seat_looks(
    seed: int, seat: int, *, steal: bool = False
) -> tuple[MatchState, list[Any]]:
    """A 5-seat Bestia match played (first legal action each time; with ``steal``, the
    dealer steals the turned trump) until ``seat`` was shown its first look at its cards;
    every event ``seat`` was shown until then."""
    game = GAMES["bestia"]
    state = game.new_match(game.settings({"seats": 5}), seed)
    while not any(
        type(event).__name__ == "HandLooked" and audience >> seat & 1
        for audience, event in state.all_events(0)
    ):
        legal = state.legal_actions()
        stealing = [action for action in legal if isinstance(action, bestia.Steal)]
        state.apply(stealing[0] if steal and stealing else legal[0])
    return state, [
        wire.encode_game_event("bestia", index, event)
        for index, (audience, event) in enumerate(state.all_events(0))
        if audience >> seat & 1
    ]


@pytest.mark.parametrize("game", ["belote", "bestia"])
def test_a_start_dealt_from_the_committed_seed_passes(game: str) -> None:
    settings = GAMES[game].settings({})
    for seat in range(GAMES[game].seats(settings)):
        assert start_dealt_from(game, settings, 7, seat, _shown(_events(game, 7, seat))) is None


@pytest.mark.parametrize("game", ["belote", "bestia"])
def test_a_start_dealt_from_another_seed_is_caught(game: str) -> None:
    settings = GAMES[game].settings({})
    why = start_dealt_from(game, settings, 7, 1, _shown(_events(game, 999, 1)))
    assert why is not None and "is not what seed 7 deals" in why


def test_a_start_event_never_sent_is_caught() -> None:
    settings = GAMES["belote"].settings({})
    why = start_dealt_from("belote", settings, 7, 1, _shown(_events("belote", 7, 1)[:-1]))
    assert why is not None and "was never sent" in why


def test_the_first_copy_of_an_event_counts_and_a_different_one_later_fails() -> None:
    """Rigged cards shown, played from, then the honest ones sent again (in the end): the
    copy the bot saw first is the one checked."""
    settings = GAMES["belote"].settings({})
    rigged, honest = _events("belote", 999, 1), _events("belote", 7, 1)
    why = start_dealt_from("belote", settings, 7, 1, _shown(rigged + honest))
    assert why is not None and "was sent twice, with different content" in why
    # The same copy again (a replay after a reconnect) is fine.
    assert start_dealt_from("belote", settings, 7, 1, _shown(honest + honest)) is None


def test_unknown_fields_in_an_honest_event_are_not_compared() -> None:
    """A newer, honest server may add a field: a bot that does not know it still verifies."""
    settings = GAMES["belote"].settings({})
    events = _events("belote", 7, 1)
    events[0].MergeFromString(b"\x9a\x06\x03new")  # field 99, three bytes: unknown here
    assert start_dealt_from("belote", settings, 7, 1, _shown(events)) is None


def test_a_start_event_the_seat_is_not_shown_fails_when_sent_to_it() -> None:
    """Another seat's cards, sent to seat 1 at that seat's index (the bot's hooks would see a
    second hand of its own)."""
    settings = GAMES["belote"].settings({})
    state = GAMES["belote"].new_match(settings, 7)
    index, (_, others) = next(
        (index, entry)
        for index, entry in enumerate(state.all_events(0))
        if not entry[0] >> 1 & 1 and entry[0]
    )
    extra = wire.encode_game_event("belote", index, others)
    why = start_dealt_from("belote", settings, 7, 1, _shown([*_events("belote", 7, 1), extra]))
    assert why == f"event {index} was sent, but seat 1 is not shown it"


@pytest.mark.parametrize("seat", [0, 1, 2, 3, 4])
def test_a_bestia_seats_first_look_at_its_cards_is_checked(seat: int) -> None:
    """The blind round decides when a seat looks, the seed which cards it sees: its dealt
    four (the dealer's, with the turned trump when it stole it)."""
    settings = GAMES["bestia"].settings({"seats": 5})
    for seed in range(40):  # some of them end the first hand before this seat looks
        _, honest = _played_until_seat_looks(seed, seat)
        assert start_dealt_from("bestia", settings, seed, seat, _shown(honest)) is None
    _, honest = _played_until_seat_looks(3, seat)
    _, rigged = _played_until_seat_looks(999, seat)
    [rigged_look] = [e for e in rigged if e.bestia.WhichOneof("event") == "hand_looked"]
    looked = [e for e in honest if e.bestia.WhichOneof("event") != "hand_looked"]
    rigged_look.index = max(e.index for e in looked) + 1
    why = start_dealt_from("bestia", settings, 3, seat, _shown([*looked, rigged_look]))
    assert why is not None and f"the cards seat {seat} looked at are not what seed 3" in why


def _first_request(seed: int, seat: int, *, take: bool) -> arena_pb2.ActionRequest:
    """Seat ``seat``'s first request of a Belote match dealt from ``seed``: every move before
    it the first legal one, or, with ``take``, the first seat asked takes (the later seats are
    then first asked to play, holding eight cards)."""
    state = GAMES["belote"].new_match(GAMES["belote"].settings({}), seed)
    while state.to_act != seat:
        legal = state.legal_actions()
        takes = [action for action in legal if type(action).__name__ == "Take"]
        state.apply(takes[0] if take and takes else legal[0])
    observation = wire.encode_game_observation("belote", state.observation(seat))
    return arena_pb2.ActionRequest(observation=observation)


def _verdict(seat: int, request: arena_pb2.ActionRequest) -> str | None:
    shown = _shown(_events("belote", 7, seat))
    shown.ask(request)
    return start_dealt_from("belote", GAMES["belote"].settings({}), 7, seat, shown)


@pytest.mark.parametrize("take", [False, True])
def test_a_belote_first_request_with_another_hand_fails(take: bool) -> None:
    """Honest events, but the observation the bot plays from holds other cards; asked in the
    bidding (five cards) or, after a take, to play (eight, which the taker decides)."""
    played = 0
    for seat in range(4):
        honest = _first_request(7, seat, take=take)
        played += len(honest.observation.belote.hand) == 8
        assert _verdict(seat, honest) is None
        rigged = arena_pb2.ActionRequest()
        rigged.CopyFrom(honest)
        hand = rigged.observation.belote.hand
        hand[0].CopyFrom(_first_request(999, seat, take=take).observation.belote.hand[0])
        if hand[0] != honest.observation.belote.hand[0]:
            why = _verdict(seat, rigged)
            assert why is not None and why.startswith(f"the hand in seat {seat}'s first request")
    assert played == (3 if take else 0)


def test_a_belote_first_request_cannot_escape_the_check_by_its_phase() -> None:
    """A rigged hand in an observation that says the play has begun: its moves are replayed
    on the deal, and they do not lead there."""
    request = _first_request(999, 1, take=False)
    request.observation.belote.phase = belote_pb2.PHASE_PLAYING
    why = _verdict(1, request)
    assert why is not None and why.startswith("the hand in seat 1's first request")


def test_unknown_fields_in_the_first_request_are_not_compared() -> None:
    request = _first_request(7, 2, take=False)
    request.observation.belote.hand[0].MergeFromString(b"\x9a\x06\x03new")
    assert _verdict(2, request) is None


def test_a_first_look_or_request_too_big_to_keep_fails() -> None:
    settings = GAMES["bestia"].settings({"seats": 5})
    _, events = _played_until_seat_looks(3, 1)
    [look] = [e for e in events if e.bestia.WhichOneof("event") == "hand_looked"]
    look.MergeFromString(UNKNOWN_100K)  # 100,000 unknown bytes
    why = start_dealt_from("bestia", settings, 3, 1, _shown(events))
    assert (
        why is not None and why.endswith(f"{look.ByteSize():,} bytes were sent") and "looked" in why
    )
    request = _first_request(7, 1, take=False)
    request.observation.belote.MergeFromString(UNKNOWN_100K)
    why = _verdict(1, request)
    assert why is not None and why.endswith("bytes were sent") and "first request" in why


def test_a_hand_started_sent_again_does_not_end_the_first_hand() -> None:
    """An identical re-send of the first ``HandStarted`` (a replay) is still the first hand: a
    rigged look after it is checked."""
    settings = GAMES["bestia"].settings({"seats": 5})
    _, honest = _played_until_seat_looks(3, 1)
    _, rigged = _played_until_seat_looks(999, 1)
    [rigged_look] = [e for e in rigged if e.bestia.WhichOneof("event") == "hand_looked"]
    before = [e for e in honest if e.bestia.WhichOneof("event") != "hand_looked"]
    [again] = [e for e in before if e.bestia.WhichOneof("event") == "hand_started"]
    rigged_look.index = max(e.index for e in before) + 1
    why = start_dealt_from("bestia", settings, 3, 1, _shown([*before, again, rigged_look]))
    assert why is not None and "the cards seat 1 looked at" in why


def test_a_bestia_dealer_who_stole_the_trump_looks_at_five_cards_and_verifies() -> None:
    settings = GAMES["bestia"].settings({"seats": 5})
    stole = 0
    for seed in range(40):
        state, honest = _played_until_seat_looks(seed, 0, steal=True)
        dealer = next(e for _, e in state.all_events(0) if isinstance(e, bestia.HandStarted))
        [look] = [e for e in honest if e.bestia.WhichOneof("event") == "hand_looked"]
        if dealer.dealer == 0 and len(look.bestia.hand_looked.cards) == 5:
            stole += 1
        assert start_dealt_from("bestia", settings, seed, 0, _shown(honest)) is None
    assert stole, "no match where seat 0 dealt and stole: the case is not covered"


@pytest.mark.parametrize(
    ("game", "settings"),
    [
        ("belote", pb.GameSettings(belote=belote_pb2.Settings(deals=2, duplicate=True))),
        ("bestia", pb.GameSettings(bestia=bestia_pb2.Settings(seats=5, rounds=1))),
    ],
)
def test_python_bots_verify_the_deal_of_an_honest_match(
    arena: Arena, game: str, settings: pb.GameSettings
) -> None:
    """A real server's match: every Python bot (greedy and random, events inside its requests
    or live) checks the start, its first look and its first request, and says "deal
    verified"."""
    names, logs = [], []
    seats = settings.bestia.seats if game == "bestia" else 4
    for seat in range(seats):
        name, token = arena.register(f"py-deal-{game}")
        names.append(name)
        logs.append(arena.tmp / f"bot-{len(arena.bots)}.stderr.log")
        options = ["--live-events"] if seat % 2 else []
        bot = "greedy" if seat % 3 == 0 else "random"
        arena.launch(token, *sample_bot(bot, game, log_level="INFO"), *options)
    match_id = arena.create(game, names, settings=settings, seed=2**63 - 25)
    info = arena.wait(match_id, timeout=60)
    assert info.status == pb.MATCH_STATUS_FINISHED, info.reason
    for log in logs:
        line = poll_until(f"{log.name} logs the match's end", partial(_end_line, log, match_id))
        assert line.endswith("; deal verified"), line
        assert " ERROR " not in log.read_text(), log.read_text()[-3000:]


def _end_line(log: Path, match_id: str) -> str | None:
    """The line a Python bot logs at the end of ``match_id``, once there."""
    for line in log.read_text().splitlines():
        if f"match {match_id} " in line and ("finished" in line or "FINISHED" in line):
            return line
    return None


def _asked_after_looking(seed: int, seat: int) -> tuple[list[Any], arena_pb2.ActionRequest] | None:
    """The events seat ``seat`` of a 5-seat Bestia match was shown until its first request
    after it looked at its cards in the first hand, and that request (``None``: the first hand
    ended before it was asked again)."""
    state, _ = _played_until_seat_looks(seed, seat)
    while state.to_act != seat:
        if state.is_over or state.observation(seat).hand_number != 0:
            return None
        state.apply(state.legal_actions()[0])
    if state.observation(seat).hand_number != 0:
        return None
    events = [
        wire.encode_game_event("bestia", index, event)
        for index, (audience, event) in enumerate(state.all_events(0))
        if audience >> seat & 1
    ]
    observation = wire.encode_game_observation("bestia", state.observation(seat))
    return events, arena_pb2.ActionRequest(observation=observation)


def test_a_bestia_request_after_the_look_with_another_hand_fails() -> None:
    """Honest events, an honest look, but another card in the hand the bot plays from (its
    first request after the look)."""
    settings = GAMES["bestia"].settings({"seats": 5})
    compared = 0
    for seed in range(30):
        for seat in range(5):
            asked = _asked_after_looking(seed, seat)
            if asked is None:
                continue
            events, request = asked
            shown = _shown(events)
            shown.ask(request)
            assert start_dealt_from("bestia", settings, seed, seat, shown) is None
            hand = request.observation.bestia.hand
            hand[0].CopyFrom(a_card_not_in(hand))
            rigged = _shown(events)
            rigged.ask(request)
            why = start_dealt_from("bestia", settings, seed, seat, rigged)
            assert why is not None and f"seat {seat}'s first request after it looked" in why
            compared += 1
    assert compared > 10
