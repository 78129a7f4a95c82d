"""A league's hosted bots: each submitted version taken through the gate, built in the sandbox,
checked by ``check-bot``, one validation match, then active (``_gate.py``); how each language
is built, on the arena's own SDKs (``_builds.py``)."""

from ._builds import Toolchains
from ._gate import GATE_POLL_S, Gate, StepOutcome, bot_command, gate_running

__all__ = ["GATE_POLL_S", "Gate", "StepOutcome", "Toolchains", "bot_command", "gate_running"]
