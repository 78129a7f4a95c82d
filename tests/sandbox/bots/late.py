"""The random sample bot, connecting two seconds after it starts: after what another bot of its
match does as it starts (``abuser.py connections-first``)."""

import os
import sys
import time

time.sleep(2)
os.execv(
    sys.executable, [sys.executable, "-m", "bisca.client.cli", "bot", "random", "--game", "belote"]
)
