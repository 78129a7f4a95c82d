"""The arena process's file descriptors: as many as the system allows, and never all of them
for connections.

Every bot's connection, match log, sandboxed bot's pipes, the store and the browser app's
connections draw on one process's ``RLIMIT_NOFILE``.  A connection costs a descriptor as soon
as gRPC accepts it, before any request says whose it is: when every sandboxed bot reached the
arena through one shared unix socket, a hostile bot's processes opened 1,000 connections and
held them (review 38), and gRPC's listener then logged ``File descriptor limit reached``, with
the arena's own files (a match's log, the store) left to whatever remained.  So gRPC is told
how many connections it may hold at once (``grpc.max_allowed_incoming_connections``: the rest
are closed as they are accepted), which leaves the arena :data:`DESCRIPTOR_RESERVE` descriptors
of its own whatever its peers do; and each sandboxed bot now has a door of its own, capped at a
few connections (``_doors.py``).
"""

from __future__ import annotations

import logging
import resource

log = logging.getLogger(__name__)

#: Descriptors kept from connections: match logs, the store, sandboxed bots' pipes, the
#: browser app's connections (capped per address on their own), temporary files.  At most
#: half of the limit, so a process left at 1,024 still accepts 512 connections.
DESCRIPTOR_RESERVE = 1024
#: gRPC's own value for "no cap".
UNCAPPED = 0x7FFFFFFF


def raise_open_files_limit() -> None:
    """The soft limit of open files raised to the hard one, as nginx (worker_rlimit_nofile)
    and Go's runtime do: the soft one is often 1024 where the hard one allows far more.
    Processes started from here inherit it; sandboxed bots and builds get their own
    ``open_files`` limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft == hard:
        return  # no finite maximum to raise to (macOS), or nothing to raise
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as problem:  # refused: serve with the limit as it is
        log.warning(
            "open files: soft limit %d kept, raising it to %d failed: %s", soft, hard, problem
        )
        return
    log.info("open files: soft limit raised from %d to %d", soft, hard)


def incoming_connection_cap() -> int:
    """How many connections gRPC may hold at once in this process: its open files' limit
    less the reserve."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= UNCAPPED:
        return UNCAPPED
    return max(1, soft - min(DESCRIPTOR_RESERVE, soft // 2))
