"""Dealing, bidding, the void deal, completing the hands, and the shape of a Belote match."""

import random

import pytest

from bisca.engine import (
    DealRng,
    IllegalActionError,
    InvalidSettingsError,
    MalformedActionError,
    new_match,
)
from bisca.engine.belote import (
    DECK,
    BeloteAnnounced,
    BeloteSettings,
    BeloteState,
    BidMade,
    CardsDealt,
    DealStarted,
    DealVoided,
    Pass,
    Phase,
    PlayCard,
    Suit,
    Take,
)


def _play_randomly(state: BeloteState, seed: int = 0) -> None:
    """Finish the match with seeded random legal actions (defaults would pass every deal)."""
    rng = random.Random(seed)
    while not state.is_over:
        state.apply(rng.choice(state.legal_actions()))


def _shuffled(seed: int, shuffle_number: int) -> list:
    deck = list(DECK)
    DealRng.for_deal(seed, shuffle_number).shuffle(deck)
    return deck


def test_deal_is_three_then_two_from_dealer_plus_one_and_the_21st_card_is_turned() -> None:
    state = BeloteState(BeloteSettings(first_dealer=2), seed=11)
    deck = _shuffled(11, 0)
    # dealer 2: seat 3 first, then 0, 1, 2.
    order = [3, 0, 1, 2]
    expected = {
        seat: deck[3 * i : 3 * i + 3] + deck[12 + 2 * i : 14 + 2 * i]
        for i, seat in enumerate(order)
    }
    for seat in range(4):
        assert state.hands[seat] == expected[seat]
        assert set(state.observation(seat).hand) == set(expected[seat])
    assert state.turned_card is deck[20]
    assert state.to_act == 3
    assert state.legal_actions() == [Pass(), Take(deck[20].suit)]


def test_completing_the_hands_taker_gets_turned_card_and_two_others_three() -> None:
    state = BeloteState(BeloteSettings(first_dealer=0), seed=5)
    deck = _shuffled(5, 0)
    state.apply(Pass())  # seat 1
    state.apply(Take(deck[20].suit))  # seat 2 takes
    # From dealer+1 = seat 1: seat 1 gets 3, the taker the turned card + 2, seats 3 and 0 get 3.
    assert state.hands[1][5:] == deck[21:24]
    assert state.hands[2][5:] == [deck[20], *deck[24:26]]
    assert state.hands[3][5:] == deck[26:29]
    assert state.hands[0][5:] == deck[29:32]
    assert all(len(hand) == 8 for hand in state.hands)
    assert state.phase is Phase.PLAYING and state.taker == 2 and state.trump == deck[20].suit
    assert state.to_act == 1  # dealer+1 leads the first trick
    completed = [e for e in state.events_for(2) if isinstance(e, CardsDealt)][-1]
    assert completed.cards == (deck[20], deck[24], deck[25])
    # Every seat sees the turned card and who took it, but only the taker holds it.
    for seat in range(4):
        observation = state.observation(seat)
        assert observation.turned_card is deck[20] and observation.taker == 2
        assert (deck[20] in observation.hand) == (seat == 2)


def test_round_two_excludes_the_turned_suit_and_ends_at_the_first_take() -> None:
    state = BeloteState(BeloteSettings(), seed=3)
    turned = state.turned_card.suit
    for _ in range(4):
        state.apply(Pass())
    assert state.phase is Phase.BIDDING_ROUND_2
    assert state.to_act == 1
    takes = {a.suit for a in state.legal_actions() if isinstance(a, Take)}
    assert takes == set(Suit) - {turned}
    with pytest.raises(IllegalActionError, match="round 2 excludes"):
        state.apply(Take(turned))
    other = next(iter(takes))
    state.apply(Pass())
    state.apply(Take(other))
    assert state.trump == other and state.taker == 2
    bids = state.observation(0).bids
    assert [(b.seat, b.round, b.suit) for b in bids] == [
        (1, 1, None),
        (2, 1, None),
        (3, 1, None),
        (0, 1, None),
        (1, 2, None),
        (2, 2, other),
    ]


def test_round_one_takes_only_the_turned_suit() -> None:
    state = BeloteState(BeloteSettings(), seed=3)
    wrong = next(s for s in Suit if s != state.turned_card.suit)
    with pytest.raises(IllegalActionError, match="round 1 only takes"):
        state.apply(Take(wrong))
    with pytest.raises(IllegalActionError, match="bidding is not over"):
        state.apply(PlayCard(state.hands[1][0]))


def test_eight_passes_void_the_deal_which_still_counts() -> None:
    state = BeloteState(BeloteSettings(deals=2), seed=9)
    for _ in range(8):
        state.apply(Pass())
    assert any(isinstance(e, DealVoided) for e in state.public_events())
    assert state.deal_results[0].void and state.deal_results[0].scores == (0, 0)
    assert state.deal_number == 1 and state.dealer == 1 and state.to_act == 2
    assert state.phase is Phase.BIDDING_ROUND_1
    # A fresh shuffle for the next deal.
    assert state.turned_card is _shuffled(9, 1)[20]
    for _ in range(8):
        state.apply(Pass())
    assert state.is_over
    assert state.outcome is not None and state.outcome.is_draw
    with pytest.raises(IllegalActionError, match="match is over"):
        state.apply(Pass())


def test_a_match_rotates_the_dealer_and_plays_the_set_number_of_deals() -> None:
    state = BeloteState(BeloteSettings(deals=6, first_dealer=1), seed=21)
    while not state.is_over:
        state.apply(state.default_action())
    started = [e for e in state.public_events() if isinstance(e, DealStarted)]
    assert [e.dealer for e in started] == [1, 2, 3, 0, 1, 2]
    assert len(state.deal_results) == 6
    outcome = state.outcome
    assert outcome is not None
    assert outcome.scores[0] == outcome.scores[2] == state.match_scores[0]
    assert outcome.scores[1] == outcome.scores[3] == state.match_scores[1]


def test_target_score_ends_after_the_deal_reaching_it_or_at_the_cap() -> None:
    state = BeloteState(BeloteSettings(target_score=300, max_deals=40), seed=4)
    _play_randomly(state)
    played = len(state.deal_results)
    assert max(state.match_scores) >= 300
    before_last = [sum(r.scores[t] for r in state.deal_results[:-1]) for t in (0, 1)]
    assert max(before_last) < 300
    assert played < 40
    capped = BeloteState(BeloteSettings(target_score=100_000, max_deals=3), seed=4)
    _play_randomly(capped)
    assert len(capped.deal_results) == 3


def test_duplicate_mode_replays_each_shuffle_with_every_seat_one_place_on() -> None:
    state = BeloteState(BeloteSettings(deals=4, duplicate=True), seed=8)
    first_hands = [list(hand) for hand in state.hands]
    first_turned = state.turned_card
    for _ in range(8):
        state.apply(Pass())
    assert state.deal_number == 1
    for seat in range(4):
        assert state.hands[(seat + 1) % 4] == first_hands[seat]
    assert state.turned_card is first_turned
    started = [e for e in state.public_events() if isinstance(e, DealStarted)]
    assert [(e.deal_number, e.replay_of) for e in started] == [(0, None), (1, 0)]
    for _ in range(8):
        state.apply(Pass())
    assert state.turned_card is not first_turned or state.hands[0] != first_hands[3]


def test_duplicate_target_match_ends_only_on_a_complete_pair() -> None:
    state = BeloteState(BeloteSettings(target_score=1, max_deals=10, duplicate=True), seed=2)
    _play_randomly(state)
    assert len(state.deal_results) % 2 == 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"deals": 0}, "deals must be"),
        ({"first_dealer": 4}, "first_dealer"),
        ({"deals": 3, "duplicate": True}, "must be even"),
        ({"target_score": 0}, "target_score"),
        ({"target_score": 500, "max_deals": 0}, "max_deals"),
        ({"deals": "4"}, "setting deals must be int"),
        ({"duplicate": 1}, "setting duplicate must be bool"),
        ({"dealz": 4}, "unknown setting"),
    ],
)
def test_bad_settings_are_refused_with_the_setting_named(settings: dict, message: str) -> None:
    with pytest.raises(InvalidSettingsError, match=message):
        new_match("belote", settings)


def test_malformed_actions_are_refused() -> None:
    state = BeloteState()
    with pytest.raises(MalformedActionError, match="not a belote action"):
        state.apply("take")  # type: ignore[arg-type]


def test_unknown_game_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown game 'euchre'"):
        new_match("euchre")


def test_a_belote_in_real_play_is_announced_only_when_played() -> None:
    found = 0
    rng = random.Random(5)
    for seed in range(200):
        state = BeloteState(BeloteSettings(deals=1), seed)
        while not state.is_over:
            before = state.event_count
            state.apply(rng.choice(state.legal_actions()))
            for event in state.public_events(before):
                if isinstance(event, BeloteAnnounced):
                    played = state.public_events(before)
                    index = played.index(event)
                    card_event = played[index - 1]
                    assert card_event.seat == event.seat
                    assert card_event.card.suit == state.trump
                    assert card_event.card.rank.name in ("KING", "QUEEN")
        result = state.deal_results[0]
        announcements = [e for e in state.public_events() if isinstance(e, BeloteAnnounced)]
        if len(announcements) == 2:
            found += 1
            team = announcements[0].seat % 2
            assert result.belote_points[team] == 20 and result.belote_points[1 - team] == 0
            assert [a.announcement.value for a in announcements] == ["belote", "rebelote"]
        else:
            assert result.belote_points == (0, 0)
    assert found >= 3


def test_same_seed_same_match_and_different_seeds_differ() -> None:
    def play(seed: int) -> tuple:
        state = BeloteState(BeloteSettings(), seed)
        _play_randomly(state, seed=1)
        return tuple(state.all_events())

    assert play(77) == play(77)
    assert play(77) != play(78)


def test_copies_do_not_share_bids() -> None:
    state = BeloteState()
    twin = state.copy()
    twin.apply(Pass())
    assert state.observation(0).bids == ()
    assert isinstance(twin.observation(0).bids[0], BidMade)
