"""A serving process collects garbage less often and never walks what it loaded at start."""

from __future__ import annotations

import gc

from bisca.server.cli._collector import THRESHOLDS, settle_collector


def test_settle_collector_freezes_the_start_and_raises_the_thresholds() -> None:
    before = gc.get_threshold()
    try:
        settle_collector()
        assert gc.get_threshold() == THRESHOLDS
        assert THRESHOLDS[0] > before[0]
        assert gc.get_freeze_count() > 0
        assert gc.get_count()[0] < THRESHOLDS[0]  # collected just before freezing
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
