"""A changed bot in a local tournament is named, never silently mixed with its old results.

Each finished match records the fingerprint of the files of each of its bots (the folders its
command runs from, or its ``dir``: :func:`bisca.server.sandbox.bot_folders`) as one line of
``fingerprints.jsonl`` in the tournament's bot folder.  A run that resumes compares every
bot's files with the fingerprint its last match recorded: a bot whose files changed stops
the run before it plays, naming the bot, unless the operator accepts the change
(``--accept-changed``), from when the new fingerprint is the one recorded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from bisca.server.errors import TournamentError
from bisca.server.sandbox import absolute_argv, bot_folders, fingerprint_folder

FINGERPRINTS = "fingerprints.jsonl"
#: Folders of a bot's files that say nothing of what it plays (caches, history, packages).
_LEFT_OUT = (".git", "__pycache__", ".venv", "node_modules")


def bot_fingerprint(argv: Sequence[str], folder: Path | None) -> str | None:
    """The fingerprint of the files a bot command runs from (``folder``, its ``dir``, or the
    folders of its command); ``None`` for a command that names no file (an installed
    program)."""
    folders = [folder] if folder is not None else bot_folders(absolute_argv(argv))
    if not folders:
        return None
    return "+".join(fingerprint_folder(found, _LEFT_OUT) for found in folders)


class FingerprintBook:
    """The fingerprints recorded per match of one tournament (``fingerprints.jsonl``)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / FINGERPRINTS

    def last(self) -> dict[str, str]:
        """Each bot's fingerprint as its last recorded match saw it."""
        found: dict[str, str] = {}
        if not self.path.is_file():
            return found
        for line in self.path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut off by a stopped run
            bots = entry.get("bots") if isinstance(entry, dict) else None
            if isinstance(bots, dict):
                found.update({str(bot): str(print_) for bot, print_ in bots.items()})
        return found

    def record(self, match_id: str, fingerprints: Mapping[str, str]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self.path, "a") as file:
            file.write(json.dumps({"match": match_id, "bots": dict(fingerprints)}) + "\n")


def changed_bots(book: FingerprintBook, now: Mapping[str, str]) -> list[str]:
    """The bots whose fingerprint ``now`` is not the one of their last recorded match."""
    recorded = book.last()
    return sorted(bot for bot, print_ in now.items() if recorded.get(bot, print_) != print_)


def check_unchanged(
    name: str, book: FingerprintBook, now: Mapping[str, str], accept_changed: bool
) -> list[str]:
    """The bots whose files changed since their last recorded match of tournament ``name``;
    :class:`TournamentError` naming them, unless the change is accepted."""
    changed = changed_bots(book, now)
    if changed and not accept_changed:
        names = ", ".join(changed)
        raise TournamentError(
            f"{names}: the files changed since {'its' if len(changed) == 1 else 'their'} "
            f"matches of tournament {name!r} were played, and the old results would be mixed "
            "with the new version's: give the tournament a new name (its file's `name`) to "
            "start afresh, or run it again with --accept-changed to keep the results and go on "
            "with the changed files"
        )
    return changed
