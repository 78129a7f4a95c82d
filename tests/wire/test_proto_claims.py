"""What the game ``.proto`` files' comments say about their values, held against the codec:
enum values map by name (their numbers are not the engine's), and Bestia's trump is always
set."""

from __future__ import annotations

import random

from bisca import wire
from bisca.engine import new_match
from bisca.engine.belote import BeloteCard, PlayCard, Rank, Suit
from bisca.v1 import bestia_pb2


def test_belote_enums_map_by_name_not_by_number() -> None:
    card = next(c for c in BeloteCard.DECK if (c.suit, c.rank) == (Suit.SPADES, Rank.SEVEN))
    action = PlayCard(card)
    message = wire.codec("belote").encode_action(action).play_card.card
    assert Suit.SPADES.value == 0 and Rank.SEVEN.value == 0
    assert (message.suit, message.rank) == (1, 1)  # SUIT_SPADES, RANK_SEVEN: 0 is UNSPECIFIED
    assert message.DESCRIPTOR.fields_by_name["suit"].enum_type.values_by_number[1].name == (
        "SUIT_SPADES"
    )


def test_bestia_observations_always_carry_the_trump_of_the_last_turned_card() -> None:
    rng = random.Random(2)
    seen = 0
    for seed in range(4):
        state = new_match("bestia", {"seats": 4, "rounds": 1}, seed=seed)
        while True:
            for seat in range(state.num_seats):
                observation = wire.encode_game_observation("bestia", state.observation(seat)).bestia
                assert observation.trump != bestia_pb2.SUIT_UNSPECIFIED
                assert observation.trump == observation.turned_cards[-1].suit
                seen += 1
            if state.is_over:
                break
            state.apply(rng.choice(state.legal_actions()))
    assert seen > 100
