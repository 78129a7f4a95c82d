"""Plain-text rendering of match logs and live matches, for people.

One mechanism serves every game: an engine event or action is printed from its dataclass
fields (cards by their labels, enums by name), with a short phrase per event type where the
field list alone would read badly.

Numbers for people count from 1 where a player counts from 1: tricks ("trick 1" is the first
of a deal), deals and hands ("deal 1"), and places ("place 1" is first; partners share one,
so a losing Belote team is 2nd, as :func:`bisca.server.records.places` counts).  Seats and steps
keep the protocol's numbers (seat 0, step 0), so that they match ``--seat N``, ``?step=`` and
what a bot received.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

from bisca import wire
from bisca.engine import Action, Card, Event, belote, bestia, plays_on_the_table
from bisca.engine.belote import BidMade
from bisca.server.records import game_places
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

_TEMPLATES: dict[str, str] = {
    # Belote
    "DealStarted": "— deal {deal_number} (dealer seat {dealer}) —",
    "CardTurned": "turned card {card}",
    "BidMade": "seat {seat} bids {suit} (round {round})",
    "DealVoided": "everybody passed twice: deal {deal_number} is void",
    "BeloteAnnounced": "seat {seat} announces {announcement}",
    # Bestia
    "HandStarted": "— hand {hand_number} (dealer seat {dealer}, giro {giro}, "
    "dealer's hand {dealer_hand}) —",
    "AntePaid": "seat {seat} antes {amount}",
    "TrumpTurned": "trump turned: {card} (trump #{number})",
    "BlindMove": "seat {seat}: {move} ({amount} chips)",
    "Folded": "seat {seat} folds its cards",
    "TrumpStolen": "dealer seat {seat} steals the turned card {card}",
    "StealDeclined": "dealer seat {seat} does not steal",
    "HandLooked": "seat {seat} looks at its cards: {cards}",
    "Declared": "seat {seat}: {declaration} (trump #{trump_number})",
    "Exchanged": "seat {seat} exchanges {count} card(s)",
    "Discarded": "seat {seat} discards {cards}",
    "StockRefilled": "the stock is refilled from the {source}: {cards}",
    "CardBurnt": "the dealer burns {card}",
    "DealerDiscarded": "dealer seat {seat} discards a card",
    "PotSplit": "the pot is split: {shares}",
    # Both
    "CardsDealt": "seat {seat} is dealt {cards}",
    "CardPlayed": "seat {seat} plays {card}",
    "TrickWon": "trick {trick_number} won by seat {winner}",
}

#: Fields shown counted from 1 (the engine and the protocol count them from 0): tricks, deals
#: and hands.
_COUNTED_FROM_ONE = frozenset({"trick_number", "deal_number", "hand_number"})

#: How each game's cards are written, for the top of every view that shows cards.
CARD_LEGENDS = {
    "belote": "cards: rank then suit; 7 8 9 10 J(ack) Q(ueen) K(ing) A(ce); "
    "♠ spades, ♥ hearts, ♦ diamonds, ♣ clubs",
    "bestia": "cards: rank then suit letter; 2-7, J fante, Q cavallo, K re, A asso; "
    "D denari (coins), C coppe (cups), S spade (swords), B bastoni (clubs)",
}


def value_text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, Card):
        return value.label
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Enum):
        return value.name.lower()
    if isinstance(value, tuple | list):
        return " ".join(value_text(item) for item in value) or "none"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return fields_text(value)
    return str(value)


def fields_text(value: object) -> str:
    """A dataclass's fields as ``name value, ...`` (anything else as its text)."""
    if not dataclasses.is_dataclass(value):
        return str(value)
    parts = []
    for item in dataclasses.fields(value):
        parts.append(f"{item.name.replace('_', ' ')} {_shown(value, item.name)}")
    return ", ".join(parts)


def _words(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


def event_text(event: Event) -> str:
    name = type(event).__name__
    template = _TEMPLATES.get(name)
    if isinstance(event, BidMade) and event.suit is None:
        return f"seat {event.seat} passes (round {event.round})"
    if template is not None:
        values = {f.name: _shown(event, f.name) for f in dataclasses.fields(event)}
        return template.format(**values)
    if name == "TrickWon" or not dataclasses.fields(event):
        return _words(name)
    return f"{_words(name)}: {fields_text(event)}"


def _shown(holder: object, name: str) -> str:
    """The field ``name`` of an event (or of a value inside one: a deal's result) as read."""
    value = getattr(holder, name)
    counted = name in _COUNTED_FROM_ONE and isinstance(value, int)
    return value_text(value + 1 if counted else value)


def action_text(action: Action) -> str:
    name = _words(type(action).__name__)
    if not dataclasses.fields(action):
        return name
    values = " ".join(value_text(getattr(action, f.name)) for f in dataclasses.fields(action))
    return f"{name} {values}"


@dataclass
class Frame:
    """What happened at one step of a match (frame 0: before the first decision)."""

    step: int | None
    lines: list[str] = field(default_factory=list)


def log_frames(entries: Iterable[log_pb2.LogEntry], seat: int | None) -> Iterator[Frame]:
    """The frames of a log, omniscient (``seat`` None) or as ``seat`` saw them."""
    game = ""
    names: list[str] = []
    frame = Frame(None)
    for entry in entries:
        kind = entry.WhichOneof("kind")
        if kind == "header":
            header = entry.header
            game = wire.game_name(header.game)
            names = [s.bot_name for s in header.seats]
            settings = wire.decode_game_settings(game, header.settings)
            view = "omniscient view" if seat is None else f"as seat {seat} ({names[seat]}) saw it"
            frame.lines.append(f"match {header.match_id}: {game}, {view}")
            frame.lines.append(f"settings: {fields_text(settings)}")
            frame.lines.append("seats: " + ", ".join(f"{n}={b}" for n, b in enumerate(names)))
            if game in CARD_LEGENDS:
                frame.lines.append(CARD_LEGENDS[game])
        elif kind == "events":
            for logged in entry.events.events:
                if seat is None or logged.audience >> seat & 1:
                    _, event = wire.decode_game_event(logged.event)
                    hidden = " [hidden from every seat]" if logged.audience == 0 else ""
                    frame.lines.append(f"  {event_text(event)}{hidden}")
        elif kind == "step":
            yield frame
            step = entry.step
            if step.seat >= len(names):  # each step line names the seat's bot
                raise ValueError(
                    f"step {step.step} is seat {step.seat}'s, but the header names "
                    f"{len(names)} seat(s)"
                )
            frame = Frame(step.step)
            if seat is not None and step.seat == seat:
                frame.lines += seat_view_lines(game, step)
            if seat is None or step.seat == seat:
                frame.lines.append(_step_line(game, step, names))
        elif kind == "footer":
            yield frame
            frame = Frame(None)
            footer = entry.footer
            frame.lines.append(f"end: {status_text(footer.status)} after {footer.steps} steps")
            shown = game_places(game, footer.seats)
            for result, place in zip(footer.seats, shown, strict=True):
                forfeited = result.end == pb.SEAT_END_FORFEITED
                end = "forfeited: " + result.forfeit_reason if forfeited else "completed"
                frame.lines.append(
                    f"  seat {result.seat} {result.bot_name}: score {result.score}, "
                    f"place {place}, {end}"
                )
            if footer.reason:
                frame.lines.append(f"  reason: {footer.reason}")
    yield frame


def seat_view_lines(game: str, step: log_pb2.LogStep) -> list[str]:
    """What the seat to act saw when it was asked (the request the log keeps): its hand, the
    trick on the table, the trump, its clock, and the actions it was offered."""
    if not step.HasField("observation"):
        return []
    _, observation = wire.decode_game_observation(step.observation)
    # (Each game's trick plays are its own CardPlayed: name both, or the plays are objects.)
    table: Sequence[belote.CardPlayed | bestia.CardPlayed] = plays_on_the_table(observation.tricks)
    trick = ", ".join(f"seat {play.seat} {play.card.label}" for play in table) or "none"
    offered = [action_text(wire.decode_game_action(game, a)) for a in step.legal_actions]
    return [
        f"  seat {step.seat} sees: hand {value_text(observation.hand)}; trick on the table: "
        f"{trick}; trump {value_text(observation.trump)}; "
        f"clock {step.bank_left_us / 1000:.0f} ms left in the bank",
        f"  offered {len(offered)}: {', '.join(offered) or 'nothing'}",
    ]


def status_text(number: int) -> str:
    return pb.MatchStatus.Name(number).removeprefix("MATCH_STATUS_").lower()


def _step_line(game: str, step: log_pb2.LogStep, names: list[str]) -> str:
    action = wire.decode_game_action(game, step.action)
    used = step.used_us / 1000
    line = f"step {step.step}: seat {step.seat} ({names[step.seat]}) {action_text(action)}"
    if step.request_id:
        line += f"  [{used:.0f} ms]"
    for attempt in step.rejected:
        try:
            tried = action_text(wire.decode_game_action(game, attempt.action))
        except Exception:  # a malformed attempt is shown by its message alone
            tried = "a malformed action"
        line += f"\n    rejected: {tried}: {attempt.message}"
    if step.substituted:
        line += f"\n    default action played by the referee: {step.substitution_reason}"
    return line
