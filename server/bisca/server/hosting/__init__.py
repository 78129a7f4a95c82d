"""A league's hosted bots: each submitted version taken through the gate, built in the sandbox,
checked by ``check-bot``, one validation match, then active (``_gate.py``); how each language
is built, on the arena's own SDKs (``_builds.py``); the active versions playing the continuous
ladder's rated matches (``_ladder.py``), each from a copy of its files outside the data
directory (``_copies.py``)."""

from ._builds import Toolchains, bot_command
from ._gate import GATE_LOGGER, GATE_POLL_S, Gate, StepOutcome, gate_running
from ._ladder import DrawnPairing, Ladder, LadderJob, LadderWorker, ladder_running

__all__ = [
    "GATE_LOGGER",
    "GATE_POLL_S",
    "DrawnPairing",
    "Gate",
    "Ladder",
    "LadderJob",
    "LadderWorker",
    "StepOutcome",
    "Toolchains",
    "bot_command",
    "gate_running",
    "ladder_running",
]
