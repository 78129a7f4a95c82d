"""An arena that launches bots: the in-process server of ``bisca match``, a tournament, a
worker, ``bisca serve``'s web tables, with the sandbox's launcher for its bots.

When the bots are sandboxed each bot process gets a door of its own into the server (a unix
socket: ``bisca.server.edge``'s ``BotDoors``); a run that opts out of the sandbox says so on
stderr first.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator

from bisca.server.edge import ArenaServer, ServerConfig, running_server
from bisca.server.sandbox import (
    UNSANDBOXED_WARNING,
    BotLauncher,
    SandboxPolicy,
    doors_folder,
    find_bwrap,
)


@contextlib.asynccontextmanager
async def running_arena(
    config: ServerConfig, policy: SandboxPolicy
) -> AsyncIterator[tuple[ArenaServer, BotLauncher]]:
    """A running server that launches bots, and its launcher: with the sandbox, each bot
    process gets a door of its own into the server."""
    if policy.enabled:
        find_bwrap()
    else:
        print(UNSANDBOXED_WARNING, file=sys.stderr, flush=True)
    config.bot_doors = policy.enabled
    with doors_folder() as folder:
        async with running_server(config) as server:
            doors = server.bot_doors(folder) if policy.enabled else None
            try:
                yield server, BotLauncher(server.address, doors, policy, [config.data_dir])
            finally:
                if doors is not None:
                    await doors.close()
