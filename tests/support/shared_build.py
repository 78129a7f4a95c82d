"""The checkout's shared build folders, one builder at a time.

Tests of several modules build into, or install from, folders of the checkout itself: the C++
SDK's ``build/cpp`` (the README's build line), the wheelhouse ``build/wheelhouse``, the in-tree
builds pip makes of ``clients/python`` and of the project, and ``make run``'s setup.  xdist runs
modules side by side; a lock file held around each such step, and only around it, keeps two
builds out of one folder while the rest of those modules' tests run beside any other.  (They used
to form one xdist group, which put every one of them on a single worker, one after another: the
longest chain of the suite.)
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "build" / ".shared-build.lock"

#: How deep this process is in :func:`shared_build`: a step that holds it may call another that
#: takes it (``flock`` on a second open file would wait for the first, held by this very process).
_held = 0


@contextlib.contextmanager
def shared_build() -> Iterator[None]:
    """Hold the checkout's build lock for the block: every other process of the test run that
    builds into a shared folder waits for it."""
    global _held
    if _held:
        _held += 1
        try:
            yield
        finally:
            _held -= 1
        return
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        _held = 1
        try:
            yield
        finally:
            _held = 0
            fcntl.flock(handle, fcntl.LOCK_UN)
