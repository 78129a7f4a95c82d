"""The socket a sandboxed bot reaches its arena through: its door.

A sandbox has no network; one unix socket is bound into it.  Were that socket the arena's own,
shared by every bot it launches, one bot's processes could hold connections on it up to the
arena's cap and leave the other bots of every match outside (review 38b): gRPC counts
connections per server, not per peer, and a unix socket's peer has no address to count by.
So an arena opens a door per bot process (``bisca.server.edge``'s ``BotDoors``: a socket and a
small server of the arena's service, capped at a few connections) and closes it when the
process has ended; a bot can only fill its own door.  This room sees doors through the
:class:`Doors` protocol alone: it knows no transport.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class Door(Protocol):
    """One bot process's socket into its arena."""

    @property
    def path(self) -> Path: ...

    def close(self) -> None:
        """The process has ended: the socket is removed and what still holds it is closed."""

    def on_flood(self, stop_bot: Callable[[str], None]) -> None:
        """``stop_bot(reason)`` is called, once, if the bot opens calls on its door faster than
        any bot needs (the door is closed by then)."""


class Doors(Protocol):
    """Where an arena's bot processes get their doors."""

    def open(self) -> Door:
        """A new door, served at once (called on the arena's event loop's thread)."""


@dataclass(frozen=True)
class SharedDoor:
    """One socket for every process launched through it: for an arena that launches one bot
    (check-bot's scripted arena), or none (a build's sandbox, whose socket is an empty file)."""

    path: Path

    def open(self) -> SharedDoor:
        return self

    def close(self) -> None:
        """The socket is the arena's, closed with it."""

    def on_flood(self, stop_bot: Callable[[str], None]) -> None:
        """Its one bot (check-bot's) is judged by its harness, not stopped for its calls."""
