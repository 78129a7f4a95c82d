"""Finding the bot's own errors in its stderr: the traceback an SDK prints when the bot's code
raises (or the runtime prints when it dies of it), and the line an SDK prints when the bot
answers something that is not an action of the game.

A bot that raises, or answers no action, and is kept going by a fallback plays legal moves, so
no message of the protocol shows the bug; its stderr does.  The checker fails such a bot and
quotes the first error report found, from its first line to the exception's line, bounded.
Recognised:

* Python: ``Traceback (most recent call last):`` up to the exception's line (the SDK prints
  one per exception, also with ``keep_going``);
* JavaScript: an ``...Error...`` line followed by stack lines (``    at ...``);
* C++: ``terminate called after throwing an instance of ...`` and the ``what():`` after it;
* any SDK: a line with :data:`NOT_AN_ACTION`, which the Python, Node and C++ SDKs all print
  (word for word: their tests hold them to it) when the bot's answer is not an action of the
  game (``None``, ``undefined``, a string, an empty ``GameAction``, ...), whether that ends
  the bot or a fallback is sent in its place.
"""

from __future__ import annotations

import re
from pathlib import Path

from bisca.server.textfiles import read_tail

#: How much of the end of the stderr log is searched, and how many lines of a report shown.
SEARCHED_BYTES = 256 * 1024
SHOWN_LINES = 30

PYTHON_START = "Traceback (most recent call last):"
_JS_ERROR = re.compile(r"^\S*(Error|Exception)\b")
_JS_FRAME = re.compile(r"^\s+at \S")
_CPP_START = "terminate called after throwing an instance of"
#: The SDKs' phrase for an answer that is not an action of the game (a documented marker: the
#: Python SDK's ``bisca.client._session.NOT_AN_ACTION``, and the same words in Node's and C++'s).
NOT_AN_ACTION = "which is not an action of the game"


def stderr_text(path: Path) -> str:
    """The last :data:`SEARCHED_BYTES` of a stderr log ("" when it cannot be read)."""
    try:
        return read_tail(path, SEARCHED_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def first_error_report(text: str) -> list[str]:
    """The lines of the first error report in ``text`` (``[]`` when there is none), at most
    :data:`SHOWN_LINES` of them."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        found = _report_at(lines, index, line)
        if found:
            if len(found) > SHOWN_LINES:
                cut = len(found) - SHOWN_LINES + 1
                found = [found[0], f"  ... ({cut} lines)", *found[-(SHOWN_LINES - 2) :]]
            return found
    return []


def count_error_reports(text: str) -> int:
    """How many error reports ``text`` holds (a Python traceback counts once)."""
    lines = text.splitlines()
    return sum(1 for index, line in enumerate(lines) if _report_at(lines, index, line))


def _report_at(lines: list[str], index: int, line: str) -> list[str]:
    if line.rstrip().endswith(PYTHON_START):
        end = index + 1
        while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end]):
            end += 1
        return lines[index : end + 1]
    if NOT_AN_ACTION in line:
        return [line]
    if _CPP_START in line:
        following = lines[index + 1 : index + 2]
        return [line, *[more for more in following if "what()" in more]]
    if _JS_ERROR.match(line) and index + 1 < len(lines) and _JS_FRAME.match(lines[index + 1]):
        end = index + 1
        while end < len(lines) and _JS_FRAME.match(lines[end]):
            end += 1
        return lines[index:end]
    return []
