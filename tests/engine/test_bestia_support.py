"""Helpers of the Bestia tests (no tests here): stacked decks and short action names."""

from __future__ import annotations

from collections.abc import Iterable

from bisca.engine.bestia import (
    DECK,
    Assist,
    BestiaAction,
    BestiaCard,
    BestiaSettings,
    BestiaState,
    Call,
    Discard,
    Exchange,
    Fold,
    Open,
    Pass,
    PlayCard,
    Raise,
    Steal,
    card,
)

PASS = Pass()
RAISE = Raise()
CALL = Call()
FOLD = Fold()
STEAL = Steal()
OPEN = Open()
ASSIST = Assist()
STAND_PAT = Exchange(())


def cards(labels: str) -> list[BestiaCard]:
    """``"AD 7S"`` -> the cards, in the order written."""
    return [card(label) for label in labels.split()]


def exchange(labels: str) -> Exchange:
    return Exchange(tuple(cards(labels)))


def play(label: str) -> PlayCard:
    return PlayCard(card(label))


def discard(label: str) -> Discard:
    return Discard(card(label))


def stacked_deck(
    seats: int, dealer: int, hands: dict[int, str], turned: str, stock: str = ""
) -> list[BestiaCard]:
    """A deck order (first card dealt first) that deals ``hands[seat]`` (4 labels) to each seat
    given, turns ``turned``, and puts ``stock`` on top of the stock; every other card, in deck
    order, fills the other seats' hands and then the rest of the stock."""
    chosen = {seat: cards(labels) for seat, labels in hands.items()}
    on_top = cards(stock)
    used = [c for hand in chosen.values() for c in hand] + [card(turned), *on_top]
    assert len(set(used)) == len(used), "a card is used twice"
    assert all(len(hand) == 4 for hand in chosen.values())
    spare = [c for c in DECK if c not in used]
    for seat in range(seats):
        if seat not in chosen:
            chosen[seat], spare = spare[:4], spare[4:]
    deck: list[BestiaCard] = [card(turned)] * (4 * seats + 1)
    for i in range(seats):
        hand = chosen[(dealer + 1 + i) % seats]
        deck[2 * i], deck[2 * i + 1] = hand[0], hand[1]
        deck[2 * seats + 1 + 2 * i], deck[2 * seats + 2 + 2 * i] = hand[2], hand[3]
    return deck + on_top + spare


def stacked_match(
    settings: BestiaSettings,
    hands: dict[int, str],
    turned: str,
    stock: str = "",
    seed: int = 0,
) -> BestiaState:
    """A match whose first hand deals these cards (the dealer is ``settings.first_dealer``)."""
    deck = stacked_deck(settings.seats, settings.first_dealer, hands, turned, stock)
    return BestiaState.stacked(settings, [deck], seed)


def apply_all(state: BestiaState, actions: Iterable[BestiaAction]) -> None:
    for action in actions:
        state.apply(action)
