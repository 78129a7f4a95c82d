"""The ``pimc`` sample bot: deals consistent with what its seat saw, legal answers in every
phase of both games, reproducible when seeded, and selectable wherever sample bots are."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest

from bisca.client import Clock, Request
from bisca.client.bots import BOTS, make_bot, pimc_bot
from bisca.client.bots.pimc import _belote_hands, _bestia_hands
from bisca.client.local import Player, play_match
from bisca.engine import belote, bestia, new_match
from bisca.server.sandbox import SAMPLE_BOTS, bot_argv

from .support import request_for


def positions(game: str, seeds: range, **settings: Any) -> Iterator[tuple[Any, Any]]:
    """(state, observation of the seat to act) at every card to play of random matches."""
    for seed in seeds:
        rng = random.Random(seed)
        state = new_match(game, settings, seed)
        while (seat := state.to_act) is not None:
            observation = state.observation(seat)
            if observation.phase.value == "playing":
                yield state, observation
            state.apply(rng.choice(state.legal_actions()))


def test_belote_deals_hold_what_each_hand_holds_and_nothing_a_seat_showed_it_lacks() -> None:
    rng = random.Random(1)
    checked_voids = 0
    for state, observation in positions("belote", range(6), deals=1):
        me = observation.seat
        trump = observation.trump
        played = [p.card for t in observation.tricks for p in t.plays]
        hands = _belote_hands(observation, rng)
        assert hands[me] == list(observation.hand)
        assert sorted(c.index for h in hands for c in h) == sorted(
            c.index for c in belote.DECK if c not in played
        )
        for seat in range(4):
            assert len(hands[seat]) == len(state.hands[seat])
        if observation.taker != me and observation.turned_card not in played:
            assert observation.turned_card in hands[observation.taker]
        # A seat that did not follow the led suit is dealt none of it; one that played a
        # plain card while an opponent won the plain trick, no trump.
        for trick in observation.tricks:
            led = trick.plays[0].card.suit
            for play in trick.plays[1:]:
                if play.seat != me and play.card.suit != led:
                    checked_voids += 1
                    assert all(c.suit != led for c in hands[play.seat])
                    if led != trump and play.card.suit != trump:
                        leader_wins = trick.plays[0].seat ^ play.seat == 2
                        if len(trick.plays) >= 2 and not leader_wins and play == trick.plays[1]:
                            assert all(c.suit != trump for c in hands[play.seat])
    assert checked_voids > 10


def test_bestia_deals_give_each_player_its_hand_size_and_respect_its_voids() -> None:
    rng = random.Random(2)
    checked = 0
    for state, observation in positions("bestia", range(8), seats=5, rounds=1):
        players = [s for s in range(5) if observation.in_hand[s]]
        hands = _bestia_hands(observation, players, rng)
        assert set(hands) == set(players)
        seen = {p.card for t in observation.tricks for p in t.plays} | set(observation.hand)
        for seat in players:
            assert len(hands[seat]) == len(state.hands[seat])
            if seat != observation.seat:
                assert not seen & set(hands[seat])
        for trick in observation.tricks:
            led = trick.plays[0].card.suit
            for play in trick.plays[1:]:
                if play.seat != observation.seat and play.card.suit != led:
                    checked += 1
                    voids = {led} if play.card.suit == observation.trump else {led, state.trump}
                    assert all(c.suit not in voids for c in hands[play.seat])
    assert checked > 0


@pytest.mark.parametrize(
    ("game", "settings"), [("belote", {"deals": 2}), ("bestia", {"seats": 4, "rounds": 1})]
)
def test_pimc_answers_legally_in_every_phase(game: str, settings: dict[str, Any]) -> None:
    # The local runner raises on any illegal answer; random seats lead it into odd states.
    for seed in range(3):
        weak = pimc_bot(seed, determinizations=3)
        seats: list[Any] = [weak, "random"] * 2
        play_match(game, seats, settings=settings, seed=seed)


def test_pimc_is_reproducible_when_seeded_and_stays_within_a_tiny_clock() -> None:
    state = new_match("belote", {"deals": 1}, 8)
    rng = random.Random(8)
    while state.observation(state.to_act).phase is not belote.Phase.PLAYING:
        state.apply(rng.choice(state.legal_actions()))
    for _ in range(5):
        state.apply(rng.choice(state.legal_actions()))
    request = request_for(state)
    bot = pimc_bot(5, determinizations=8)
    assert bot(request) == bot(request) == pimc_bot(5, determinizations=8)(request)
    hurried = dataclasses.replace(request, clock=Clock(move_ms=1, bank_ms=0))
    assert bot(hurried) in request.legal_actions


def test_pimc_declares_bestia_by_search_and_keeps_greedy_s_blind_decisions() -> None:
    asked: list[str] = []
    bot = pimc_bot(3, determinizations=4)

    def watched(request: Request[Any, Any]) -> Any:
        asked.append(request.observation.phase.value)
        answer = bot(request)
        if request.observation.phase is bestia.Phase.BUIO:
            assert answer == make_bot("bestia", "greedy")(request)
        return answer

    for seed in range(3):
        seats = [Player(watched), "greedy", "greedy", "greedy"]
        play_match("bestia", seats, settings={"seats": 4, "rounds": 1}, seed=seed)
    assert {"opening", "playing"} <= set(asked)


def test_pimc_is_a_sample_bot_of_both_games_wherever_sample_bots_are_named() -> None:
    assert all("pimc" in bots for bots in BOTS.values())
    assert "pimc" in SAMPLE_BOTS
    assert bot_argv("pimc", "bestia")[-4:] == ["bot", "pimc", "--game", "bestia"]
