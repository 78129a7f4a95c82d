"""The garbage collector of a process that plays matches for hours (``bisca serve``,
``bisca worker``).

A decision allocates a few hundred short-lived objects (the reply, the log records, the next
request's parts), nearly all freed by reference counting as soon as the decision is made.
CPython's default collects the youngest generation every 700 allocations, so a busy server
ran a collection every few decisions, each one also walking what every running match holds.
Measured on 64 concurrent Belote matches (``bench/arena.py``'s load, alternated runs, the same
code): the server's CPU per decision fell by about 10% with what is set here.  The cycles a
match leaves (its state, its runner) are still collected, in the older generations, and the
objects made at start (modules, descriptors, the store) are frozen out of every collection.
"""

from __future__ import annotations

import gc

#: Allocations between two collections of the youngest generation (CPython's default: 700),
#: then how many of those before the middle one, and of those before the oldest.
THRESHOLDS = (20_000, 20, 100)


def settle_collector() -> None:
    """Freeze what the process holds after its start, and collect less often from now on
    (call it once the server or worker is up)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
