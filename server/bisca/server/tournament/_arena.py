"""An arena that launches bots: the in-process server of ``bisca match``, a tournament, a
worker, ``bisca serve``'s web tables, with the sandbox's launcher for its bots.

The server listens on the launcher's unix socket too when the bots are sandboxed
(:mod:`bisca.server.sandbox`); a run that opts out of the sandbox says so on stderr first.
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
    bot_socket,
    find_bwrap,
)


@contextlib.asynccontextmanager
async def running_arena(
    config: ServerConfig, policy: SandboxPolicy
) -> AsyncIterator[tuple[ArenaServer, BotLauncher]]:
    """A running server that launches bots, and its launcher: the server listens on its
    socket too when the bots are sandboxed."""
    if policy.enabled:
        find_bwrap()
    else:
        print(UNSANDBOXED_WARNING, file=sys.stderr, flush=True)
    with bot_socket() as socket:
        if policy.enabled:
            config.listen = [*config.listen, f"unix:{socket}"]
        async with running_server(config) as server:
            launcher = BotLauncher(
                server.address, socket if policy.enabled else None, policy, [config.data_dir]
            )
            yield server, launcher
