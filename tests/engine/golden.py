"""Golden digests of seeded random matches: what the engine shows must never change by accident.

For every game and seat count, a few hundred matches (their settings varied by seed) are played
with actions drawn from the engine's own generator (not :mod:`random`, whose algorithms may
change between Python versions).  Everything a match shows goes into one SHA-256 digest per
game and seat count: at every decision the seat to act, how many events came before it, the
legal-action list, the default action and the acting seat's observation; at the end every
seat's observation, every event with its audience (which holds every deal and refill of the
stock), and the outcome.

Values are written through :class:`Encoder`, a canonical text that names every dataclass, enum
member, card, tuple and list (so a tuple that became a list, or an enum that became an int,
changes the digest too) without relying on ``repr``'s format.

``python -m tests.engine.golden`` prints the digests in the format of ``golden.json``; only an
intended change of the rules (with ``ENGINE_VERSION`` bumped) may write them anew.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from operator import attrgetter
from pathlib import Path
from typing import Any

from bisca.engine import Card, DealRng, GameState
from bisca.engine.belote import BeloteSettings, BeloteState
from bisca.engine.bestia import BestiaSettings, BestiaState

State = GameState[Any, Any, Any]
GOLDEN_FILE = Path(__file__).with_name("golden.json")
#: The generator stream that picks the random actions (the deals use stream 0).
_ACTION_STREAM = 977
_FIELDS: dict[type, Callable[[object], tuple[object, ...]]] = {}


def _fields_of(value: object) -> tuple[object, ...]:
    """The values of a dataclass's fields, in order."""
    kind = type(value)
    getter = _FIELDS.get(kind)
    if getter is None:
        if not dataclasses.is_dataclass(kind):
            raise TypeError(f"no canonical form for a {kind.__name__}")
        names = [field.name for field in dataclasses.fields(kind)]
        many = attrgetter(*names) if names else None

        def getter(value: object) -> tuple[object, ...]:
            if many is None:
                return ()
            got = many(value)
            return got if len(names) > 1 else (got,)

        _FIELDS[kind] = getter
    return getter(value)


class Encoder:
    """The canonical text of game values (dataclasses, enums, cards, tuples, lists, ints,
    bools, strings, ``None``): a dataclass is its type's name and its fields in order, an enum
    member its class's and its own name, a card its class's name and its label.

    Game values are immutable, and a match's records share most of theirs (interned actions
    and cards, every earlier trick, every hand result): the text of each value but a list is
    kept by identity, with the value itself, so that its identity is not reused while the
    encoder lives.
    """

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}
        self._alive: list[object] = []

    def __call__(self, value: object) -> str:
        text = self._texts.get(id(value))
        if text is not None:
            return text
        kind = type(value)
        if kind is list:  # a list may change: its text is never kept
            return "[" + self._items(value) + "]"  # type: ignore[arg-type]
        text = self._text(value, kind)
        self._texts[id(value)] = text
        self._alive.append(value)
        return text

    def _items(self, items: Sequence[object]) -> str:
        try:  # most containers hold values already known: joined without a call per item
            return ",".join(map(self._texts.__getitem__, map(id, items)))
        except KeyError:
            return ",".join(map(self, items))

    def _text(self, value: object, kind: type) -> str:
        if kind is tuple:  # immutable, and so is everything a game value holds
            return "(" + self._items(value) + ")"  # type: ignore[arg-type]
        if value is None or kind is bool or kind is str:
            return repr(value)
        if kind is int:
            return str(value)
        if isinstance(value, Enum):
            return f"{kind.__name__}.{value.name}"
        if isinstance(value, Card):
            return f"{kind.__name__}:{value.label}"
        return kind.__name__ + "{" + ";".join(map(self, _fields_of(value))) + "}"

    def changes(self, value: object, before: object) -> str:
        """The text of dataclass ``value``, each field equal to ``before``'s (of the same type)
        written ``=``: one decision's observation after the one before it, most of which it
        repeats.  (A match's first observation is written whole, so the types inside its
        fields are pinned there.)"""
        kind = type(value)
        now = _fields_of(value)
        if type(before) is not kind:
            return kind.__name__ + "{" + ";".join(map(self, now)) + "}"
        then = _fields_of(before)
        return (
            kind.__name__
            + "{"
            + ";".join(
                "=" if type(old) is type(new) and old == new else self(new)
                for old, new in zip(then, now, strict=True)
            )
            + "}"
        )


@dataclass(frozen=True)
class GoldenCase:
    """One game and seat count: how many matches, and the match of each seed."""

    name: str
    matches: int
    make: Callable[[int], State]


def _belote(seed: int) -> State:
    variants = (
        BeloteSettings(deals=2, first_dealer=seed % 4),
        BeloteSettings(deals=2, duplicate=True),
        BeloteSettings(target_score=250, max_deals=4),
    )
    return BeloteState(variants[seed % len(variants)], seed)


def _bestia(seats: int) -> Callable[[int], State]:
    def make(seed: int) -> State:
        variants = (
            # One round is the giro: a dealer deals again while the pot is not empty, up to
            # giro_max_hands, then the pot is split.
            BestiaSettings(seats=seats, rounds=1, giro_max_hands=1, first_dealer=seed % seats),
            BestiaSettings(seats=seats, rounds=1, giro_max_hands=2, ante_mode="dealer", stake=3),
            BestiaSettings(seats=seats, rounds=2, giro_max_hands=1, blind_raises=False, stake=7),
        )
        return BestiaState(variants[seed % len(variants)], seed)

    return make


CASES = (
    GoldenCase("belote", 300, _belote),
    *(GoldenCase(f"bestia-{seats}", 200, _bestia(seats)) for seats in range(4, 8)),
)


@dataclass(frozen=True)
class Changed:
    """A record written as its changes from the previous record of this kind."""

    value: object


def _records(state: State, seed: int) -> Iterator[object]:
    """Everything the match of ``seed`` shows, as it is played at random to its end."""
    pick = DealRng.for_deal(seed, 0, _ACTION_STREAM).below
    while not state.is_over:
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions()
        yield seat
        yield state.event_count  # which events came before this decision
        yield legal
        yield state.default_action()
        yield Changed(state.observation(seat))
        state.apply(legal[pick(len(legal))])
    yield tuple(state.observation(seat) for seat in range(state.num_seats))
    events = state.all_events()
    yield [audience for audience, _ in events]
    yield [event for _, event in events]
    outcome = state.outcome
    assert outcome is not None
    yield outcome.scores
    yield outcome.ranks


def digest(case: GoldenCase) -> str:
    """The SHA-256 of everything ``case``'s matches show, in hex."""
    sha = hashlib.sha256()
    for seed in range(case.matches):
        encode = Encoder()
        before: object = None
        lines = [f"match {seed}"]
        for record in _records(case.make(seed), seed):
            if isinstance(record, Changed):
                lines.append(encode.changes(record.value, before))
                before = record.value
            else:
                lines.append(encode(record))
        sha.update("\n".join(lines).encode())
    return sha.hexdigest()


def recorded() -> dict[str, str]:
    digests: dict[str, str] = json.loads(GOLDEN_FILE.read_text())
    return digests


if __name__ == "__main__":
    print(json.dumps({case.name: digest(case) for case in CASES}, indent=2))
