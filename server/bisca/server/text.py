"""Bot-supplied text made safe to show a person.

A bot chooses its name, its version and everything it writes to stderr, and that text reaches
terminals (``bisca match``'s result table, ``replay show``) and browsers.  Escape sequences in
it could retitle the terminal, write the clipboard (OSC 52), move the cursor to overprint a
fake "match OK"; so every such text passes through :func:`printable` where it enters a record
and where it is printed: one function, so no place cleans it differently (the rule is
:func:`bisca.wire.printable`, which the Python SDK applies to what servers send).
"""

from __future__ import annotations

from bisca.wire import printable

__all__ = ["printable"]
