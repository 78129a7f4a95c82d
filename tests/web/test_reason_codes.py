"""The referee's reasons as the page translates them: every reason the engines give for an
action the table shows the person but may not be chosen has a code (``reason_code``, which
pattern-matches the engines' English), and the app's dictionary words every code in Italian
and in English.  A reason without a code would reach the person in the referee's English.

The reasons are not listed by hand: seeded random matches of both games are walked, and at
every state the table's own choice of what to offer (``_offered``, on the request the seat
would be sent) is asked of the engine, as the table asks the live match."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from bisca import wire
from bisca.engine import new_match
from bisca.server.web._table import _REASONS, _offered, reason_code
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import belote_pb2, bestia_pb2

WORDS_JS = Path(__file__).parents[2] / "server/bisca/server/web/static/words.js"
SUITS = {"belote": set(belote_pb2.Suit.keys()), "bestia": set(bestia_pb2.Suit.keys())}
#: The matches walked: Belote from every first dealer, Bestia at every table size a person
#: may sit at (4 to 7 seats), each with a few seeds (half a second in all).
MATCHES: list[tuple[str, dict[str, Any], int]] = [
    *(("belote", {"deals": 2, "first_dealer": seed % 4}, seed) for seed in range(24)),
    *(("bestia", {"seats": 4 + seed % 4, "rounds": 1}, seed) for seed in range(24)),
]


def _request(game: str, state: Any) -> pb.ActionRequest:
    """The request the referee would send the seat to act (what ``_offered`` reads)."""
    seat = state.to_act
    return pb.ActionRequest(
        seat=seat,
        observation=wire.encode_game_observation(game, state.observation(seat)),
        legal_actions=[wire.encode_game_action(game, a) for a in state.legal_actions()],
    )


@cache
def _reasons() -> dict[str, Counter[str]]:
    """Every reason the walked matches gave for an offered illegal action, by game."""
    found: dict[str, Counter[str]] = {"belote": Counter(), "bestia": Counter()}
    for game, settings, seed in MATCHES:
        state = new_match(game, settings, seed)
        rng = random.Random(seed)
        while not state.is_over:
            request = _request(game, state)
            for action in _offered(game, request):
                if action in request.legal_actions:
                    continue
                reason = state.why_illegal(wire.decode_game_action(game, action))
                assert reason, f"{game} seed {seed}: an offered action not legal has no reason"
                found[game][reason] += 1
            state.apply(rng.choice(state.legal_actions()))
    return found


def test_every_reason_the_table_shows_has_a_code() -> None:
    codes: set[str] = set()
    for game, reasons in _reasons().items():
        assert reasons, f"no {game} state offered an illegal action"
        for reason in reasons:
            coded = reason_code(reason)
            assert coded, f"{game}: {reason!r} has no code: the page would show it in English"
            codes.add(coded["code"])
            pattern = dict(_REASONS)[coded["code"]]
            assert set(coded["args"]) == set(pattern.groupindex)
            for suit in coded["args"].values():
                assert suit in SUITS[game], f"{game}: {reason!r} names no suit of the game"
    # Every code the page knows is one the engines give (none is a pattern gone stale).
    assert codes == {code for code, _ in _REASONS}


def test_the_dictionary_words_every_code_in_italian_and_english() -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js reads the app's dictionary"
    script = (
        f"const {{ WORDS }} = await import({json.dumps(WORDS_JS.as_uri())});"
        " console.log(JSON.stringify({ en: WORDS.en, it: WORDS.it }));"
    )
    run = subprocess.run(
        [node, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    words = json.loads(run.stdout)
    for code, pattern in _REASONS:
        for language in ("it", "en"):
            text = words[language].get(f"why.{code}")
            assert isinstance(text, str) and text.strip(), f"no {language} words for {code}"
            # The text fills exactly the arguments the code carries (suits, translated).
            assert set(re.findall(r"\{(\w+)\}", text)) == set(pattern.groupindex), (
                f"{language} why.{code}: {text!r} against {sorted(pattern.groupindex)}"
            )
        assert words["it"][f"why.{code}"] != words["en"][f"why.{code}"]
