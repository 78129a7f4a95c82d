"""Text from the other side of the protocol made safe to show a person.

The server shows what bots send (names, versions, stderr) and the Python SDK shows what servers
send (error messages, ids, reasons) on terminals and in browsers.  Escape sequences in such text
could retitle the terminal, write the clipboard (OSC 52), clear the screen or move the cursor to
overprint a fake line; so both sides pass it through :func:`printable`, one rule for both
(``bisca.server.text``, ``bisca.client._text``).
"""

from __future__ import annotations

import re

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
