"""``bisca bot NAME``: the Python SDK's own command, a sample bot against a server (it sets up
its own logging)."""

from __future__ import annotations

from bisca.client.cli import add_bot_command, run_bot_command

from ._args import Commands, handle


def add_commands(commands: Commands) -> None:
    handle(add_bot_command(commands), run_bot_command)
