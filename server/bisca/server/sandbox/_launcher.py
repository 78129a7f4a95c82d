"""Launching the bots of one arena: in the sandbox by default, or, when the operator says
so, as plain processes.

An arena that launches bots (``bisca match``, a tournament) gives each sandboxed process a
door (``_doors.py``): a unix socket of its own, in a private folder (mode 0700) outside the
data directory, bound into its sandbox, and nothing else of the machine's network.
Unsandboxed bots connect over loopback TCP, as before, and inherit the operator's environment:
opting out is for bots one trusts, and says so on stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from bisca.client.cli import SEED_VARIABLE
from bisca.server.tempfolders import temporary_folder

from ._botproc import BotProcess
from ._doors import Doors
from ._launch import Launch
from ._sandbox import (
    Limits,
    Sandbox,
    absolute_argv,
    bot_folders,
    find_bwrap,
    inside,
    interpreter_folders,
    node_dependency_folders,
)

UNSANDBOXED_WARNING = (
    "bisca: warning: the bots run WITHOUT the sandbox (--no-sandbox / sandbox = false): they "
    "can read this user's files and environment, reach the network, and see each other"
)


@dataclass(frozen=True)
class SandboxPolicy:
    """How a run launches its bots: sandboxed (the default) with these limits, or not;
    ``hidden`` are more folders every sandbox of the run covers, beside its own data
    directory (a league's gate runs check-bot and its validation match on arenas of their
    own: the league's data directory is hidden from them so)."""

    enabled: bool = True
    limits: Limits = field(default_factory=Limits)
    hidden: tuple[Path, ...] = ()


class BotLauncher:
    """Makes the :class:`BotProcess` of each bot of one arena."""

    def __init__(
        self,
        tcp_address: str,
        doors: Doors | None,
        policy: SandboxPolicy,
        hidden: Sequence[Path],
    ) -> None:
        self.tcp_address = tcp_address
        self.policy = policy
        self.sandbox: Sandbox | None = None
        self.doors = doors
        if policy.enabled:
            if doors is None:
                raise ValueError("a sandboxed arena needs doors for its bots (unix sockets)")
            find_bwrap()  # a machine without bubblewrap is told so before any bot starts
            self.sandbox = Sandbox((*hidden, *policy.hidden), policy.limits)

    def process(
        self,
        argv: Sequence[str],
        token: str,
        log_prefix: Path,
        *,
        folder: Path | None = None,
        limits: Limits | None = None,
        seed: int | None = None,
        tools: Sequence[Path] = (),
    ) -> BotProcess:
        """The process of one bot command, not started yet.  ``folder`` (a tournament bot's
        ``dir``) replaces the folders of its command; ``tools`` are more folders it sees
        read-only (the C++ SDK a hosted bot's build links against); ``seed`` is given to the bot as
        ``BISCA_SEED``, the seed of its own randomness (the sample bots use it), so that a run
        with a fixed seed plays the same moves again."""
        seeded = {} if seed is None else {SEED_VARIABLE: str(seed)}
        if self.sandbox is None or self.doors is None:
            env = {**os.environ, "BISCA_ADDRESS": self.tcp_address, "BISCA_TOKEN": token}
            return BotProcess(argv, {**env, **seeded}, log_prefix)
        command = absolute_argv(argv)
        interpreter = interpreter_folders(command)
        # The bot's own folders are checked (no shared folder, no socket) and it starts in the
        # first; the interpreter's (``python``'s bin, its virtual environment) are only bound.
        own = [folder] if folder is not None else bot_folders(command)
        own += node_dependency_folders(own)  # an SDK required from outside the bot's folder
        wrap = partial(
            _behind_a_door,
            self.sandbox,
            self.doors,
            own=[path for path in own if not any(inside(path, i) for i in interpreter)],
            folders=[*interpreter, *tools],
            limits=limits or self.policy.limits,
        )
        return BotProcess(command, {**self.sandbox.environment(token), **seeded}, log_prefix, wrap)


def _behind_a_door(
    sandbox: Sandbox,
    doors: Doors,
    argv: list[str],
    *,
    own: Sequence[Path],
    folders: Sequence[Path],
    limits: Limits,
) -> Launch:
    """``argv`` in ``sandbox``, with a door of its own (opened as it starts: each start of a
    restarted bot gets a new one)."""
    door = doors.open()
    try:
        launch = sandbox.command(argv, socket=door.path, own=own, folders=folders, limits=limits)
    except BaseException:
        door.close()
        raise
    return dataclasses.replace(launch, door=door)


@contextlib.contextmanager
def bot_socket() -> Iterator[Path]:
    """A path for an arena's socket, in a fresh folder only this user may enter."""
    with temporary_folder("arena") as folder:
        yield folder / "arena.sock"


@contextlib.contextmanager
def doors_folder() -> Iterator[Path]:
    """A fresh folder, only this user may enter, for the doors of an arena's bots."""
    with temporary_folder("doors") as folder:
        yield folder
