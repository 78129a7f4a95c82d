"""The compiled and the plain engine: the one chosen at import, never a stale build, and the
golden digests passing on both.

This run of the tests uses whichever engine ``bisca.engine`` chose (compiled when a build
matches the sources): every engine test, the batteries included, runs on it.
:func:`test_the_other_engine_passes_the_golden_digests` runs the golden digests again in a child
process on the other one: they play every game shape to its end and digest every state,
observation and event, so a difference between the engines shows there.  (The batteries ran
there too at first: 66 s of the suite's time for what the digests already prove.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bisca.engine import _native
from bisca.engine.bestia import _state as bestia_state

ROOT = Path(__file__).resolve().parents[2]
#: Set by the parent run for its child: the engine the child must be running.
EXPECT = "BISCA_EXPECT_ENGINE"
OTHER_RUN = [
    "tests/engine/test_golden.py",
    "tests/engine/test_engine_builds.py::test_the_engine_is_the_one_chosen",
]


def test_the_engine_is_the_one_chosen() -> None:
    compiled_file = Path(bestia_state.__file__).suffix != ".py"
    assert compiled_file == _native.COMPILED, _native.describe()
    if _native.COMPILED:
        assert Path(bestia_state.__file__).is_relative_to(_native.COMPILED_DIR)
    expected = os.environ.get(EXPECT)
    if expected is not None:
        assert _native.describe().startswith(expected), _native.describe()


def _manifest(**changes: object) -> dict[str, object]:
    manifest: dict[str, object] = {"tag": _native.build_tag(), "sources": _native.source_digests()}
    manifest.update(changes)
    return manifest


def test_a_build_of_these_sources_for_this_interpreter_is_used() -> None:
    assert _native._stale_because(_manifest()) is None


def test_a_build_is_not_used_once_any_engine_source_changed() -> None:
    sources = _native.source_digests()
    assert "bestia/_types.py" in sources, "every .py counts, compiled or not"
    edited = {**sources, "bestia/_types.py": "0" * 64}
    reason = _native._stale_because(_manifest(sources=edited))
    assert reason is not None and "bestia/_types.py" in reason
    added = {name: digest for name, digest in sources.items() if name != "_cards.py"}
    reason = _native._stale_because(_manifest(sources=added))
    assert reason is not None and "_cards.py" in reason


def test_a_build_for_another_interpreter_is_not_used() -> None:
    reason = _native._stale_because(_manifest(tag="cpython-310.so"))
    assert reason is not None and "cpython-310" in reason


def test_the_other_engine_passes_the_golden_digests() -> None:
    if _native.COMPILED:
        switch, expected = "1", "pure"
    elif (_native.COMPILED_DIR / _native.MANIFEST).is_file() and _native.REASON.startswith(
        _native.PURE_SWITCH
    ):
        switch, expected = "0", "compiled"
    else:
        # `make install` always builds the compiled engine (mypy is a dev dependency): its absence
        # is a broken build, not a machine without a tool, so it fails here rather than skip.
        raise AssertionError(
            f"no compiled engine to compare with: {_native.REASON} (`make install` builds it)"
        )
    environment = {**os.environ, _native.PURE_SWITCH: switch, EXPECT: expected}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *OTHER_RUN],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert result.returncode == 0, f"on the {expected} engine:\n{result.stdout[-3000:]}"
