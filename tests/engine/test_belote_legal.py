"""Hand-built positions, one per legal-card duty of the Belote rules page, each asserting the
exact legal set.  Trump is hearts throughout; seat 0 is to play and seat 2 is its partner."""

import pytest

from bisca.engine import IllegalActionError
from bisca.engine.belote import BeloteCard, BeloteState, PlayCard, Suit, card


def legal_cards(hand: str, trick: str, leader: int) -> set[str]:
    """The legal cards of seat 0 holding ``hand`` after ``leader`` and the seats after it
    played ``trick``."""
    played = [card(label) for label in trick.split()]
    hands: list[list[BeloteCard]] = [[card(label) for label in hand.split()], [], [], []]
    state = BeloteState.from_position(
        hands=hands, trump=Suit.HEARTS, taker=1, leader=leader, trick=played
    )
    assert state.to_act == 0
    legal = state.legal_actions()
    for action in legal:
        assert state.why_illegal(action) is None
    return {action.card.label for action in legal if isinstance(action, PlayCard)}


def labels(text: str) -> set[str]:
    return {card(label).label for label in text.split()}


# (duty, seat 0's hand, the trick so far, its leader, the exact legal set)
POSITIONS = [
    ("leading: any card", "7S AS 9H JD", "", 0, "7S AS 9H JD"),
    ("plain led, holds the suit: any card of it, no duty to win", "7S AS 9H", "KS", 3, "7S AS"),
    ("plain led, void, opponent winning: must trump", "7D 8H JH", "KS", 3, "8H JH"),
    # Seat 1 K♠, seat 2 (partner) 9♠, seat 3 trumps with 10♥.
    ("void, opponent trumped: overtrump when able", "7D 8H AH JH", "KS 9S 10H", 1, "AH JH"),
    ("void, opponent's trump unbeatable: any trump", "7D 8H QH", "KS 9S 9H", 1, "8H QH"),
    ("void, no trump in hand: any card", "7D 8C AD", "KS 9S 9H", 1, "7D 8C AD"),
    # Partner's A♠ wins; no trump in the trick, so every trump counts as higher.
    ("partner winning with a plain card: any card", "7D 8H JH", "9S AS 10S", 1, "7D 8H JH"),
    # Partner trumped with 10♥: plain cards, or a trump higher than his (A♥), not 8♥.
    ("partner winning with a trump I can beat", "7D 8H AH 7C", "9S 10H 10S", 1, "7D AH 7C"),
    (
        "partner winning with a trump I cannot beat: anything",
        "7D 8H QH",
        "9S JH 10S",
        1,
        "7D 8H QH",
    ),
    ("trump led, holds higher trumps: only those", "7H 9H AS", "10H", 3, "9H"),
    ("trump led, no higher trump: any trump", "7H 8H AS", "JH", 3, "7H 8H"),
    ("trump led, no trump in hand: any card", "7S AS 9D", "JH", 3, "7S AS 9D"),
    # K♥ led, partner's 10♥ is highest so far, 8♥ under it: beat the 10♥.
    ("trump led and overtrumped: beat the highest trump", "QH AH 7S", "KH 10H 8H", 1, "AH"),
    ("second to play, void, opponent led: must trump", "7D 8H", "AS", 3, "8H"),
    # Seat 1 9♠, partner K♠, seat 3 A♠ now winning.
    ("partner played but an opponent wins: must trump", "7D 8H", "9S KS AS", 1, "8H"),
    # Partner (seat 2) led A♠, seat 3 followed 7♠; seat 0 plays third.
    ("partner led and is winning: free discard", "7D 8C 9H", "AS 7S", 2, "7D 8C 9H"),
]


@pytest.mark.parametrize(
    ("duty", "hand", "trick", "leader", "expected"), POSITIONS, ids=[p[0] for p in POSITIONS]
)
def test_legal_set(duty: str, hand: str, trick: str, leader: int, expected: str) -> None:
    assert legal_cards(hand, trick, leader) == labels(expected)


def _position(hand: str, trick: str, leader: int) -> BeloteState:
    return BeloteState.from_position(
        hands=[[card(label) for label in hand.split()], [], [], []],
        trump=Suit.HEARTS,
        taker=1,
        leader=leader,
        trick=[card(label) for label in trick.split()],
    )


def test_illegal_cards_name_the_duty() -> None:
    following = _position("7S 8H", "KS 9S 10S", 1)
    with pytest.raises(IllegalActionError, match="follow suit"):
        following.apply(PlayCard(card("8H")))
    void = _position("7D 8H AH", "KS 9S 10H", 1)
    with pytest.raises(IllegalActionError, match="higher than every trump"):
        void.apply(PlayCard(card("8H")))
    with pytest.raises(IllegalActionError, match="play a trump"):
        void.apply(PlayCard(card("7D")))
    with pytest.raises(IllegalActionError, match="does not hold"):
        void.apply(PlayCard(card("JH")))
    trump_led = _position("7H 9H", "10H", 3)
    with pytest.raises(IllegalActionError, match="higher than every trump"):
        trump_led.apply(PlayCard(card("7H")))
    events = void.event_count
    void.apply(PlayCard(card("AH")))
    assert void.event_count > events


def test_the_legal_list_is_in_the_order_received_with_one_documented_exception() -> None:
    """``docs/rules/belote.md``, "Order of the legal list": cards in the order the seat
    received them, except a seat void in the plain suit led while its partner wins, which
    lists its plain cards first, then its trumps (review 52 found the page silent on it)."""

    def order(hand: str, trick: str, leader: int) -> list[str]:
        played = [card(label) for label in trick.split()]
        hands: list[list[BeloteCard]] = [[card(label) for label in hand.split()], [], [], []]
        state = BeloteState.from_position(
            hands=hands, trump=Suit.HEARTS, taker=1, leader=leader, trick=played
        )
        return [a.card.label for a in state.legal_actions() if isinstance(a, PlayCard)]

    def said(text: str) -> list[str]:
        return [card(label).label for label in text.split()]

    received = "10S KH AS JH AC"
    assert order(received, "", 0) == said(received)
    # Void in diamonds, an opponent winning: every trump, in the order received.
    assert order(received, "KD", 3) == said("KH JH")
    # The same, partner (seat 2) winning: the plain cards first, then the trumps.
    assert order(received, "AD 7D", 2) == said("10S AS AC KH JH")
