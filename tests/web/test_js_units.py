"""The browser app's own unit tests (``tests/web/js``: its pure modules, no DOM), run by Node's
test runner so that ``make test`` covers them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

JS_TESTS = Path(__file__).parent / "js"


def test_the_apps_pure_modules_pass_their_node_tests() -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed for the browser app's unit tests"
    tests = sorted(str(path) for path in JS_TESTS.glob("*.test.js"))
    assert tests, f"no unit test in {JS_TESTS}"
    finished = subprocess.run(
        [node, "--test", *tests], capture_output=True, text=True, timeout=120, check=False
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    # Every file ran and no test was skipped (a test file that failed to load counts as one).
    assert "# fail 0" in finished.stdout and "# skipped 0" in finished.stdout, finished.stdout
