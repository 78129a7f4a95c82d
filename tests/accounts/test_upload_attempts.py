"""An account's uploads of the day, refused ones too (``_attempts.py``): what counts, for how
long, and one upload at a time.  The clock is the test's: nothing waits."""

from __future__ import annotations

import types

import pytest

import bisca.server.accounts._attempts as attempts
from bisca.server.accounts import LimitReached


def test_refused_uploads_count_for_a_day_and_given_back_ones_not_at_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(attempts, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    uploads = attempts.UploadAttempts()

    first = uploads.hold("ada", added=0, most=3)
    with pytest.raises(LimitReached, match="an upload of ada's is being taken now"):
        uploads.hold("ada", added=0, most=3)
    uploads.hold("bob", added=0, most=3)  # another account's own turn
    uploads.refused(first)
    uploads.give_back(uploads.hold("ada", added=0, most=3))  # its body never came: no count
    uploads.refused(uploads.hold("ada", added=1, most=3))
    with pytest.raises(LimitReached, match=r"ada sent 3 uploads .* \(1 made versions, 2 were"):
        uploads.hold("ada", added=1, most=3)

    now[0] += attempts.DAY_S - 1
    with pytest.raises(LimitReached, match="2 were refused"):
        uploads.hold("ada", added=1, most=3)
    now[0] += 1  # both refusals are a day old
    uploads.added(uploads.hold("ada", added=1, most=3))
