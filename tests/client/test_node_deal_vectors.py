"""The Node SDK's port of the engine's deal (``clients/node/lib/deal.js``) against the engine.

The Node SDK checks a match's deal by dealing its start again from the revealed seed with its
own port of the engine's generator and of each game's start, which must follow the engine bit
for bit.  Here the engine deals hundreds of matches (seeds small and 64-bit, every seat count
and setting that changes a start, Belote's duplicate mode), the events of each deal's start
are written with their audiences as the bytes a bot receives, and one Node process
(``clients/node/test/deal_vectors.js``) deals them again and compares, event by event and seat
by seat; the generator's outputs are compared too.  Belote's later deals are included (their
first cards depend on the seed and the deal's number only): that is where duplicate mode
replays a shuffle.  Last, honest matches on a real server: the Node SDK says "deal verified".
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
from dataclasses import dataclass
from functools import partial
from itertools import cycle
from pathlib import Path
from typing import Any

import pytest

from bisca import wire
from bisca.client._deal import ShownStart, _first_hand_differs
from bisca.engine import GAMES, DealRng
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import belote_pb2, bestia_pb2
from tests.support.arena import Arena, clock
from tests.support.waiting import poll_until

# The Node client's location, its node and the fixture that installs its dependencies.
from .test_node_client import NODE_CLIENT, node, node_client  # noqa: F401

VECTORS_JS = NODE_CLIENT / "test" / "deal_vectors.js"
MATCHES_PER_GAME = 200
#: Seeds at the edges of the 64 bits the server's seeds take, before the random ones.
EDGE_SEEDS = (0, 1, 2, 7, 2**32 - 1, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1)

#: Settings that change a start, as a server may send them: only some fields present.
BELOTE_SETTINGS: tuple[dict[str, Any] | None, ...] = (
    None,
    {},
    {"first_dealer": 1},
    {"first_dealer": 3, "deals": 2},
    {"duplicate": True, "deals": 4},
    {"duplicate": True, "deals": 6, "first_dealer": 2},
    {"target_score": 300, "max_deals": 6, "duplicate": True},
    {"target_score": 500, "max_deals": 5, "first_dealer": 1},
)


def bestia_settings(rng: random.Random) -> dict[str, Any]:
    seats = rng.randint(4, 7)
    settings: dict[str, Any] = {
        "seats": seats,
        "stake": rng.choice((1, 10, 25, 1_000_000)),
        "ante_mode": rng.choice(("all", "dealer")),
        "rounds": rng.choice((1, 2, 3)),
        "blind_raises": rng.choice((True, False)),
        "first_dealer": rng.randrange(seats),
    }
    # Leave some out: the engine's defaults fill them in, as the port's must.
    for name in rng.sample(sorted(settings), rng.randint(0, 2)):
        if name not in ("seats", "first_dealer"):
            del settings[name]
    return settings


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@dataclass
class Case:
    game: str
    seed: int
    settings: dict[str, Any] | None

    def seats(self) -> int:
        return 4 if self.game == "belote" else int((self.settings or {})["seats"])

    def game_settings(self) -> pb.GameSettings | None:
        if self.settings is None:
            return None
        module = belote_pb2 if self.game == "belote" else bestia_pb2
        return pb.GameSettings(**{self.game: module.Settings(**self.settings)})

    def vector(self) -> dict[str, Any]:
        """The case's deal starts as the engine records them, played out to its end for
        Belote (random moves: the deals' starts must not depend on them)."""
        message = self.game_settings()
        state = GAMES[self.game].new_match(wire.decode_game_settings(self.game, message), self.seed)
        starts = [0]
        if self.game == "belote":
            moves = random.Random(self.seed)
            while not state.is_over:
                state.apply(moves.choice(state.legal_actions()))
            starts = [
                index
                for index, (_, event) in enumerate(state.all_events(0))
                if type(event).__name__ == "DealStarted"
            ]
        recorded = state.all_events(0)
        deals = []
        for number, first in enumerate(starts):
            # A deal's start runs to its first decision: the first 6 events of a Belote deal,
            # every event of a fresh Bestia match.
            last = first + 6 if self.game == "belote" else len(recorded)
            events = [
                {
                    "audience": audience,
                    "event": b64(
                        wire.encode_game_event(self.game, index, event).SerializeToString()
                    ),
                }
                for index, (audience, event) in enumerate(recorded[first:last], first)
            ]
            deals.append({"deal_number": number, "first_index": first, "events": events})
        return {
            "game": self.game,
            "seed": str(self.seed),
            "settings": None if message is None else b64(message.SerializeToString()),
            "deals": deals,
        }


def cases() -> list[Case]:
    rng = random.Random(20_240_611)
    seeds = [*EDGE_SEEDS, *(rng.getrandbits(64) for _ in range(MATCHES_PER_GAME))]
    belote = cycle(BELOTE_SETTINGS)
    return [Case("belote", seed, next(belote)) for seed in seeds[:MATCHES_PER_GAME]] + [
        Case("bestia", seed, bestia_settings(rng)) for seed in seeds[:MATCHES_PER_GAME]
    ]


#: ``below``'s bounds: the deck sizes, the path the engine inlines for n < 64 and the one it
#: does not, and the largest bounds, where the rejection threshold 2**64 mod n matters.
BOUNDS = (1, 2, 3, 10, 32, 40, 63, 64, 100, 1000, 2**31 + 1, 3 * 2**30, 2**32 - 1)


MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15


def _unmix64(z: int) -> int:
    """The word the engine's SplitMix64 finaliser maps to ``z``, to build a generator whose next
    output is chosen."""

    def unshift(x: int, k: int) -> int:
        y = x
        for _ in range(64 // k + 1):
            y = x ^ (y >> k)
        return y

    z = unshift(z, 31) * pow(0x94D049BB133111EB, -1, 1 << 64) & MASK64
    z = unshift(z, 27) * pow(0xBF58476D1CE4E5B9, -1, 1 << 64) & MASK64
    return unshift(z, 30)


#: Generators whose next output ``below(n)`` must reject, drawing again (it never happens from
#: a seeded stream in practice: the odds are n / 2**64): output 0 for every n that is not a
#: power of 2, and 5 * 2**34 for n = 3 * 2**30 (whose threshold 2**64 mod n is 2**30).
REJECTED = ((0, (3, 40, 2**32 - 1)), (5 << 34, (3 * 2**30,)))


def rng_vectors() -> list[dict[str, Any]]:
    """The generator's outputs, draws and shuffles, from seeded streams and from states whose
    next draw is rejected."""
    starts: list[tuple[dict[str, Any], DealRng]] = []
    for seed, deal, stream in [(0, 0, 0), (42, 0, 0), (42, 7, 1), (2**64 - 1, 3, 2)] + [
        (random.Random(n).getrandbits(64), n, n % 3) for n in range(20)
    ]:
        where = {"seed": str(seed), "deal": deal, "stream": stream}
        starts.append((where, DealRng.for_deal(seed, deal, stream)))
    for output, bounds in REJECTED:
        state = (_unmix64(output) - GOLDEN_GAMMA) & MASK64
        assert DealRng(state).next64() == output
        for n in bounds:
            assert output * n & MASK64 < ((1 << 64) - n) % n  # the draw is rejected
        starts.append(({"state": str(state), "rejected": list(bounds)}, DealRng(state)))
    found = []
    for where, rng in starts:
        stream_rng, draws = rng.copy(), rng.copy()
        shuffles = []
        for size in (10, 32, 40, 100):
            items = list(range(size))
            rng.copy().shuffle(items)
            shuffles.append([size, items])
        bounds = where.get("rejected", BOUNDS)
        found.append(
            {
                **where,
                "next64": [str(stream_rng.next64()) for _ in range(4)],
                "below": [[n, draws.below(n)] for n in [*bounds, *BOUNDS, *BOUNDS]],
                "shuffles": shuffles,
            }
        )
    return found


#: First requests of Belote seats: how many, and the most moves before each.
FIRST_REQUESTS = 600
MOST_MOVES = 80


def first_request_vectors() -> list[dict[str, Any]]:
    """Observations of a seat's first request, honest and not, with what the Python SDK's check
    (``_first_hand_differs``: the shown moves played again on the deal, then the hand and the
    turned card compared) says of each: the Node port must say the same, word for word.

    Random legal play (passes likely, so that deals are voided too) from a fresh match; the
    observation is the engine's for a random seat, or one that shows every move so far from
    deal 0 on (the check replays across deals as far as the moves are legal), each also with
    one thing changed: a card of the hand or the turned card, a bid's seat or suit, a card
    played, a move left out."""
    rng = random.Random(20_250_301)
    found = []
    for number in range(FIRST_REQUESTS):
        seed = rng.choice(EDGE_SEEDS) if number < len(EDGE_SEEDS) else rng.getrandbits(64)
        given = BELOTE_SETTINGS[number % len(BELOTE_SETTINGS)]
        case = Case("belote", seed, given)
        message = case.game_settings()
        settings = wire.decode_game_settings("belote", message)
        state = GAMES["belote"].new_match(settings, seed)
        bids, plays = [], []
        for _ in range(rng.randrange(MOST_MOVES)):
            if state.is_over:
                break
            legal = state.legal_actions()
            passing = [action for action in legal if type(action).__name__ == "Pass"]
            action = passing[0] if passing and rng.random() < 0.8 else rng.choice(legal)
            seat = state.to_act
            encoded = wire.encode_game_action("belote", action).belote
            if encoded.WhichOneof("action") == "play_card":
                plays.append(belote_pb2.CardPlayed(seat=seat, card=encoded.play_card.card))
            else:
                suit = encoded.take.suit if encoded.WhichOneof("action") == "take" else None
                bids.append(belote_pb2.BidMade(seat=seat, round=1, suit=suit))
            state.apply(action)
        seat = rng.randrange(4)
        observation = wire.encode_game_observation("belote", state.observation(seat)).belote
        if rng.random() < 0.5:  # every move from deal 0 on
            observation.deal_number = 0
            del observation.bids[:]
            observation.bids.extend(bids)
            del observation.tricks[:]
            observation.tricks.add(plays=plays)
        variants = [observation]
        changed = belote_pb2.Observation()
        changed.CopyFrom(observation)
        change = rng.randrange(7)
        if change == 0 and changed.hand:
            changed.hand[rng.randrange(len(changed.hand))].rank ^= 3
        elif change == 1:
            changed.turned_card.suit = rng.randrange(5)
        elif change == 2 and changed.bids:
            changed.bids[rng.randrange(len(changed.bids))].seat = rng.randrange(5)
        elif change == 3 and changed.bids:
            changed.bids[rng.randrange(len(changed.bids))].suit = rng.randrange(6)
        elif change == 4 and changed.tricks and changed.tricks[-1].plays:
            play = rng.choice(changed.tricks[-1].plays)
            play.card.rank, play.card.suit = rng.randrange(1, 9), rng.randrange(1, 5)
        elif change == 5 and changed.bids:
            del changed.bids[rng.randrange(len(changed.bids))]
        elif change == 6 and changed.tricks and changed.tricks[-1].plays:
            del changed.tricks[-1].plays[0]
        variants.append(changed)
        # A seat first asked after a take (in round 1, a later seat's first request is to play,
        # its eight cards dealt), from the same match played again: its honest observation.
        again = GAMES["belote"].new_match(settings, seed)
        asked = set()
        while not again.is_over and again.deal_number == 0:
            if again.to_act not in asked and again.observation(again.to_act).taker is not None:
                later = wire.encode_game_observation("belote", again.observation(again.to_act))
                variants.append(later.belote)
                break
            asked.add(again.to_act)
            again.apply(rng.choice(again.legal_actions()))
        for variant in variants:
            shown = ShownStart(first_observation=variant)
            fresh = GAMES["belote"].new_match(settings, seed)
            found.append(
                {
                    "seed": str(seed),
                    "settings": None if message is None else b64(message.SerializeToString()),
                    "seat": variant.seat,
                    "observation": b64(variant.SerializeToString()),
                    "why": _first_hand_differs(fresh, "belote", seed, variant.seat, shown),
                }
            )
    return found


def run_vectors(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [node(), str(VECTORS_JS), str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def dealt() -> tuple[list[Case], dict[str, Any]]:
    """The cases, and the vectors the Node script reads."""
    found = cases()
    vectors = {
        "rng": rng_vectors(),
        "cases": [case.vector() for case in found],
        "firsts": first_request_vectors(),
    }
    return found, vectors


@pytest.mark.usefixtures("node_client")
def test_the_node_port_deals_every_start_as_the_engine(
    dealt: tuple[list[Case], dict[str, Any]], tmp_path: Path
) -> None:
    found, vectors = dealt
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps(vectors))
    result = run_vectors(path)
    assert result.pop("failures") == []
    deals = [deal for case in vectors["cases"] for deal in case["deals"]]
    assert result == {
        "rng": len(vectors["rng"]),
        "cases": 2 * MATCHES_PER_GAME,
        "deals": len(deals),
        "events": sum(len(deal["events"]) for deal in deals),
        "seats": sum(case.seats() for case in found),
        "firsts": len(vectors["firsts"]),
    }
    # What the first requests cover: honest ones after a take (a seat asked to play, its eight
    # cards), later deals (not compared), and each way to fail.
    whys = [first["why"] for first in vectors["firsts"]]
    assert whys.count(None) > FIRST_REQUESTS // 2
    for words in ("not the match's", "cannot be read", "not legal with that deal"):
        assert sum(words in (why or "") for why in whys) > 10, words
    assert sum(why is not None and "its moves" not in why for why in whys) > 10  # another hand
    # What the cases cover: Belote's later deals (duplicate mode's replays among them), and
    # Bestia's starts at every seat count with either ante mode.
    assert len(deals) > 3 * MATCHES_PER_GAME
    replays = [
        deal
        for case, vector in zip(found, vectors["cases"], strict=True)
        if (case.settings or {}).get("duplicate")
        for deal in vector["deals"]
        if deal["deal_number"] % 2
    ]
    assert len(replays) > MATCHES_PER_GAME // 4
    lengths = {len(case["deals"][0]["events"]) for case in vectors["cases"]}
    assert lengths == {6, 4, 7, 8, 9, 10}  # Belote; Bestia's dealer ante; all ante at 4-7 seats


@pytest.mark.usefixtures("node_client")
def test_the_node_port_checker_fails_on_a_wrong_deal(
    dealt: tuple[list[Case], dict[str, Any]], tmp_path: Path
) -> None:
    """The comparison is not vacuous: vectors of another seed, or a generator output off by
    one, are failures naming them."""
    _, vectors = dealt
    wrong = json.loads(json.dumps(vectors))
    belote, bestia = wrong["cases"][20], wrong["cases"][MATCHES_PER_GAME + 20]
    for case in (belote, bestia):
        case["seed"] = str(int(case["seed"]) ^ 1)
    wrong["rng"][3]["next64"][2] = str(int(wrong["rng"][3]["next64"][2]) + 1)
    honest = next(
        first
        for first in wrong["firsts"]
        if first["why"] is None
        and belote_pb2.Observation.FromString(base64.b64decode(first["observation"])).deal_number
        == 0
    )
    honest["seed"] = str(int(honest["seed"]) ^ 1)
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(wrong))
    failures = run_vectors(path)["failures"]
    for case in (belote, bestia):
        assert any(f"{case['game']} seed {case['seed']} " in line for line in failures), failures
    assert any(line.startswith("rng seed ") and "next64" in line for line in failures), failures
    assert any(line.startswith(f"first request seed {honest['seed']} ") for line in failures)


# ---- honest matches on a real server ----------------------------------------------------

NODE_BOT = """
const {{ run }} = require({client});
// The first legal action (the cautious one); events as they happen with the argument "live".
run((request) => request.legalActions[0], {{
  name: 'deal-check',
  games: ['belote', 'bestia'],
  liveEvents: process.argv[2] === 'live',
}}).catch((error) => {{
  console.error(error.message);
  process.exitCode = 1;
}});
"""


@pytest.mark.usefixtures("node_client")
@pytest.mark.parametrize(
    ("game", "settings", "node_seats"),
    [
        ("belote", pb.GameSettings(belote=belote_pb2.Settings(deals=2, first_dealer=2)), (0, 3)),
        (
            "bestia",
            pb.GameSettings(
                bestia=bestia_pb2.Settings(seats=5, rounds=1, ante_mode="dealer", first_dealer=3)
            ),
            (1, 2, 4),
        ),
    ],
)
def test_node_bots_verify_the_deal_of_an_honest_match(
    arena: Arena, tmp_path: Path, game: str, settings: pb.GameSettings, node_seats: tuple[int, ...]
) -> None:
    """A real server's match, its seed above 2**53: every Node bot, with events inside its
    requests or live, deals the start again and says "deal verified"."""
    script = tmp_path / "deal_check.js"
    script.write_text(NODE_BOT.format(client=json.dumps(str(NODE_CLIENT))))
    names, logs = [], []
    for seat in range(settings.bestia.seats if game == "bestia" else 4):
        name, token = arena.register(f"deal-{game}")
        names.append(name)
        if seat in node_seats:
            logs.append(arena.tmp / f"bot-{len(arena.bots)}.stderr.log")
            mode = "live" if len(logs) % 2 else "carried"
            arena.launch(token, node(), str(script), mode)
        else:
            arena.sample_bot(token, "random", game)
    seed = 2**63 - 25  # the largest seeds a server takes are 63-bit
    match_id = arena.create(
        game, names, settings=settings, seed=seed, clock=clock(3000, 10_000, "forfeit")
    )
    info = arena.wait(match_id, timeout=60)
    assert info.status == pb.MATCH_STATUS_FINISHED, info.reason
    for log in logs:
        line = poll_until(f"{log.name} logs the match's end", partial(_end_line, log, match_id))
        assert line.endswith("; deal verified"), line
        text = log.read_text()
        assert " ERROR " not in text, text[-3000:]


def _end_line(log: Path, match_id: str) -> str | None:
    """The line a Node bot logs at the end of ``match_id``, once there."""
    for line in log.read_text().splitlines():
        if f"match {match_id} MATCH_STATUS_" in line:
            return line
    return None
