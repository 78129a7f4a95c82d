"""How much work SQLite does for a read, counted by SQLite itself (its progress handler, every
thousand virtual-machine instructions): a figure that does not move with the machine's speed or
load, so a test can say that a read's cost does not grow with rows it should never visit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bisca.server.store import Store
from bisca.server.store._sqlite import SqliteBackend  # its connection, to count SQLite's work

T = TypeVar("T")


def counted_work(path: Path, read: Callable[[Store], T]) -> tuple[int, T]:
    """SQLite's instructions, in thousands, for ``read`` of the store in ``path``, and what it
    returned."""
    backend = SqliteBackend(path)
    thousands = 0

    def count() -> int:
        nonlocal thousands
        thousands += 1
        return 0  # go on

    with Store(backend, path.parent) as store:
        backend.connection().set_progress_handler(count, 1_000)
        try:
            answer = read(store)
        finally:
            backend.connection().set_progress_handler(None, 0)
    return thousands, answer
