"""The ``pimc`` bot: Perfect Information Monte Carlo for the card play, greedy's bidding.

At each card to play it deals the cards it has not seen into the other hands many times over,
each deal consistent with what its seat saw (:mod:`._determinize`: its own hand, every card
played, the suits a seat showed it lacks by not following or not trumping, the trumps a seat
showed it lacks by not overtrumping, the turned card in the Belote taker's hand).  In each such
deal every legal card is tried, and the deal is played out to its end by random legal play;
the card whose results add up best is played.  The result counted is the seat's own: its
team's deal score minus the other team's at Belote (contract, capot and belote included, as
the engine scores them), its net chips of the hand at Bestia (the engine's settlement).

PIMC, not ISMCTS
    Both sample deals consistent with the seat's view.  ISMCTS grows one tree over the
    information sets and so can learn that a move reveals something; PIMC searches each deal as
    if the cards were face up ("strategy fusion": it may trust a finesse it could not know
    works).  In these games the play lasts 4 (Bestia) or 8 (Belote) tricks, most of the hidden
    information comes out as the cards fall, and a flat evaluation of each legal card is cheap
    to make exact in its parallels: PIMC is the proven choice for trick-taking card play
    (GIB at bridge, the Skat bots), simpler, and every determinization is independent, which
    makes the strength setting a plain number.

Strength
    ``determinizations`` (deals sampled per decision, default :data:`DETERMINIZATIONS`) and
    ``rollouts`` (playouts per legal card in each deal, default 1).  A decision stops sampling
    early when :data:`CLOCK_SHARE` of the move's clock is spent, so it stays within the clock
    however the machine is loaded; the default costs a few tens of milliseconds per card.

Everything else (bids at Belote; the blind phase, opening, assisting, exchanging at Bestia) is
the ``greedy`` bot's decision: the search is where the card play is.  The bot is stateless (a
function of the request) and, seeded, reproducible: each decision draws from a generator
seeded by the seed and the seat's whole view, like the ``random`` bot.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from bisca.engine import belote, bestia

from .._types import Bot, Request
from . import belote_greedy, bestia_greedy
from ._determinize import deal

DETERMINIZATIONS = 40
"""Deals sampled per decision by default."""
CLOCK_SHARE = 0.4
"""The most of a move's clock a decision spends sampling (it always finishes one deal)."""


def pimc_bot(
    seed: int | None = None, *, determinizations: int = DETERMINIZATIONS, rollouts: int = 1
) -> Bot:
    """The PIMC bot of every game it knows (Belote, Bestia), with its strength setting."""
    if determinizations < 1 or rollouts < 1:
        raise ValueError("determinizations and rollouts must be 1 or more")
    shared = random.Random() if seed is None else None

    def pimc(request: Request[Any, Any]) -> Any:
        if shared is not None:
            rng = shared
        else:
            rng = random.Random(
                f"{seed}|{request.game}|{request.seat}|{request.attempt}|{request.observation!r}"
            )
        deadline = time.monotonic() + request.clock.move_ms * CLOCK_SHARE / 1000
        play = _GAMES.get(request.game)
        if play is None:
            raise ValueError(f"the pimc bot does not play {request.game}")
        return play(request, _Search(rng, determinizations, rollouts, deadline))

    return pimc


class _Search:
    """One decision's budget and generator."""

    def __init__(self, rng: random.Random, deals: int, rollouts: int, deadline: float) -> None:
        self.rng = rng
        self.deals = deals
        self.rollouts = rollouts
        self.deadline = deadline

    def best(
        self,
        moves: Sequence[Any],
        sample: Callable[[], Callable[[Any], float]],
        order: Callable[[Any], int],
    ) -> Any:
        """The move of highest total over the sampled deals: ``sample()`` deals once and gives
        the function that plays one move out in that deal."""
        totals = dict.fromkeys(moves, 0.0)
        for number in range(self.deals):
            if number and time.monotonic() > self.deadline:
                break
            play_out = sample()
            for move in moves:
                for _ in range(self.rollouts):
                    totals[move] += play_out(move)
        # Ties go to the first in deck order, so a decision never depends on dict order.
        return max(moves, key=lambda move: (totals[move], -order(move)))


# ---- Belote ----------------------------------------------------------------------------------


def _belote(request: Request[belote.BeloteObservation, Any], search: _Search) -> Any:
    observation = request.observation
    if observation.phase is not belote.Phase.PLAYING:
        return belote_greedy.greedy(request)
    plays = {
        action.card: action for action in request.legal_actions if type(action) is belote.PlayCard
    }
    if len(plays) == 1:
        return next(iter(plays.values()))
    rng = search.rng
    team = belote.team_of(observation.seat)
    settings = belote.BeloteSettings(deals=1)

    def sample() -> Callable[[belote.BeloteCard], float]:
        root = _belote_position(observation, _belote_hands(observation, rng), settings)

        def play_out(card: belote.BeloteCard) -> float:
            state = root.copy()
            state.apply(plays[card])
            choice = rng.choice
            while state.to_act is not None:
                state.apply(choice(state.legal_actions()))
            scores = state.match_scores
            return float(scores[team] - scores[1 - team])

        return play_out

    best = search.best(list(plays), sample, lambda card: card.index)
    return plays[best]


def _belote_hands(
    observation: belote.BeloteObservation, rng: random.Random
) -> list[list[belote.BeloteCard]]:
    """The four hands of one deal consistent with what ``observation``'s seat saw."""
    me = observation.seat
    trump = observation.trump
    taker = observation.taker
    assert trump is not None and taker is not None, "card play has a trump and a taker"
    played = {play.card for trick in observation.tricks for play in trick.plays}
    turned = observation.turned_card
    known: dict[int, list[belote.BeloteCard]] = {}
    if taker != me and turned not in played:
        known[taker] = [turned]
    mine = set(observation.hand)
    pool = [c for c in belote.DECK if c not in mine and c not in played and c is not turned]
    sizes = {seat: 8 for seat in range(belote.SEATS) if seat != me}
    void: dict[int, set[int]] = {seat: set() for seat in sizes}
    trump_below: dict[int, int] = {}
    for trick in observation.tricks:
        led = trick.plays[0].card.suit
        best_trump = -1
        winning = trick.plays[0]
        for position, play in enumerate(trick.plays):
            card, seat = play.card, play.seat
            if seat != me:
                sizes[seat] -= 1
                if position:
                    partner_winning = winning.seat ^ seat == 2
                    if card.suit != led:
                        void[seat].add(led)
                        if card.suit != trump and led != trump and not partner_winning:
                            void[seat].add(trump)
                    if card.suit == trump and card.trump_order < best_trump:
                        # A trump below the best one: it held none higher.
                        trump_below[seat] = min(trump_below.get(seat, best_trump), best_trump)
            if card.suit == trump:
                best_trump = max(best_trump, card.trump_order)
            if belote.trick_strength(card, led, trump) > belote.trick_strength(
                winning.card, led, trump
            ):
                winning = play
    may_hold: dict[int, set[belote.BeloteCard] | None] = {
        seat: {
            c
            for c in pool
            if c.suit not in void[seat]
            and not (c.suit == trump and c.trump_order >= trump_below.get(seat, 99))
        }
        for seat in sizes
    }
    dealt = deal(rng, pool, sizes, may_hold, known)
    return [list(observation.hand) if seat == me else dealt[seat] for seat in range(belote.SEATS)]


def _belote_position(
    observation: belote.BeloteObservation,
    hands: list[list[belote.BeloteCard]],
    settings: belote.BeloteSettings,
) -> belote.BeloteState:
    """The deal from now on, with these hands, scored as the engine scores a whole deal."""
    on_table = belote.current_trick(observation)
    assert observation.trump is not None and observation.taker is not None
    state = belote.BeloteState.from_position(
        hands=hands,
        trump=observation.trump,
        taker=observation.taker,
        leader=on_table[0].seat if on_table else observation.seat,
        trick=[play.card for play in on_table],
        settings=settings,
    )
    # The tricks already won count for the contract and capot.
    state.card_points = list(observation.card_points)
    state.tricks_won = [
        sum(1 for t in observation.tricks if t.winner is not None and t.winner % 2 == team)
        for team in (0, 1)
    ]
    state.announcements = list(observation.announcements)
    return state


# ---- Bestia ----------------------------------------------------------------------------------


def _bestia(request: Request[bestia.BestiaObservation, Any], search: _Search) -> Any:
    observation = request.observation
    if observation.phase in _DECLARING and len(observation.hand) == 4:
        return _bestia_declare(request, search)
    if observation.phase is not bestia.Phase.PLAYING:
        return bestia_greedy.greedy(request)
    plays = {
        action.card: action for action in request.legal_actions if type(action) is bestia.PlayCard
    }
    if len(plays) == 1:
        return next(iter(plays.values()))
    rng = search.rng
    me = observation.seat
    trump = observation.trump
    opener = observation.opener
    assert opener is not None, "card play has an opener"
    n = len(observation.in_hand)
    players = [s for s in range(n) if observation.in_hand[s]]
    following = {s: players[(i + 1) % len(players)] for i, s in enumerate(players)}
    on_table = [(play.seat, play.card) for play in bestia.current_trick(observation)]
    done = sum(1 for trick in observation.tricks if trick.winner is not None)

    def sample() -> Callable[[bestia.BestiaCard], float]:
        hands = _bestia_hands(observation, players, rng)

        def play_out(card: bestia.BestiaCard) -> float:
            held = {seat: list(cards) for seat, cards in hands.items()}
            won = list(observation.tricks_won)
            trick = list(on_table)
            seat, number = me, done
            while True:
                held[seat].remove(card)
                trick.append((seat, card))
                if len(trick) < len(players):
                    seat = following[seat]
                else:
                    led = trick[0][1].suit
                    seat = max(trick, key=lambda p: bestia.trick_strength(p[1], led, trump))[0]
                    won[seat] += 1
                    number += 1
                    trick = []
                    if number == 4:
                        break
                card = _bestia_policy(held, seat, trick, trump)
            settlement = bestia.settle(observation.pot, opener, observation.assistants, won)
            return float(settlement.net[me])

        return play_out

    best = search.best(list(plays), sample, lambda card: card.index)
    return plays[best]


_DECLARING = {bestia.Phase.OPENING: bestia.Open, bestia.Phase.ASSISTING: bestia.Assist}


def _bestia_declare(request: Request[bestia.BestiaObservation, Any], search: _Search) -> Any:
    """Open (or assist) when the hands dealt after it say it pays: in each sampled deal the
    seats asked after this one assist by ``greedy``'s rule, every player exchanges by it and
    the tricks are played out by the playout policy; passing is counted as 0 (out of the
    hand, the antes already paid)."""
    observation = request.observation
    me = observation.seat
    trump = observation.trump
    n = len(observation.in_hand)
    joining = _DECLARING[observation.phase]
    opener = me if joining is bestia.Open else observation.opener
    assert opener is not None
    seen = set(observation.hand)
    seen.update(observation.turned_cards[1:] if observation.stolen else observation.turned_cards)
    pool = [c for c in bestia.DECK if c not in seen]
    others = [s for s in range(n) if observation.in_hand[s] and s != me]
    # The seats still to be asked to assist: after this one, up to the opener.
    later = [(me + k) % n for k in range(1, n)]
    later = later[: later.index(opener)] if opener in later else later
    later = [s for s in later if observation.in_hand[s] and s != opener]
    rng = search.rng
    total = 0.0
    samples = 0
    for number in range(search.deals):
        if number and time.monotonic() > search.deadline:
            break
        samples += 1
        cards = list(pool)
        rng.shuffle(cards)
        hands = {seat: [cards.pop() for _ in range(4)] for seat in others}
        hands[me] = list(observation.hand)
        assistants = [*observation.assistants] if joining is bestia.Assist else []
        if joining is bestia.Assist:
            assistants.append(me)
        assistants += [s for s in later if bestia_greedy.wants_to_assist(hands[s], trump)]
        if not assistants:
            total += observation.pot  # unopposed: the opener takes the pot
            continue
        players = sorted({opener, *assistants})
        for seat in players:  # the accomodo, by greedy's rule, from the rest of the deck
            hands[seat] = [c if bestia_greedy.keeps(c, trump) else cards.pop() for c in hands[seat]]
        held = {seat: hands[seat] for seat in players}
        order = [s for s in ((opener + k) % n for k in range(n)) if s in held]
        won = [0] * n
        leader = opener
        for _ in range(4):
            start = order.index(leader)
            trick: list[tuple[int, bestia.BestiaCard]] = []
            for seat in order[start:] + order[:start]:
                card = _bestia_policy(held, seat, trick, trump)
                held[seat].remove(card)
                trick.append((seat, card))
            led = trick[0][1].suit
            leader = max(trick, key=lambda p: bestia.trick_strength(p[1], led, trump))[0]
            won[leader] += 1
        total += bestia.settle(observation.pot, opener, assistants, won).net[me]
    if total / samples > 0:
        return next(a for a in request.legal_actions if type(a) is joining)
    return next(a for a in request.legal_actions if type(a) is bestia.Pass)


def _bestia_legal(
    hand: list[bestia.BestiaCard], trick: list[tuple[int, bestia.BestiaCard]], trump: int
) -> list[bestia.BestiaCard]:
    """The rules page's duties: follow the led suit; void in it, trump if holding one."""
    if trick:
        led = trick[0][1].suit
        follow = [c for c in hand if c.suit == led]
        if follow:
            return follow
        trumps = [c for c in hand if c.suit == trump]
        if trumps:
            return trumps
    return hand


def _bestia_policy(
    held: dict[int, list[bestia.BestiaCard]],
    seat: int,
    trick: list[tuple[int, bestia.BestiaCard]],
    trump: int,
) -> bestia.BestiaCard:
    """The playout's card: the ``greedy`` bot's rule, with every hand in view.  Leading, a
    master card (none higher of its suit in another hand), a trump first; else the lowest.
    Following, the cheapest card that wins the trick now, else the lowest."""
    cards = _bestia_legal(held[seat], trick, trump)
    if len(cards) == 1:
        return cards[0]
    if not trick:
        masters = [
            c
            for c in cards
            if not any(
                o.suit == c.suit and o.rank > c.rank
                for other, hand in held.items()
                if other != seat
                for o in hand
            )
        ]
        if masters:
            return max(masters, key=lambda c: (c.suit == trump, c.rank, -c.index))
        return min(cards, key=lambda c: bestia_greedy.lowness(c, trump))
    led = trick[0][1].suit
    to_beat = max(bestia.trick_strength(card, led, trump) for _, card in trick)
    winners = [c for c in cards if bestia.trick_strength(c, led, trump) > to_beat]
    if winners:
        return min(winners, key=lambda c: bestia.trick_strength(c, led, trump))
    return min(cards, key=lambda c: bestia_greedy.lowness(c, trump))


def _bestia_hands(
    observation: bestia.BestiaObservation, players: list[int], rng: random.Random
) -> dict[int, list[bestia.BestiaCard]]:
    """The players' hands of one deal consistent with what ``observation``'s seat saw.

    Unseen are the cards neither in its hand, nor played, nor face up on the table (turned;
    the first one too unless the dealer stole it): the other hands are drawn from them, the
    rest being the stock, the folded pile and the discards, which nobody holds."""
    me = observation.seat
    trump = observation.trump
    seen = set(observation.hand)
    seen.update(play.card for trick in observation.tricks for play in trick.plays)
    seen.update(observation.turned_cards[1:] if observation.stolen else observation.turned_cards)
    pool = [c for c in bestia.DECK if c not in seen]
    void: dict[int, set[int]] = {seat: set() for seat in players if seat != me}
    for trick in observation.tricks:
        led = trick.plays[0].card.suit
        for play in trick.plays[1:]:
            if play.seat != me and play.card.suit != led:
                void[play.seat].add(led)
                if play.card.suit != trump:
                    void[play.seat].add(trump)
    sizes = {seat: observation.hand_sizes[seat] for seat in void}
    may_hold: dict[int, set[bestia.BestiaCard] | None] = {
        seat: {c for c in pool if c.suit not in suits} for seat, suits in void.items()
    }
    hands = deal(rng, pool, sizes, may_hold)
    hands[me] = list(observation.hand)
    return hands


_GAMES: dict[str, Callable[[Request[Any, Any], _Search], Any]] = {
    "belote": _belote,
    "bestia": _bestia,
}
