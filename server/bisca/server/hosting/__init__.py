"""A league's hosted bots: each submitted version taken through the gate, built in the sandbox,
checked by ``check-bot``, one validation match, then active (``_gate.py``)."""

from ._gate import Gate, StepOutcome, bot_command

__all__ = ["Gate", "StepOutcome", "bot_command"]
