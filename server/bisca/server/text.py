"""Bot-supplied text made safe to show a person.

A bot chooses its name, its version and everything it writes to stderr, and that text reaches
terminals (``bisca match``'s result table, ``replay show``) and browsers.  Escape sequences in
it could retitle the terminal, write the clipboard (OSC 52), move the cursor to overprint a
fake "match OK"; so every such text passes through :func:`printable` where it enters a record
and where it is printed: one function, so no place cleans it differently.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

#: ESC sequences first (so their parameters go with them): CSI ``ESC [ ... final``, the string
#: commands OSC/DCS/SOS/PM/APC ``ESC ] ... (BEL | ESC \\)`` and their 8-bit C1 forms, then any
#: other two-character ``ESC x``; then every remaining C0 control but newline and tab, DEL and
#: C1 control.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def printable(text: str) -> str:
    """``text`` without control characters (C0 but newline and tab, DEL, C1) and without the
    escape sequences they start, so showing it cannot drive the terminal that shows it."""
    return _ESCAPES.sub("", text)
