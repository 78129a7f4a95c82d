"""The C++ SDK deals a match's start again from its seed as the engine does
(``clients/cpp/include/bisca/client/deal_rng.h`` and ``deal_start.h``), so that its deal check
catches a server that committed to one seed and dealt from another.

The engine is the reference: its generator's outputs (the pins of tests/engine/test_rng.py, then
many streams compared with :class:`bisca.engine.DealRng`), and the start of hundreds of seeded
matches of both games, with several seat counts and settings (Belote's duplicate mode
included), every event of each start compared with the engine's, byte for byte, and the
verdict of ``start_dealt_from`` for each seat compared with the Python SDK's (the same words):
on what the engine showed the seat, on what another seed shows it, with an event left out, and
with another seat's event of the start sent to it too.
Then real matches on the real server: each C++ seat deals its start again and says verified.

``sdk_test`` (``deal-starts``, ``rng``, ``first-bot``) comes from test_cpp_bot.py's build.
"""

from __future__ import annotations

import functools
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bisca import wire
from bisca.client._deal import ShownStart, start_dealt_from
from bisca.engine import GAMES, DealRng, MalformedActionError
from bisca.v1 import arena_pb2, belote_pb2, bestia_pb2

from . import test_cpp_bot
from .test_cpp_bot import problems

# The build's fixtures (one build for every C++ test file).
cpp_bot = test_cpp_bot.cpp_bot
sdk_test = test_cpp_bot.sdk_test

MASK64 = (1 << 64) - 1


def run(sdk_test: Path, *arguments: str) -> list[str]:
    done = subprocess.run([str(sdk_test), *arguments], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


# ---- the generator -----------------------------------------------------------------------------


GOLDEN_GAMMA = 0x9E3779B97F4A7C15


def _unmix64(z: int) -> int:
    """The inverse of the engine's SplitMix64 finaliser (each step is a bijection)."""

    def unshift(value: int, shift: int) -> int:
        original = value
        for _ in range(64 // shift):
            original = value ^ (original >> shift)
        return original

    z = unshift(z, 31)
    z = z * pow(0x94D049BB133111EB, -1, 1 << 64) & MASK64
    z = unshift(z, 27)
    z = z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64) & MASK64
    return unshift(z, 30)


def rejecting_states() -> list[tuple[int, int]]:
    """(n, state) whose first draw ``below(n)`` must reject, or only just not: random draws
    almost never reach the edge (the odds are below n / 2^64), so these states are built
    backwards from the word drawn."""
    chosen = []
    for n in [3, 10, 40, 37, 1000, 2**31 + 1, 2**32 - 1]:
        threshold = (1 << 64) % n
        # z * n = r (mod 2^64) for r a multiple of n's power of two: z = r / 2^a * m^-1, m odd.
        twos = (n & -n).bit_length() - 1
        odd, width = n >> twos, 64 - twos
        largest = (threshold - 1) >> twos << twos  # the highest word product still rejected
        for product in sorted({0, largest, threshold}):  # (the threshold itself is accepted)
            word = (product >> twos) * pow(odd, -1, 1 << width) % (1 << width)
            state = (_unmix64(word) - GOLDEN_GAMMA) & MASK64
            assert DealRng(state).copy().next64() == word and word * n & MASK64 == product
            chosen.append((n, state))
    return chosen


def rng_cases() -> list[tuple[str, list[int]]]:
    """Cases of ``sdk_test rng`` and the engine's answers: the outputs, then the state after."""
    rng = random.Random(20240501)
    cases: list[tuple[str, list[int]]] = []

    def case(line: str, generator: DealRng, outputs: list[int]) -> None:
        cases.append((line, [*outputs, generator.state]))

    for state in [0, 1, MASK64, *(rng.getrandbits(64) for _ in range(20))]:
        generator = DealRng(state)
        case(f"raw {state} next64 5", generator, [generator.next64() for _ in range(5)])
    for n, state in rejecting_states():
        generator = DealRng(state)
        case(f"raw {state} below {n} 4", generator, [generator.below(n) for _ in range(4)])
    seeds = [0, 1, 7, 42, 2**53 + 1, 2**63, MASK64, *(rng.getrandbits(64) for _ in range(30))]
    for seed in seeds:
        for deal, stream in [(0, 0), (1, 0), (7, 1), (2, 2), (999, 0), (2**40, 3)]:
            source = f"deal {seed} {deal} {stream}"
            generator = DealRng.for_deal(seed, deal, stream)
            case(f"{source} next64 4", generator, [generator.next64() for _ in range(4)])
            for n in [1, 2, 3, 10, 32, 40, 63, 64, 100, 2**31, 2**32 - 1, rng.randrange(1, 2**32)]:
                generator = DealRng.for_deal(seed, deal, stream)
                case(f"{source} below {n} 6", generator, [generator.below(n) for _ in range(6)])
    for seed in seeds[:12]:
        # Whole shuffles, and Bestia's partial ones (4 cards a seat and the trump, 4 to 7 seats).
        partial = [(40, 4 * seats + 1) for seats in range(4, 8)]
        whole = [(size, max(size - 1, 0)) for size in (0, 1, 2, 10, 32, 40, 63, 64, 100)]
        for size, steps in [*whole, *partial, (100, 10)]:
            items = list(range(size))
            generator = DealRng.for_deal(seed, size, 1)
            generator.shuffle_top(items, steps)
            case(f"deal {seed} {size} 1 shuffle {size} {steps}", generator, items)
    return cases


def test_the_generator_is_the_engines(sdk_test: Path, tmp_path: Path) -> None:
    pins = [
        # tests/engine/test_rng.py: SplitMix64's published reference, then the engine's streams.
        ("raw 0 next64 2", [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]),
        ("deal 42 0 0 next64 3", [5435267632349149299, 7523804766597586011, 253944492032632687]),
        ("deal 42 7 1 below 10 10", [1, 7, 6, 8, 8, 2, 8, 1, 2, 6]),
        ("deal 1 2 0 shuffle 10 9", [2, 0, 5, 7, 8, 3, 4, 9, 1, 6]),
    ]
    cases = rng_cases()
    path = tmp_path / "rng.txt"
    path.write_text("".join(f"{case}\n" for case, _ in pins + cases))
    lines = run(sdk_test, "rng", str(path))
    assert len(lines) == len(pins) + len(cases)
    for (case, pinned), line in zip(pins, lines, strict=False):
        assert [int(word) for word in line.split()][:-1] == pinned, case
    for (case, expected), line in zip(cases, lines[len(pins) :], strict=True):
        assert [int(word) for word in line.split()] == expected, case


# ---- each game's start -------------------------------------------------------------------------


def arena_settings(game: str, **fields: Any) -> arena_pb2.GameSettings:
    """A game's settings as MatchStarted carries them (only ``fields`` present)."""
    module = belote_pb2 if game == "belote" else bestia_pb2
    return arena_pb2.GameSettings(**{game: module.Settings(**fields)})


belote = functools.partial(arena_settings, "belote")
bestia = functools.partial(arena_settings, "bestia")


#: Settings as a server sends them (absent fields: the engine's defaults), cycled over the seeds.
SETTINGS: dict[str, list[arena_pb2.GameSettings]] = {
    "belote": [
        arena_pb2.GameSettings(),
        belote(),
        *(belote(first_dealer=dealer, deals=1) for dealer in range(4)),
        belote(duplicate=True, deals=2),
        belote(duplicate=True, deals=8, first_dealer=3),
        belote(target_score=501, max_deals=24, duplicate=True),
        belote(target_score=1000, first_dealer=1),
    ],
    "bestia": [
        arena_pb2.GameSettings(),
        *(
            bestia(
                seats=seats,
                first_dealer=dealer,
                ante_mode=mode,
                stake=stake,
                rounds=rounds,
                blind_raises=blind,
            )
            for seats in range(4, 8)
            for dealer, mode, stake, rounds, blind in [
                (0, "all", 10, 2, True),
                (seats - 1, "dealer", 1, 1, True),
                (seats // 2, "all", 1_000_000, 1, False),
                (1, "dealer", 25, 3, False),
            ]
        ),
        bestia(seats=7),
        bestia(ante_mode="dealer", giro_max_hands=3),
    ],
}
SEEDS_PER_GAME = 240

#: Settings the engine refuses: no match was dealt, nothing can be dealt again.
REFUSED: list[tuple[str, arena_pb2.GameSettings]] = [
    ("belote", belote(first_dealer=4)),
    ("belote", belote(deals=0)),
    ("belote", belote(deals=3, duplicate=True)),
    ("belote", belote(target_score=0)),
    ("belote", belote(target_score=9, max_deals=5, duplicate=True)),
    ("belote", bestia()),
    ("bestia", bestia(seats=8)),
    ("bestia", bestia(seats=3)),
    ("bestia", bestia(stake=0)),
    ("bestia", bestia(ante_mode="some")),
    ("bestia", bestia(rounds=101)),
    ("bestia", bestia(giro_max_hands=0)),
    ("bestia", bestia(seats=4, first_dealer=4)),
    ("bestia", belote()),
]

Shown = dict[int, arena_pb2.GameEvent]


def engine_start(game: str, settings: Any, seed: int) -> list[tuple[int, arena_pb2.GameEvent]]:
    """Every event the engine records before a match's first action, with its audience."""
    state = GAMES[game].new_match(settings, seed)
    return [
        (audience, wire.encode_game_event(game, index, event))
        for index, (audience, event) in enumerate(state.all_events(0))
    ]


def shown_to(start: list[tuple[int, arena_pb2.GameEvent]], seat: int) -> Shown:
    return {event.index: event for audience, event in start if audience >> seat & 1}


def python_verdict(game: str, settings: Any, seed: int, seat: int, shown: Shown) -> str | None:
    """The Python SDK's verdict (its words) on a seat shown ``shown``, by index, and nothing
    else of the match (never asked, no look at its cards)."""
    start = ShownStart()
    for event in shown.values():
        start.show(event)
    return start_dealt_from(game, settings, seed, seat, start)


def case_line(
    game: str, message: arena_pb2.GameSettings, seed: int, seat: int, shown: Shown
) -> str:
    return json.dumps(
        {
            "game": game,
            "settings": message.SerializeToString().hex(),
            "seed": str(seed),
            "seat": str(seat),
            "shown": [f"{i}:{event.SerializeToString().hex()}" for i, event in shown.items()],
        }
    )


def start_cases() -> tuple[list[str], list[tuple[str, str]]]:
    """The lines of ``sdk_test deal-starts`` and, for each, the engine's start (``events`` and
    each event as ``AUDIENCE:hex``) and the Python SDK's verdict for the seat (``verdict ok``
    or why not)."""
    rng = random.Random(7)
    lines: list[str] = []
    expected: list[tuple[str, str]] = []
    for game, variants in SETTINGS.items():
        seeds = [0, 1, 7, 999, 2**63, MASK64]
        seeds += [rng.getrandbits(64) for _ in range(SEEDS_PER_GAME - len(seeds))]
        for number, seed in enumerate(seeds):
            message = variants[number % len(variants)]
            settings = wire.decode_game_settings(
                game, message if message.WhichOneof("game") else None
            )
            start = engine_start(game, settings, seed)
            events = "events " + " ".join(
                f"{audience}:{event.SerializeToString().hex()}" for audience, event in start
            )
            other = engine_start(game, settings, rng.getrandbits(64))
            seats = GAMES[game].seats(settings)
            chosen = rng.randrange(seats)
            honest = [(seat, shown_to(start, seat)) for seat in range(seats)]
            rigged = shown_to(other, chosen)  # the seat's start from another seed
            missing = shown_to(start, chosen)
            del missing[rng.choice(sorted(missing))]
            # Another seat's event of the start (or the omniscient record's) sent to it too.
            extra = shown_to(start, chosen)
            index = rng.choice(
                [event.index for audience, event in start if not audience >> chosen & 1]
            )
            extra[index] = start[index][1]
            cases = [
                *honest,
                (chosen, rigged),
                (chosen, missing),
                (chosen, dict(sorted(extra.items()))),
            ]
            for seat, shown in cases:
                why = python_verdict(game, settings, seed, seat, shown)
                lines.append(case_line(game, message, seed, seat, shown))
                expected.append((events, f"verdict {why or 'ok'}"))
    for game, message in REFUSED:
        with pytest.raises((ValueError, MalformedActionError)):
            wire.decode_game_settings(game, message)
        lines.append(case_line(game, message, 7, 0, {}))
        expected.append(("error", "error"))
    return lines, expected


def test_every_start_is_dealt_as_the_engine_deals_it(sdk_test: Path, tmp_path: Path) -> None:
    lines, expected = start_cases()
    path = tmp_path / "starts.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    output = run(sdk_test, "deal-starts", str(path))
    assert len(output) == 2 * len(lines)
    verdicts: dict[str, int] = {}
    for number, (line, (events, verdict)) in enumerate(zip(lines, expected, strict=True)):
        got_events, got_verdict = output[2 * number], output[2 * number + 1]
        if events == "error":
            assert got_events.startswith("error ") and got_verdict == got_events, line
            continue
        assert got_events == events, f"{line}\n{got_events}\n{events}"
        assert got_verdict == verdict, line
        kind = re.sub(r"event \d+ |seed \d+ deals: .*", "", verdict)
        verdicts[kind] = verdicts.get(kind, 0) + 1
    # Each kind of answer was given many times (a rigged Bestia start can deal the same trump).
    assert verdicts["verdict ok"] > 2 * SEEDS_PER_GAME * 4, verdicts
    assert verdicts["verdict is not what "] > 1.9 * SEEDS_PER_GAME, verdicts
    never_sent = [kind for kind in verdicts if "was never sent" in kind]
    assert sum(verdicts[kind] for kind in never_sent) == 2 * SEEDS_PER_GAME, verdicts
    not_its_own = [kind for kind in verdicts if "was sent, but seat" in kind]
    assert sum(verdicts[kind] for kind in not_its_own) == 2 * SEEDS_PER_GAME, verdicts
    # The refused settings are said as the engine says them.
    refusals = [output[2 * number] for number in range(len(lines) - len(REFUSED), len(lines))]
    assert "error first_dealer must be a seat 0..3, got 4" in refusals
    assert "error seats must be 4..7, got 8" in refusals
    assert "error duplicate mode plays deals in pairs: deals must be even, got 3" in refusals
    assert "error bestia settings were given for a belote match" in refusals


# ---- honest matches on the real server ---------------------------------------------------------

MATCHES = {
    # Duplicate mode; the C++ bots' events inside their requests (protocol 2's default).
    "belote": (["--deals", "2", "--set", "duplicate=true", "--set", "first_dealer=2"], 4),
    # Five seats, the dealer antes alone; the C++ bots' events live (EventBatch).
    "bestia": (["--set", "seats=5", "--set", "ante_mode=dealer", "--rounds", "1"], 5),
}


@pytest.mark.parametrize("game", ["belote", "bestia"])
def test_an_honest_match_is_dealt_again_and_verified(
    cpp_bot: Path, tmp_path: Path, game: str
) -> None:
    options, seats = MATCHES[game]
    live = ["--live-events"] if game == "bestia" else []
    cpp = " ".join([str(cpp_bot), *live])
    bots = [cpp, "random", cpp, *["random"] * (seats - 3)]
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bisca.server.cli", "match", "--game", game, *options),
            *("--seed", "4242", "--timeout-policy", "forfeit", "--data", str(tmp_path)),
            *(argument for bot in bots for argument in ("--bot", bot)),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (match_dir,) = (tmp_path / "matches").iterdir()
    for seat in (0, 2):
        log = (match_dir / f"seat{seat}.stderr.log").read_text()
        assert re.search(
            rf"{match_dir.name}: deal verified: SHA-256\(salt, seed 4242, match id\) is the "
            rf"commitment [0-9a-f]{{64}}, and seed 4242 deals the start seat {seat} was shown",
            log,
        ), log[-3000:]
        assert not problems(log), log[-3000:]
