"""What starting one bot process takes, as the sandbox (or the leash) prepares it."""

from __future__ import annotations

from dataclasses import dataclass

from ._doors import Door


@dataclass(frozen=True)
class Launch:
    """The command line that runs a bot, the file descriptors its first process must inherit
    (the sandbox's seccomp filter; closed in the arena once the process is started), the CPU
    seconds and the memory its whole process tree may use (``None``: no budget), and the door
    it reaches the arena by (``_doors.py``; ``None``: loopback TCP), closed once it has ended."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    cpu_budget_s: int | None = None
    memory_budget_mb: int | None = None
    door: Door | None = None
