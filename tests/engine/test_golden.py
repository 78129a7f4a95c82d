"""Seeded matches show exactly what they showed when the digests were recorded.

The engine's speed work must change nothing a bot, the referee or a log can see: every deal,
legal-action list, default action, observation, event and outcome of a few hundred seeded
random matches per game and seat count (``golden.py``) hashes to the digest recorded before it.
"""

import pytest

from .golden import CASES, GoldenCase, digest, recorded


def test_every_case_has_a_recorded_digest() -> None:
    assert sorted(recorded()) == sorted(case.name for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_seeded_matches_show_what_they_showed(case: GoldenCase) -> None:
    assert digest(case) == recorded()[case.name], (
        f"{case.name}: seeded matches no longer show what they showed; if the rules changed on "
        "purpose, bump ENGINE_VERSION and record anew (python -m tests.engine.golden)"
    )
