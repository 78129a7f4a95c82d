"""The greedy Bestia bot's decisions on hand-built positions."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from bisca.client import Request
from bisca.client.bots.bestia_greedy import greedy
from bisca.engine.bestia import (
    Assist,
    BestiaCard,
    CardPlayed,
    Discard,
    Exchange,
    Fold,
    Open,
    Pass,
    Phase,
    PlayCard,
    Suit,
    Trick,
    card,
)

from .support import advance, request_for, to_act

COINS, SWORDS = Suit.COINS, Suit.SWORDS


def cards(labels: str) -> tuple[BestiaCard, ...]:
    return tuple(card(label) for label in labels.split())


def request_in(phase: Phase, seed: int = 1) -> Request[Any, Any]:
    return request_for(
        advance("bestia", seed, lambda state: state.observation(to_act(state)).phase is phase)
    )


def with_view(request: Request[Any, Any], legal: Any = None, **view: Any) -> Request[Any, Any]:
    """``request`` with its observation's fields ``view`` replaced (and its legal actions)."""
    observation = dataclasses.replace(request.observation, **view)
    legal_actions = request.legal_actions if legal is None else tuple(legal)
    return dataclasses.replace(request, observation=observation, legal_actions=legal_actions)


# ---- blind decisions and declarations --------------------------------------------------------


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        (Phase.BUIO, Pass()),
        (Phase.BUIO_CALL, Fold()),
        (Phase.CONTROBUIO, Pass()),
        (Phase.CONTROBUIO_CALL, Fold()),
        (Phase.RUBATA, Pass()),
    ],
)
def test_stays_out_of_every_blind_decision(phase: Phase, expected: Any) -> None:
    assert greedy(request_in(phase)) == expected


@pytest.mark.parametrize(
    ("hand", "opens"),
    [
        ("AD KD 2S 3B", True),  # two strong trumps
        ("QD 2D 5S 3B", False),  # one strong trump only
        ("2D 4D 6D 3B", True),  # three trumps
        ("AS AB KC QS", False),  # strong cards, but no trump
    ],
)
def test_opens_with_two_strong_trumps_or_three_trumps(hand: str, opens: bool) -> None:
    request = with_view(request_in(Phase.OPENING), hand=cards(hand), trump=COINS)
    assert greedy(request) == (Open() if opens else Pass())


@pytest.mark.parametrize(
    ("hand", "assists"),
    [("KD 2S 3B 4C", True), ("7D 2D AS AB", False)],
)
def test_assists_with_one_strong_trump(hand: str, assists: bool) -> None:
    request = with_view(request_in(Phase.ASSISTING), hand=cards(hand), trump=COINS)
    assert greedy(request) == (Assist() if assists else Pass())


# ---- exchanging ------------------------------------------------------------------------------


def test_exchanges_every_card_but_its_trumps_and_aces() -> None:
    hand = cards("2D AS 5C JB")
    legal = [Exchange(tuple(c)) for size in range(5) for c in itertools.combinations(hand, size)]
    request = with_view(request_in(Phase.EXCHANGE), legal, hand=hand, trump=COINS)
    assert greedy(request) == Exchange(cards("5C JB"))


def test_stands_pat_with_trumps_and_aces_only() -> None:
    hand = cards("2D AS AC 7D")
    legal = [Exchange(tuple(c)) for size in range(5) for c in itertools.combinations(hand, size)]
    request = with_view(request_in(Phase.EXCHANGE), legal, hand=hand, trump=COINS)
    assert greedy(request) == Exchange(())


def test_a_dealer_who_stole_discards_its_lowest_plain_card() -> None:
    hand = cards("2D 5S 3C AB KD")
    legal = [Discard(c) for c in hand]
    request = with_view(request_in(Phase.DEALER_DISCARD), legal, hand=hand, trump=COINS)
    assert greedy(request) == Discard(card("3C"))


# ---- card play -------------------------------------------------------------------------------


def playing(
    hand: str,
    legal: str,
    trick: list[tuple[int, str]],
    seat: int = 0,
    turned: str = "4D",
    stolen: bool = False,
) -> Request[Any, Any]:
    """A playing request of ``seat`` with ``hand``, coins trump, ``trick`` on the table."""
    request = request_in(Phase.PLAYING)
    plays = tuple(CardPlayed(player, card(label)) for player, label in trick)
    tricks = (Trick(0, trick[0][0], plays, None),) if trick else ()
    return dataclasses.replace(
        with_view(
            request,
            [PlayCard(c) for c in cards(legal)],
            seat=seat,
            hand=cards(hand),
            trump=COINS,
            tricks=tricks,
            stolen=stolen,
            turned_cards=cards(turned),
        ),
        seat=seat,
    )


def test_wins_a_trick_with_the_cheapest_card_that_wins_it() -> None:
    request = playing("5S QS AS 2D", "5S QS AS", [(1, "7S"), (2, "JS")])
    assert greedy(request) == PlayCard(card("QS"))


def test_trumps_with_its_lowest_trump_when_void() -> None:
    request = playing("2D KD 5C", "2D KD", [(1, "AS")])
    assert greedy(request) == PlayCard(card("2D"))


def test_overtrumps_cheaply_or_throws_its_lowest_card() -> None:
    request = playing("3D KD 5C", "3D KD", [(1, "AS"), (2, "5D")])
    assert greedy(request) == PlayCard(card("KD"))
    request = playing("3S 6S", "3S 6S", [(1, "AS")])
    assert greedy(request) == PlayCard(card("3S"))


def test_leads_a_master_trump_before_a_master_plain_card() -> None:
    # A♦ is the highest coin: master.  A♠ is master too, but a trump wins whatever follows.
    assert greedy(playing("AD AS 2C", "AD AS 2C", [])) == PlayCard(card("AD"))
    # With no master at all it leads its lowest plain card.
    assert greedy(playing("KD 2C 3S", "KD 2C 3S", [])) == PlayCard(card("2C"))


def test_a_turned_card_left_on_the_table_counts_as_seen() -> None:
    # The A♦ was turned and stays face up: K♦ is master.  Stolen, it is in the dealer's hand.
    assert greedy(playing("KD 2C 3S", "KD 2C 3S", [], turned="AD")) == PlayCard(card("KD"))
    stolen = playing("KD 2C 3S", "KD 2C 3S", [], turned="AD", stolen=True)
    assert greedy(stolen) == PlayCard(card("2C"))
