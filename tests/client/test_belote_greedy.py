"""The greedy Belote bot's decisions on hand-built positions."""

from __future__ import annotations

import dataclasses
from typing import Any

from bisca.client import Request
from bisca.client.bots.belote_greedy import greedy, take_strength
from bisca.engine.belote import (
    BeloteCard,
    BeloteState,
    CardPlayed,
    Pass,
    Phase,
    PlayCard,
    Suit,
    Take,
    Trick,
    card,
)

from .support import request_for


def cards(labels: str) -> list[BeloteCard]:
    return [card(label) for label in labels.split()]


def bid(hand: str, turned: str, round_number: int = 1) -> Any:
    """The greedy bid with ``hand`` and the turned card ``turned``."""
    request = request_for(BeloteState(seed=0))
    turned_card = card(turned)
    legal: tuple[Any, ...]
    if round_number == 1:
        phase, legal = Phase.BIDDING_ROUND_1, (Pass(), Take(turned_card.suit))
    else:
        phase = Phase.BIDDING_ROUND_2
        legal = (Pass(), *(Take(suit) for suit in Suit if suit != turned_card.suit))
    observation = dataclasses.replace(
        request.observation, phase=phase, hand=tuple(cards(hand)), turned_card=turned_card
    )
    return greedy(dataclasses.replace(request, observation=observation, legal_actions=legal))


def position(
    hands: list[str], trump: Suit, leader: int, trick: str = "", taker: int = 0
) -> Request[Any, Any]:
    state = BeloteState.from_position(
        hands=[cards(hand) for hand in hands],
        trump=trump,
        taker=taker,
        leader=leader,
        trick=cards(trick) if trick else (),
    )
    return request_for(state)


# ---- bidding ---------------------------------------------------------------------------------


def test_takes_the_turned_suit_with_the_jack_and_three_trumps() -> None:
    # The turned 7♠ joins the taker's hand: J♠ 8♠ 7♠ are three trumps.
    assert bid("JS 8S AH 7D 8C", "7S") == Take(Suit.SPADES)


def test_takes_with_the_nine_two_trumps_and_two_side_aces() -> None:
    # 9♠ 10♠ (24 trump points) + two side aces (20) reach the threshold of 44.
    assert bid("9S AH AD 7C 8C", "10S") == Take(Suit.SPADES)


def test_passes_without_the_jack_or_nine_of_the_proposed_trump() -> None:
    assert bid("AS 10S KS AH AD", "QS") == Pass()


def test_passes_with_a_lone_jack_and_nothing_else() -> None:
    assert bid("JS 7H 8D 7C 8C", "7S") == Pass()


def test_round_two_takes_the_strongest_qualifying_suit() -> None:
    # Hearts: J 9 7 (three trumps); diamonds: J 8 only; the turned spade cannot be taken.
    assert bid("JH 9H 7H JD 8D", "8S", round_number=2) == Take(Suit.HEARTS)
    # Both qualify; diamonds (J 9 = 34, + the turned A♠ = 44) beat hearts (J 8 7 = 20 + 10).
    assert take_strength(cards("JH 8H 7H JD 9D AS"), Suit.HEARTS) == 30
    assert take_strength(cards("JH 8H 7H JD 9D AS"), Suit.DIAMONDS) == 44
    assert bid("JH 8H 7H JD 9D", "AS", round_number=2) == Take(Suit.DIAMONDS)


def test_round_two_passes_with_a_weak_hand() -> None:
    assert bid("7H 8H 10D KC QC", "JS", round_number=2) == Pass()


# ---- card play -------------------------------------------------------------------------------


def test_wins_with_the_cheapest_winning_card() -> None:
    # Seat 3 led 7♥; seat 0 wins with 8♥ rather than K♥ or A♥.
    request = position(["8H KH AH 7C", "7D 8D", "9D 10D", "QD KD"], Suit.SPADES, 3, "7H")
    assert greedy(request) == PlayCard(card("8H"))


def test_cheapest_winner_is_the_fewest_points_not_the_lowest_rank_that_wins() -> None:
    # K♥ led: 10♥ (10 points) and A♥ (11) win; 8♥ does not.
    request = position(["8H 10H AH 7C", "7D 8D", "9D 10D", "QD JD"], Suit.SPADES, 3, "KH")
    assert greedy(request) == PlayCard(card("10H"))


def test_wins_with_the_lowest_trump_when_it_must_trump() -> None:
    request = position(["JS 7S 9S AD", "7D 8D", "9D 10D", "QD KD"], Suit.SPADES, 3, "AH")
    assert greedy(request) == PlayCard(card("7S"))


def test_does_not_overtake_a_partner_who_is_winning() -> None:
    # Partner (seat 2) leads K♥, seat 3 follows 7♥; seat 0 could win with A♥ but throws 8♥.
    request = position(["AH 8H 7C", "7D 8D", "9D 10D", "QD KD"], Suit.SPADES, 2, "KH 7H")
    assert greedy(request) == PlayCard(card("8H"))


def test_throws_the_least_valuable_card_when_it_cannot_win() -> None:
    request = position(["KH QH 8H 7C", "7D 8D", "9D 10D", "QD KD"], Suit.SPADES, 3, "AH")
    assert greedy(request) == PlayCard(card("8H"))


def test_leads_a_master_card_when_it_has_one() -> None:
    request = position(["AD 7C 8H JS", "7D 8D", "9D 10D", "QD KD"], Suit.SPADES, 0)
    assert greedy(request) == PlayCard(card("AD"))


def test_a_ten_is_master_once_the_ace_of_its_suit_was_played() -> None:
    request = position(["10D 7C 8H JS", "7D 8D", "9D KD", "QD JD"], Suit.SPADES, 0)
    assert greedy(request) == PlayCard(card("7C"))  # A♦ is still out: no master
    played = (
        CardPlayed(1, card("AD")),
        CardPlayed(2, card("7H")),
        CardPlayed(3, card("9H")),
        CardPlayed(0, card("QH")),
    )
    observation = dataclasses.replace(request.observation, tricks=(Trick(0, 1, played, 1, 14),))
    assert greedy(dataclasses.replace(request, observation=observation)) == PlayCard(card("10D"))


def test_leads_its_least_valuable_card_without_a_master() -> None:
    # K♦ is not master (A♦ and 10♦ are out); 7♣ and 8♥ are worth nothing, 7♣ is lower.
    request = position(["KD 7C 8H JS", "7D 8D", "9D 10D", "QD AD"], Suit.SPADES, 0)
    assert greedy(request) == PlayCard(card("7C"))
