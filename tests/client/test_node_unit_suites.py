"""The Node client's own unit suites (``clients/node/test/*.test.js``), one test per file.

One file at a time, so that the suite's workers share them (``tests/conftest.py`` spreads this
module test by test): the hostile suites flood bots with hundreds of megabytes, and as one
``node --test`` of every file they were the longest test of the suite (43 s alone, two minutes
on a loaded 2-core machine), run by one worker while the others had nothing left.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from .test_node_client import NODE_CLIENT, node, node_client  # noqa: F401

SUITES = sorted(path.name for path in (NODE_CLIENT / "test").glob("*.test.js"))


def test_every_suite_of_the_node_client_is_run() -> None:
    assert len(SUITES) >= 3, SUITES


@pytest.mark.parametrize("suite", SUITES)
def test_a_node_client_unit_suite(node_client: Path, suite: str) -> None:  # noqa: F811
    # A bound against a hang, not a speed check: a hostile suite floods bots with hundreds of
    # megabytes (30 s alone here; past 60 s on a loaded 2-core machine, and one subtest 77 s
    # with two suites at once).
    done = subprocess.run(
        [node(), "--test", f"test/{suite}"],
        cwd=node_client,
        capture_output=True,
        text=True,
        timeout=900,
    )
    failed = [line for line in done.stdout.splitlines() if "not ok" in line]
    assert done.returncode == 0, "\n".join(failed) + done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"^# fail 0$", done.stdout, re.MULTILINE)
    assert re.search(r"^# pass [1-9]", done.stdout, re.MULTILINE), done.stdout[-2000:]
