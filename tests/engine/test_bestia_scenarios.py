"""Hand-built Bestia scenarios, each pinning one rule of the rules page."""

from __future__ import annotations

import random

import pytest

from bisca.engine import Card
from bisca.engine.bestia import (
    BestiaCard,
    BestiaSettings,
    BestiaState,
    Blind,
    BlindMove,
    CardBurnt,
    CardsDealt,
    Declaration,
    Declared,
    Discard,
    Discarded,
    Exchange,
    HandDealt,
    HandEnd,
    HandEnded,
    HandLooked,
    HandStarted,
    MatchEnded,
    Phase,
    PotSplit,
    RefillSource,
    StockRefilled,
    Suit,
    TrumpStolen,
    TrumpTurned,
    card,
)

from .battery import cards_in
from .test_bestia_battery import check_invariants
from .test_bestia_support import (
    ASSIST,
    CALL,
    FOLD,
    OPEN,
    PASS,
    RAISE,
    STAND_PAT,
    STEAL,
    apply_all,
    cards,
    discard,
    exchange,
    play,
    stacked_deck,
    stacked_match,
)

FIVE = BestiaSettings(seats=5, stake=10)


def _dealt(state: BestiaState, seat: int) -> set[BestiaCard]:
    """The cards ``seat`` was dealt in the current hand (from the omniscient record)."""
    deal = [e for _, e in state.all_events() if isinstance(e, HandDealt)][-1]
    return set(deal.cards[4 * seat : 4 * seat + 4])


def _cards_sent_to(state: BestiaState, seat: int, start: int = 0) -> set[Card]:
    """Every card mentioned by an event ``seat`` received from index ``start`` on."""
    return {c for e in state.events_for(seat, start) for c in cards_in(e)}


def _void_hand(state: BestiaState) -> None:
    """Everyone declines everything until the hand ends (void after the third trump)."""
    number = state.hand_number
    while state.hand_number == number and not state.is_over:
        state.apply(PASS)


# ---- blind raises -------------------------------------------------------------------------


def test_buio_with_folds_and_the_blind_seats_see_no_card() -> None:
    state = BestiaState(FIVE, seed=3)
    assert state.phase is Phase.BUIO and state.to_act == 1 and state.pot == 50
    for seat in range(5):
        view = state.observation(seat)
        assert view.hand == () and not view.looked and view.hand_sizes == (4,) * 5
        assert _cards_sent_to(state, seat) == set(state.turned)
    state.apply(RAISE)
    assert state.pot == 60 and state.balances[1] == -20
    assert state.phase is Phase.BUIO_CALL and state.to_act == 2
    folded = _dealt(state, 2) | _dealt(state, 4)
    apply_all(state, [FOLD, CALL, FOLD, CALL])  # seats 2, 3, 4, 0
    assert state.pot == 80
    assert state.balances == [-20, -20, -10, -20, -10]
    assert state.in_hand == [True, True, False, True, False]
    assert set(state.folded_pile) == folded and state.hands[2] == state.hands[4] == []
    assert [m.move for m in state.observation(0).blind] == [
        Blind.BUIO,
        Blind.FOLD,
        Blind.CALL,
        Blind.FOLD,
        Blind.CALL,
    ]
    # The controbuio belongs to the next seat still in after the seat after the dealer.
    assert state.phase is Phase.CONTROBUIO and state.to_act == 3
    assert all(state.observation(seat).hand == () for seat in range(5))


def test_controbuio_answered_by_all_others_still_in_then_no_rubata_for_a_folded_dealer() -> None:
    state = BestiaState(FIVE, seed=4)
    apply_all(state, [RAISE, FOLD, CALL, FOLD, CALL])
    state.apply(RAISE)  # seat 3's controbuio
    assert state.phase is Phase.CONTROBUIO_CALL and state.pot == 90
    assert state.to_act == 0  # after seat 3: seat 4 folded, then the dealer
    state.apply(FOLD)
    assert state.to_act == 1  # the buio's seat answers the controbuio too
    state.apply(CALL)
    assert state.pot == 100 and state.in_hand == [False, True, False, True, False]
    assert state.observation(3).blind[-3:] == (
        BlindMove(3, Blind.CONTROBUIO, 10),
        BlindMove(0, Blind.FOLD, 0),
        BlindMove(1, Blind.CALL, 10),
    )
    # The dealer folded: no rubata; the seats still in look and the declaration starts.
    assert state.phase is Phase.OPENING and state.to_act == 1
    looked = [e.seat for _, e in state.all_events() if isinstance(e, HandLooked)]
    assert looked == [1, 3]
    assert set(state.observation(1).hand) == _dealt(state, 1)
    assert state.observation(0).hand == () and not state.observation(0).looked


def test_only_one_controbuio_chance_and_none_without_a_buio() -> None:
    state = BestiaState(FIVE, seed=5)
    apply_all(state, [RAISE, CALL, CALL, CALL, CALL])
    assert state.phase is Phase.CONTROBUIO and state.to_act == 2
    state.apply(PASS)  # seat 2 declines: nobody else may raise
    assert state.phase is Phase.RUBATA and state.to_act == 0
    assert state.pot == 100

    state = BestiaState(FIVE, seed=5)
    state.apply(PASS)  # no buio: no controbuio either
    assert state.phase is Phase.RUBATA and state.pot == 50


def test_lone_survivor_takes_the_pot_without_anyone_looking() -> None:
    state = BestiaState(FIVE, seed=6)
    start = state.event_count
    apply_all(state, [RAISE, FOLD, FOLD, FOLD, FOLD])
    ended = [e for e in state.public_events(start) if isinstance(e, HandEnded)]
    assert ended[0].result.end is HandEnd.LONE_SURVIVOR
    assert ended[0].result.taker == 1 and ended[0].result.taken == 60
    assert ended[0].result.balances == (-10, 40, -10, -10, -10)
    assert not [e for _, e in state.all_events(start) if isinstance(e, HandLooked)]
    # The deal passes; the pot was emptied, so everybody antes again.
    assert state.hand_number == 1 and state.dealer == 1 and state.pot == 50
    assert state.phase is Phase.BUIO and state.to_act == 2


def test_lone_survivor_after_a_controbuio() -> None:
    state = BestiaState(FIVE, seed=7)
    apply_all(state, [RAISE, CALL, FOLD, FOLD, FOLD])  # seats 1 and 2 remain
    assert state.phase is Phase.CONTROBUIO and state.to_act == 2
    apply_all(state, [RAISE, FOLD])  # seat 1 folds to the controbuio
    result = state.results[-1]
    assert result.end is HandEnd.LONE_SURVIVOR and result.taker == 2 and result.taken == 80
    assert result.balances == (-10, -20, 50, -10, -10)


# ---- rubata ---------------------------------------------------------------------------------


def test_rubata_the_dealer_steals_opens_skips_the_exchange_and_discards_one() -> None:
    hands = {0: "2C 3C 4C 5C", 1: "AS KS QS JS", 2: "2B 3B 4B 5B", 3: "AB KB QB JB"}
    state = stacked_match(FIVE, hands, turned="AD", stock="7S 6S 5S 4S")
    state.apply(PASS)  # no buio
    assert state.phase is Phase.RUBATA and state.to_act == 0
    assert state.observation(0).hand == ()
    state.apply(STEAL)
    assert state.stolen and state.opener == 0
    assert state.hands[0] == cards("AD 2C 3C 4C 5C")
    assert TrumpStolen(0, card("AD")) in state.public_events()
    assert state.observation(0).hand == tuple(cards("AD 2C 3C 4C 5C"))
    assert state.observation(3).turned_cards == (card("AD"),) and state.trump is Suit.COINS
    # The others, from the seat after the dealer, assist or pass.
    assert state.phase is Phase.ASSISTING and state.to_act == 1
    apply_all(state, [ASSIST, PASS, ASSIST, PASS])
    assert state.assistants == [1, 3] and state.in_hand == [True, True, False, True, False]
    # The accomodo skips the dealer.
    assert state.phase is Phase.EXCHANGE and state.to_act == 1
    state.apply(STAND_PAT)
    assert state.to_act == 3
    state.apply(exchange("JB"))
    assert set(state.hands[3]) == set(cards("AB KB QB 7S"))
    # Then the dealer discards one card of its 5.
    assert state.phase is Phase.DEALER_DISCARD and state.to_act == 0
    assert state.legal_actions() == [discard(label) for label in ["AD", "2C", "3C", "4C", "5C"]]
    state.apply(discard("2C"))
    assert state.dealer_discard == card("2C") and len(state.hands[0]) == 4
    assert Discarded(0, (card("2C"),)) in state.events_for(0)
    for seat in range(1, 5):
        assert card("2C") not in _cards_sent_to(state, seat)
        assert card("2C") not in set(state.observation(seat).hand)
    # The opener leads the first trick.
    assert state.phase is Phase.PLAYING and state.to_act == 0
    check_invariants(state)


def test_no_rubata_on_a_changed_trump() -> None:
    state = BestiaState(BestiaSettings(seats=4, blind_raises=False), seed=8)
    assert state.phase is Phase.RUBATA
    apply_all(state, [PASS] * 5)  # no steal; seats 1, 2, 3, 0 pass
    assert len(state.turned) == 2
    assert state.phase is Phase.OPENING and state.to_act == 1
    assert STEAL not in state.legal_actions()


# ---- declaration ------------------------------------------------------------------------


def test_second_and_third_trump_stay_visible() -> None:
    settings = BestiaSettings(seats=5, blind_raises=False)
    state = stacked_match(settings, {}, turned="2D", stock="3C 4S")
    state.apply(PASS)  # no rubata
    apply_all(state, [PASS] * 5)
    assert state.turned == cards("2D 3C") and state.trump is Suit.CUPS
    assert TrumpTurned(card("3C"), 2) in state.public_events()
    assert state.phase is Phase.OPENING and state.to_act == 1
    apply_all(state, [PASS] * 5)
    assert state.turned == cards("2D 3C 4S") and state.trump is Suit.SWORDS
    apply_all(state, [PASS, OPEN])  # seat 2 opens on the third trump
    view = state.observation(4)
    assert view.turned_cards == tuple(cards("2D 3C 4S")) and view.trump is Suit.SWORDS
    assert view.declarations[-1] == Declared(2, Declaration.OPEN, 3)
    assert state.phase is Phase.ASSISTING and state.to_act == 3


def test_void_hand_keeps_the_pot_and_passes_the_deal() -> None:
    state = BestiaState(FIVE, seed=9)
    state.apply(PASS)  # no buio
    state.apply(PASS)  # no rubata
    apply_all(state, [PASS] * 15)  # three trumps, nobody opens
    assert state.results[-1].end is HandEnd.VOID and state.results[-1].pot == 50
    assert state.balances == [-10] * 5
    # The deal passes with the pot: no ante into a pot that is not empty, no blind raise.
    assert state.hand_number == 1 and state.dealer == 1 and state.pot == 50
    assert state.phase is Phase.RUBATA and state.to_act == 1


def test_dealer_ante_mode_the_new_dealer_pays_on_a_pot_that_is_not_empty() -> None:
    state = BestiaState(BestiaSettings(seats=4, ante_mode="dealer"), seed=10)
    assert state.pot == 10 and state.balances == [-10, 0, 0, 0]
    assert state.phase is Phase.BUIO  # the pot is nothing but this hand's ante
    _void_hand(state)
    assert state.dealer == 1 and state.pot == 20 and state.balances == [-10, -10, 0, 0]
    assert state.phase is Phase.RUBATA  # no blind raise on a pot carried over


def test_passers_assist_after_the_open_in_risk_order() -> None:
    state = BestiaState(BestiaSettings(seats=5, blind_raises=False), seed=11)
    state.apply(PASS)  # no rubata
    apply_all(state, [PASS, OPEN])  # seat 1 passes, seat 2 opens
    assert state.phase is Phase.ASSISTING
    order = []
    for decision in [PASS, ASSIST, PASS, ASSIST]:
        order.append(state.to_act)
        state.apply(decision)
    assert order == [3, 4, 0, 1]  # after the opener round to the seat before it
    assert state.opener == 2 and state.assistants == [4, 1]
    assert state.in_hand == [False, True, True, False, True]
    # The accomodo goes in play order from the seat after the dealer.
    order = []
    while state.phase is Phase.EXCHANGE:
        order.append(state.to_act)
        state.apply(STAND_PAT)
    assert order == [1, 2, 4]
    assert state.phase is Phase.PLAYING and state.to_act == 2


def test_unopposed_opener_takes_the_pot_without_showing_its_cards() -> None:
    hands = {2: "AD KD QD JD"}
    state = stacked_match(FIVE, hands, turned="2C")
    start = state.event_count
    apply_all(state, [PASS, PASS])  # no buio, no rubata
    apply_all(state, [PASS, OPEN, PASS, PASS, PASS, PASS])
    result = state.results[-1]
    assert result.end is HandEnd.UNOPPOSED and result.taker == 2 and result.taken == 50
    assert result.balances == (-10, -10, 40, -10, -10)
    secret = set(cards("AD KD QD JD"))
    for seat in (0, 1, 3, 4):
        assert not secret & _cards_sent_to(state, seat, start)
    assert state.hand_number == 1 and state.dealer == 1


# ---- the accomodo ---------------------------------------------------------------------------


def _three_players(stock: str) -> BestiaState:
    """5 seats, dealer 0: seat 1 opens, 2 and 3 assist, 4 and 0 pass."""
    hands = {1: "AD KD QD JD", 2: "AC KC QC JC", 3: "AS KS QS JS"}
    state = stacked_match(FIVE, hands, turned="2B", stock=stock)
    apply_all(state, [PASS, PASS, OPEN, ASSIST, ASSIST, PASS, PASS])
    assert state.phase is Phase.EXCHANGE and state.to_act == 1
    return state


def test_exchange_of_four_gets_three_now_and_the_fourth_after_everyone() -> None:
    state = _three_players(stock="7D 7C 7S 7B 6D 6C")
    start = state.event_count
    state.apply(exchange("AD KD QD JD"))
    assert state.hands[1] == cards("7D 7C 7S")
    state.apply(exchange("AC KC"))
    assert set(state.hands[2]) == set(cards("QC JC 7B 6D"))
    assert state.hands[1] == cards("7D 7C 7S")  # still waiting
    state.apply(STAND_PAT)  # the last player is not a 4-card one: no burn
    assert set(state.hands[1]) == set(cards("6C 7D 7C 7S"))
    dealt = [e for e in state.events_for(1, start) if isinstance(e, CardsDealt)]
    assert dealt == [CardsDealt(1, tuple(cards("7D 7C 7S"))), CardsDealt(1, (card("6C"),))]
    assert state.burnt == []
    exchanged = [(e.seat, e.count) for e in state.observation(4).exchanges]
    assert exchanged == [(1, 4), (2, 2), (3, 0)]
    assert state.phase is Phase.PLAYING


def test_exchange_of_four_by_the_last_player_burns_a_card_first() -> None:
    state = _three_players(stock="7D 7C 7S 7B 6D 6C 6S 6B 5D")
    start = state.event_count
    state.apply(exchange("AD KD QD JD"))  # 7D 7C 7S now
    state.apply(STAND_PAT)
    state.apply(exchange("AS KS QS JS"))  # the last: 7B 6D 6C now
    # Seat 1's 4th first (6S), then the burn (6B), then the last player's 4th (5D).
    assert set(state.hands[1]) == set(cards("6S 7D 7C 7S"))
    assert set(state.hands[3]) == set(cards("5D 6D 6C 7B"))
    assert state.burnt == [card("6B")]
    assert (0, CardBurnt(card("6B"))) in state.all_events(start)
    for seat in range(5):
        assert card("6B") not in _cards_sent_to(state, seat)
        assert card("6B") not in set(state.observation(seat).hand)


def _dry_stock_match(seed: int) -> tuple[BestiaState, list[BestiaCard]]:
    """7 seats, no blind raises: seat 1 opens, seats 2-6 assist, the dealer 0 passes; then
    every player discards all 4 cards."""
    settings = BestiaSettings(seats=7, blind_raises=False)
    deck = stacked_deck(7, 0, {}, turned="2D")
    state = BestiaState.stacked(settings, [deck], seed)
    apply_all(state, [PASS, OPEN, ASSIST, ASSIST, ASSIST, ASSIST, ASSIST, PASS])
    assert state.phase is Phase.EXCHANGE and len(state.stock) == 11
    return state, deck[29:]


def _check_dealing(state: BestiaState, start: int, stock: list[BestiaCard]) -> int:
    """Replays the accomodo from the omniscient record with an independent model of the
    rules: a player is dealt the top-most stock card it did not discard, a burn takes the top
    card, and refills go under the stock.  Returns how many cards a player had to skip."""
    stock = list(stock)
    discarded: dict[int, set[BestiaCard]] = {}
    skipped = 0
    for _, event in state.all_events(start):
        if isinstance(event, Discarded):
            discarded.setdefault(event.seat, set()).update(event.cards)
        elif isinstance(event, StockRefilled):
            stock.extend(event.cards)
        elif isinstance(event, CardBurnt):
            assert event.card == stock.pop(0)
        elif isinstance(event, CardsDealt):
            own = discarded.get(event.seat, set())
            for dealt in event.cards:
                allowed = [c for c in stock if c not in own]
                assert dealt == allowed[0], "dealt the top-most card it did not discard"
                skipped += stock.index(dealt)
                stock.remove(dealt)
    return skipped


def test_stock_runs_dry_into_the_folded_pile_then_into_earlier_discards() -> None:
    state, stock = _dry_stock_match(seed=12)
    folded = list(state.folded_pile)
    assert set(folded) == _dealt(state, 0)
    start = state.event_count
    discards: dict[int, list[BestiaCard]] = {}
    for seat in range(1, 7):
        assert state.to_act == seat
        discards[seat] = list(state.hands[seat])
        state.apply(Exchange(tuple(state.hands[seat])))
        check_invariants(state)
    refills = [e for _, e in state.all_events(start) if isinstance(e, StockRefilled)]
    assert [r.source for r in refills] == [RefillSource.FOLDED_PILE, RefillSource.DISCARDS]
    # Seat 4 empties the stock: the folded pile, shuffled, is next.
    assert set(refills[0].cards) == set(folded)
    # Seat 6 finds stock and folded pile empty: the discards of the players before it.
    assert set(refills[1].cards) == {c for seat in range(1, 6) for c in discards[seat]}
    assert len(state.burnt) == 1  # seat 6, a 4-card player, was the last to exchange
    _check_dealing(state, start, stock)
    for seat in range(1, 7):
        assert len(state.hands[seat]) == 4
        assert not set(state.hands[seat]) & set(discards[seat])
    assert {c for c, _ in state.discard_pile} == set(discards[6])
    assert state.phase is Phase.PLAYING
    check_invariants(state)


def test_a_delayed_fourth_card_may_come_from_discards_of_later_players() -> None:
    """ "The players who exchanged earlier" are all who have exchanged by the time a card is
    dealt: the first player's delayed 4th card comes from the discards of the players after it
    (docs/rules-decisions.md, "Refilling")."""
    state, _ = _dry_stock_match(seed=0)
    discards: dict[int, set[BestiaCard]] = {}
    for seat in range(1, 7):
        discards[seat] = set(state.hands[seat])
        state.apply(Exchange(tuple(state.hands[seat])))
    fourth = [e for e in state.events_for(1) if isinstance(e, CardsDealt)][-1].cards
    assert len(fourth) == 1
    assert any(fourth[0] in discards[seat] for seat in range(2, 7))


def test_a_player_is_never_dealt_back_its_own_discard() -> None:
    """With the same heavy exchange under many seeds, the refilled stock's top card is
    sometimes the receiver's own discard: it is skipped, never dealt to it."""
    skipped = 0
    for seed in range(40):
        state, stock = _dry_stock_match(seed)
        start = state.event_count
        discards = {}
        for seat in range(1, 7):
            discards[seat] = set(state.hands[seat])
            state.apply(Exchange(tuple(state.hands[seat])))
        skipped += _check_dealing(state, start, stock)
        for seat in range(1, 7):
            assert not set(state.hands[seat]) & discards[seat]
    assert skipped > 0


# ---- card play ------------------------------------------------------------------------------


def test_trump_obligations_and_trick_winners() -> None:
    hands = {1: "AS 3S KD 2B", 2: "2S 4C 6C QD", 3: "5B 6B 7C JC"}
    state = stacked_match(FIVE, hands, turned="2D")  # trump: coins
    apply_all(state, [PASS, PASS, OPEN, ASSIST, ASSIST, PASS, PASS] + [STAND_PAT] * 3)
    state.apply(play("AS"))
    assert state.legal_actions() == [play("2S")]  # must follow the led suit
    assert "follow suit" in (state.why_illegal(play("QD")) or "")
    state.apply(play("2S"))
    # Void in the led suit without a trump: any card.
    assert state.legal_actions() == [play(label) for label in ["7C", "JC", "5B", "6B"]]
    state.apply(play("7C"))
    assert state.tricks[-1].winner == 1
    state.apply(play("3S"))
    assert state.legal_actions() == [play("QD")]  # void in swords: must trump
    assert "must play a trump" in (state.why_illegal(play("4C")) or "")
    apply_all(state, [play("QD"), play("JC")])
    assert state.tricks[-1].winner == 2  # the trump beats the led suit
    state.apply(play("4C"))
    state.apply(play("5B"))
    assert state.legal_actions() == [play("KD")]
    state.apply(play("KD"))
    assert state.tricks[-1].winner == 1
    state.apply(play("2B"))
    state.apply(play("6C"))  # off suit: cannot win however high
    state.apply(play("6B"))  # seat 3 follows clubs higher and wins the last trick
    settlement = state.results[-1].settlement
    assert settlement is not None and settlement.tricks == (0, 2, 1, 1, 0)


# ---- the giro ---------------------------------------------------------------------------


def test_giro_the_dealer_repeats_without_ante_until_the_cap_then_the_pot_is_split() -> None:
    settings = BestiaSettings(
        seats=4, ante_mode="dealer", rounds=1, giro_max_hands=3, blind_raises=False
    )
    state = BestiaState(settings, seed=13)
    assert state.giro and state.pot == 10
    _void_hand(state)
    assert state.dealer == 0 and state.dealer_hand == 2 and state.pot == 10  # no ante
    _void_hand(state)
    assert state.dealer == 0 and state.dealer_hand == 3
    _void_hand(state)
    # After 3 hands the 10 chips are shared: 2 each, the 2 left from the seat after the dealer.
    assert PotSplit(0, (2, 3, 3, 2)) in state.public_events()
    assert state.dealer == 1 and state.dealer_hand == 1
    assert state.balances == [-8, 3 - 10, 3, 2] and state.pot == 10
    started = [e for e in state.public_events() if isinstance(e, HandStarted)]
    assert [(e.dealer, e.dealer_hand) for e in started] == [(0, 1), (0, 2), (0, 3), (1, 1)]


def test_giro_the_dealer_keeps_the_deal_after_an_opener_in_bestia() -> None:
    settings = BestiaSettings(seats=5, rounds=1)
    hands = {1: "AD 2C 3C 4C", 2: "KD QD AS 3B", 3: "2S AB 6S 7S"}
    state = stacked_match(settings, hands, turned="2D")
    apply_all(state, [PASS, PASS, OPEN, ASSIST, ASSIST, PASS, PASS] + [STAND_PAT] * 3)
    for labels in ["AD KD 6S", "2C QD 7S", "AS 2S 3C", "3B AB 4C"]:
        apply_all(state, [play(label) for label in labels.split()])
    assert state.results[-1].pot == 100
    assert state.hand_number == 1 and state.dealer == 0 and state.dealer_hand == 2
    assert state.antes == [] and state.pot == 100
    assert state.phase is Phase.RUBATA  # no blind raise on a pot carried over


def test_the_match_ends_after_the_giro_with_an_empty_pot() -> None:
    settings = BestiaSettings(seats=4, rounds=2, giro_max_hands=2, blind_raises=False)
    state = BestiaState(settings, seed=14)
    while not state.is_over:
        _void_hand(state)
    # First round: 4 hands, one per dealer; the giro: 2 per dealer (void each time).
    assert len(state.results) == 4 + 4 * 2
    assert state.pot == 0 and sum(state.balances) == 0
    ended = state.public_events()[-1]
    assert isinstance(ended, MatchEnded) and ended.balances == tuple(state.balances)
    assert ended.hands_played == 12
    outcome = state.outcome
    assert outcome is not None and outcome.scores == tuple(state.balances)
    assert state.phase is Phase.MATCH_OVER and state.legal_actions() == []


@pytest.mark.parametrize("seats", [4, 7])
def test_first_dealer_and_the_deal_passing_in_play_order(seats: int) -> None:
    settings = BestiaSettings(seats=seats, rounds=1, first_dealer=seats - 1, giro_max_hands=1)
    state = BestiaState(settings, seed=15)
    dealers = []
    while not state.is_over:
        dealers.append(state.dealer)
        _void_hand(state)
    assert dealers == [seats - 1, *range(seats - 1)]


def test_discard_action_type_is_only_for_the_dealer_who_stole() -> None:
    state = _three_players(stock="")
    reason = state.why_illegal(Discard(card("AD")))
    assert reason is not None and "dealer who stole" in reason


@pytest.mark.parametrize("seats", [6, 7])
def test_heavy_exchanges_in_whole_matches_keep_every_card_once(seats: int) -> None:
    """Everybody calls, assists and throws all 4 cards: the stock keeps running dry."""
    settings = BestiaSettings(seats=seats, rounds=1, giro_max_hands=2)
    state = BestiaState(settings, seed=seats)
    rng = random.Random(seats)
    refills: set[RefillSource] = set()
    discarded: dict[int, set[BestiaCard]] = {}
    while not state.is_over:
        start = state.event_count
        legal = state.legal_actions()
        eager = [a for a in legal if a in (CALL, ASSIST, OPEN)]
        if state.phase is Phase.EXCHANGE:
            action = legal[-1] if rng.random() < 0.9 else rng.choice(legal)
        elif eager and rng.random() < 0.9:
            action = eager[0]
        else:
            action = rng.choice(legal)
        state.apply(action)
        check_invariants(state)
        for _, event in state.all_events(start):
            if isinstance(event, HandStarted):
                discarded = {}
            elif isinstance(event, StockRefilled):
                refills.add(event.source)
            elif isinstance(event, Discarded):
                discarded.setdefault(event.seat, set()).update(event.cards)
            elif isinstance(event, CardsDealt):
                assert not set(event.cards) & discarded.get(event.seat, set())
    assert refills == {RefillSource.FOLDED_PILE, RefillSource.DISCARDS}
