"""The public trick helpers of each game: ``trick_strength``, ``winning_play``, ``current_trick``.

Each helper is checked three ways: against an oracle written here straight from the rules pages
(card orders spelled out as labels, independent of the engine's tables), against what the engine
itself records (every ``TrickWon`` of many seeded random matches, and the cards on the table at
every decision of card play), and on a few hand-written tricks.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from bisca.engine import belote, bestia
from bisca.engine.belote import BeloteSettings, BeloteState
from bisca.engine.bestia import BestiaSettings, BestiaState

# ---- the oracles: the rules pages, "Cards" and the trick-winning rule -------------------------

# Low to high.  Belote: trump J 9 A 10 K Q 8 7, plain A 10 K Q J 9 8 7 (high to low).
_BELOTE_TRUMP = ("7", "8", "Q", "K", "10", "A", "9", "J")
_BELOTE_PLAIN = ("7", "8", "9", "J", "Q", "K", "10", "A")
# Bestia: A K Q J 7 6 5 4 3 2 (high to low), in every suit, trump included.
_BESTIA_RANKS = ("2", "3", "4", "5", "6", "7", "J", "Q", "K", "A")


def _rank_label(card: Any) -> str:
    return str(card.label[:-1])


def _belote_order(card: Any, trump: int) -> int:
    order = _BELOTE_TRUMP if card.suit == trump else _BELOTE_PLAIN
    return order.index(_rank_label(card))


def _bestia_order(card: Any, trump: int) -> int:
    return _BESTIA_RANKS.index(_rank_label(card))


@dataclass(frozen=True)
class Game:
    name: str
    deck: Sequence[Any]
    card: Callable[[str], Any]
    played: Callable[[int, Any], Any]
    trick_strength: Callable[[Any, int, int], int]
    winning_play: Callable[[Sequence[Any], int], Any]
    current_trick: Callable[[Any], tuple[Any, ...]]
    order: Callable[[Any, int], int]
    playing: Any
    trick_won: type
    card_played: type
    make: Callable[[int], Any]
    #: Seeded random matches checked against the engine's record.
    matches: int


BELOTE = Game(
    name="belote",
    deck=belote.DECK,
    card=belote.card,
    played=belote.CardPlayed,
    trick_strength=belote.trick_strength,
    winning_play=belote.winning_play,
    current_trick=belote.current_trick,
    order=_belote_order,
    playing=belote.Phase.PLAYING,
    trick_won=belote.TrickWon,
    card_played=belote.CardPlayed,
    make=lambda seed: BeloteState(BeloteSettings(deals=2), seed),
    matches=200,
)
BESTIA = Game(
    name="bestia",
    deck=bestia.DECK,
    card=bestia.card,
    played=bestia.CardPlayed,
    trick_strength=bestia.trick_strength,
    winning_play=bestia.winning_play,
    current_trick=bestia.current_trick,
    order=_bestia_order,
    playing=bestia.Phase.PLAYING,
    trick_won=bestia.TrickWon,
    card_played=bestia.CardPlayed,
    make=lambda seed: BestiaState(BestiaSettings(seats=4 + seed % 4, rounds=1), seed),
    matches=100,
)
GAMES = pytest.mark.parametrize("game", [BELOTE, BESTIA], ids=lambda game: game.name)


def beats(game: Game, a: Any, b: Any, led: int, trump: int) -> bool:
    """Whether ``a`` beats ``b`` in a trick led in ``led``: trumps first, then the led suit."""
    for suit in (trump, led):
        if a.suit == suit or b.suit == suit:
            if a.suit != b.suit:
                return a.suit == suit
            return game.order(a, trump) > game.order(b, trump)
    return False


def oracle_winner(game: Game, plays: Sequence[Any], trump: int) -> Any:
    """The rules' winner: the highest trump in the trick, else the highest card of the led suit."""
    trumps = [p for p in plays if p.card.suit == trump]
    if trumps:
        return max(trumps, key=lambda p: game.order(p.card, trump))
    led = plays[0].card.suit
    return max((p for p in plays if p.card.suit == led), key=lambda p: game.order(p.card, trump))


# ---- every card against every card ------------------------------------------------------------


@GAMES
def test_trick_strength_orders_every_pair_of_cards_as_the_rules_do(game: Game) -> None:
    for led, trump in itertools.product(range(4), repeat=2):
        strengths = {c: game.trick_strength(c, led, trump) for c in game.deck}
        for c, strength in strengths.items():
            assert (strength == -1) == (c.suit not in (led, trump)), (c, led, trump)
        for a, b in itertools.permutations(game.deck, 2):
            if strengths[a] == strengths[b] == -1:
                continue
            assert (strengths[a] > strengths[b]) == beats(game, a, b, led, trump), (a, b)


@GAMES
def test_winning_play_of_every_two_card_trick_is_the_rules_winner(game: Game) -> None:
    for trump in range(4):
        for a, b in itertools.permutations(game.deck, 2):
            plays = (game.played(0, a), game.played(1, b))
            assert game.winning_play(plays, trump) == oracle_winner(game, plays, trump)


@GAMES
def test_winning_play_refuses_an_empty_trick(game: Game) -> None:
    with pytest.raises(ValueError, match="at least one card"):
        game.winning_play((), 0)


# ---- against the engine's own record, over seeded random matches ------------------------------


def _check_match(game: Game, seed: int) -> int:
    """Play one seeded random match, checking the helpers at every card; the tricks checked."""
    state = game.make(seed)
    rng = random.Random(seed)
    table: list[Any] = []  # the cards of the trick being played, from the public events
    trump = -1
    tricks = 0
    while not state.is_over:
        seat = state.to_act
        observation = state.observation(seat)
        if observation.phase is game.playing:
            trump = observation.trump
            for viewer in {seat, (seat + 1) % state.num_seats}:
                assert game.current_trick(state.observation(viewer)) == tuple(table)
            if table:
                expected = oracle_winner(game, table, trump)
                assert game.winning_play(table, trump) == expected
        else:
            assert game.current_trick(observation) == ()
        start = state.event_count
        state.apply(rng.choice(state.legal_actions()))
        for event in state.public_events(start):
            if isinstance(event, game.card_played):
                table.append(event)
            elif isinstance(event, game.trick_won):
                assert game.winning_play(table, trump).seat == event.winner, (seed, table)
                assert oracle_winner(game, table, trump).seat == event.winner, (seed, table)
                table = []
                tricks += 1
    assert table == []
    for viewer in range(state.num_seats):
        assert game.current_trick(state.observation(viewer)) == ()
    return tricks


@GAMES
def test_helpers_agree_with_every_trick_the_engine_decides(game: Game) -> None:
    tricks = sum(_check_match(game, seed) for seed in range(game.matches))
    assert tricks >= 2000  # the matches did reach card play, many times


# ---- hand-written cases -----------------------------------------------------------------------


def _plays(game: Game, leader: int, labels: str, seats: int = 4) -> tuple[Any, ...]:
    return tuple(
        game.played((leader + i) % seats, game.card(label))
        for i, label in enumerate(labels.split())
    )


@pytest.mark.parametrize(
    ("labels", "trump", "winner"),
    [
        ("AS 9S JS 10S", belote.Suit.SPADES, 2),  # trump led: J, then 9, over the A
        ("KH 10H 7H AH", belote.Suit.SPADES, 3),  # plain: A, then 10, over the K
        ("AH 10H 7S KH", belote.Suit.SPADES, 2),  # the lowest trump beats the led ace
        ("7H AD AC 8H", belote.Suit.SPADES, 3),  # off-suit aces never win
        ("9H JH", belote.Suit.SPADES, 1),  # an unfinished trick: J over 9 in a plain suit
    ],
)
def test_belote_tricks(labels: str, trump: belote.Suit, winner: int) -> None:
    plays = _plays(BELOTE, 0, labels)
    assert belote.winning_play(plays, trump).seat == winner


def test_belote_strengths() -> None:
    def strength(label: str) -> int:  # hearts led, spades trump
        return belote.trick_strength(belote.card(label), belote.Suit.HEARTS, belote.Suit.SPADES)

    assert strength("7S") > strength("AH")  # any trump beats the led suit
    assert strength("9S") > strength("AS")  # trump order J 9 A 10 ...
    assert strength("10H") > strength("KH")  # plain order A 10 K ...
    assert strength("AD") == -1  # another suit cannot win


@pytest.mark.parametrize(
    ("labels", "trump", "winner"),
    [
        ("KS AS QS 2S", bestia.Suit.COINS, 1),  # no trump: the highest sword
        ("AS 2D KD 3C", bestia.Suit.COINS, 2),  # trumps beat the led ace, K over 2
        ("7C AB AS 2C 6C", bestia.Suit.COINS, 0),  # five players, off-suit aces never win
        ("5S 6S 2D", bestia.Suit.COINS, 2),  # an unfinished trick
    ],
)
def test_bestia_tricks(labels: str, trump: bestia.Suit, winner: int) -> None:
    plays = _plays(BESTIA, 0, labels, seats=5)
    assert bestia.winning_play(plays, trump).seat == winner


def test_bestia_strengths() -> None:
    def strength(label: str) -> int:  # swords led, coins trump
        return bestia.trick_strength(bestia.card(label), bestia.Suit.SWORDS, bestia.Suit.COINS)

    assert strength("2D") > strength("AS")  # any trump beats the led suit
    assert strength("AS") > strength("KS") > strength("JS") > strength("7S")
    assert strength("AB") == -1  # another suit cannot win
    assert type(strength("AS")) is int


def test_belote_current_trick_from_a_position() -> None:
    def hand(labels: str) -> list[belote.BeloteCard]:
        return [belote.card(label) for label in labels.split()]

    spades = belote.Suit.SPADES
    hands = [hand("8H 7C KH"), hand("7D 8D"), hand("9D 10D"), hand("QD KD")]
    leading = BeloteState.from_position(hands=hands, trump=spades, taker=0, leader=0)
    assert belote.current_trick(leading.observation(0)) == ()
    hands = [hand("8H 7C"), hand("7D"), hand("9D"), hand("QD")]
    state = BeloteState.from_position(
        hands=hands, trump=spades, taker=0, leader=1, trick=hand("AH 9H")
    )
    expected = (belote.CardPlayed(1, belote.card("AH")), belote.CardPlayed(2, belote.card("9H")))
    for seat in range(4):
        assert belote.current_trick(state.observation(seat)) == expected
    assert belote.current_trick(BeloteState(seed=0).observation(0)) == ()  # still bidding


def test_bestia_current_trick_ignores_a_finished_trick() -> None:
    plays = _plays(BESTIA, 0, "KS AS QS 2S")
    finished = bestia.Trick(0, 0, plays, 1)
    under_way = bestia.Trick(1, 1, plays[:2], None)
    observation = BestiaState(seed=0).observation(0)
    assert bestia.current_trick(observation) == ()  # still in the blind phase
    done = dataclasses.replace(observation, tricks=(finished,))
    assert bestia.current_trick(done) == ()
    playing = dataclasses.replace(observation, tricks=(finished, under_way))
    assert bestia.current_trick(playing) == plays[:2]
