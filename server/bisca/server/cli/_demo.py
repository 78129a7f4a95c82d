"""A readable table of one Belote match between random players (the pre-referee demo)."""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator

from bisca.engine import InvalidSettingsError
from bisca.engine.belote import (
    BeloteAnnounced,
    BeloteSettings,
    BeloteState,
    BidMade,
    CardPlayed,
    CardTurned,
    DealScored,
    DealStarted,
    DealVoided,
    MatchEnded,
    TrickWon,
)
from bisca.server.records import MAX_SEED

from ._args import Commands, handle, whole


def add_commands(commands: Commands) -> None:
    demo = commands.add_parser("demo", help="print a short Belote match between random players")
    demo.add_argument("--seed", type=whole(0, MAX_SEED), default=2026)
    demo.add_argument("--deals", type=whole(1), default=4)
    handle(demo, run_demo)


def run_demo(args: argparse.Namespace) -> int:
    try:
        lines = list(render_belote_match(args.seed, args.deals))
    except InvalidSettingsError as problem:  # the engine's own bounds (deals 1..1000)
        print(f"bisca demo: --deals: {problem}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return 0


def render_belote_match(seed: int, deals: int) -> Iterator[str]:
    """Play a match with uniformly random legal actions and describe it line by line."""
    state = BeloteState(BeloteSettings(deals=deals), seed)
    players = random.Random(seed)
    while not state.is_over:
        state.apply(players.choice(state.legal_actions()))
    yield f"Belote, {deals} deals, seed {seed}, four random players; teams 0+2 and 1+3"
    trick: list[str] = []
    for event in state.public_events():
        match event:
            case DealStarted(deal_number=number, dealer=dealer):
                yield ""
                yield f"Deal {number + 1} — dealer seat {dealer}"
            case CardTurned(card=card):
                yield f"  turned card {card}"
            case BidMade(seat=seat, round=round_number, suit=suit):
                said = "pass" if suit is None else f"take {suit.name.lower()}"
                yield f"  bid (round {round_number}) seat {seat}: {said}"
            case DealVoided():
                yield "  everybody passed twice: the deal is void"
            case CardPlayed(seat=seat, card=card):
                trick.append(f"{seat}:{card!s:>3}")
            case BeloteAnnounced(seat=seat, announcement=announcement):
                trick[-1] += f" ({announcement.value}!)"
            case TrickWon(trick_number=number, winner=winner, points=points):
                plays = "  ".join(trick)
                yield f"  trick {number + 1}: {plays:<44} won by seat {winner} ({points})"
                trick = []
            case DealScored(result=result, match_scores=totals):
                if not result.void:
                    verdict = "made" if result.contract_made else "FAILED"
                    capot = ", capot" if result.capot else ""
                    yield (
                        f"  card points {result.card_points[0]}/{result.card_points[1]}, "
                        f"belote {result.belote_points[0]}/{result.belote_points[1]}{capot}: "
                        f"contract {verdict}"
                    )
                yield (
                    f"  deal score {result.scores[0]} / {result.scores[1]}   "
                    f"match {totals[0]} / {totals[1]}"
                )
            case MatchEnded(match_scores=totals):
                yield ""
                if totals[0] == totals[1]:
                    yield f"Draw at {totals[0]}"
                else:
                    winner = 0 if totals[0] > totals[1] else 1
                    yield f"Team {winner} wins {max(totals)} to {min(totals)}"
