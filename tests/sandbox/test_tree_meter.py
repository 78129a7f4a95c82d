"""What measuring a bot's process tree costs the arena is bounded (``sandbox/_treelimits.py``):
a process whose ``Pss`` is costly to read (a page-table walk: 12 ms for 60,000 small mapped
regions, review 38) is measured by its resident size from then on, and a pass stops reading
``Pss`` once its budget is spent.  The counts here are of reads, not of times."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bisca.server.sandbox import _treelimits
from bisca.server.sandbox._treelimits import TreeMeter

#: A process that maps 60,000 one-page regions of alternating protections (so none merge),
#: starts CHILDREN copies of itself doing the same, says "ready" and waits.
MANY_REGIONS = """
import ctypes, subprocess, sys, time
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
children = [subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[1], "0"],
                             stdout=subprocess.PIPE) for _ in range(int(sys.argv[2]))]
for child in children:
    child.stdout.readline()
for number in range(60_000):
    libc.mmap(None, 4096, 1 if number % 2 else 3, 0x22, -1, 0)  # PROT_READ(|WRITE), private anon
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture
def costly_tree() -> Iterator[subprocess.Popen[str]]:
    """A tree of three processes, each costly to read."""
    root = subprocess.Popen(
        [sys.executable, "-c", MANY_REGIONS, MANY_REGIONS, "2"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert root.stdout is not None and root.stdout.readline() == "ready\n"
        yield root
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(root.pid)], check=False)
        root.kill()
        root.wait()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The processes whose ``Pss`` the meter reads, in order."""
    read: list[int] = []
    read_pss = _treelimits._pss_bytes

    def counted(pid: int) -> int | None:
        read.append(pid)
        return read_pss(pid)

    monkeypatch.setattr(_treelimits, "_pss_bytes", counted)
    return read


def test_a_tree_costly_to_read_is_measured_by_resident_size_within_the_pass_budget(
    costly_tree: subprocess.Popen[str], reads: list[int]
) -> None:
    meter = TreeMeter()
    tree = list(_treelimits._tree(costly_tree.pid))
    assert len(tree) == 3

    first = meter.usage(costly_tree.pid)
    # The first read (12 ms here) spends the pass's budget (5 ms): the others are not read.
    assert reads == [costly_tree.pid]
    assert meter.costly == {costly_tree.pid}
    reads.clear()
    meter.usage(costly_tree.pid)
    assert len(reads) == 1 and reads[0] != costly_tree.pid  # the next one, once
    for _ in range(2):
        meter.usage(costly_tree.pid)
    assert meter.costly == set(tree)
    reads.clear()
    last = meter.usage(costly_tree.pid)
    assert reads == []  # every process by its resident size now: a few µs each
    # Never less than the processes' Pss: the stricter count.
    pss = sum(_pss_of(pid) for pid in tree) / (1 << 20)
    assert last.memory_mb >= pss and first.memory_mb > 0


def _pss_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no Pss for {pid}")


def test_a_cheap_process_is_measured_by_its_pss(reads: list[int]) -> None:
    with subprocess.Popen(["sleep", "60"]) as sleeper:
        try:
            meter = TreeMeter()
            for _ in range(3):
                assert meter.usage(sleeper.pid).memory_mb > 0
            assert reads == [sleeper.pid] * 3 and meter.costly == set()
        finally:
            sleeper.kill()
