"""What every command group shares: argument types, the ``--data`` and ``--store`` options, the
handler hook (the options of the commands that run bots are in ``_arena_args``).

Each command module adds its parsers with ``add_commands(commands)`` and points each one at its
handler with :func:`handle`; ``bisca`` then calls ``args.run(args)``.  A handler returns the
exit status; a usage error goes through ``args.parser.error`` (exit 2, with that command's
usage).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from bisca.server.datadir import DEFAULT_DATA_DIR

#: The ``bisca`` subcommands, as ``ArgumentParser.add_subparsers`` returns them.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
Handler = Callable[[argparse.Namespace], int]


def bisca_command() -> str:
    """``bisca`` as the lines a command prints for pasting must write it: the plain name when
    that runs this very program from ``PATH``, else the path it was run by (``.venv/bin/bisca``,
    relative to the working folder when inside it), shell-quoted.  A user who ran
    ``.venv/bin/bisca`` without an activated environment has no ``bisca`` on ``PATH``."""
    invoked = sys.argv[0] if sys.argv else ""
    if Path(invoked).name != "bisca" or os.sep not in invoked:
        return "bisca"  # found on PATH, or not the installed script (``python -m``, a test)
    program = Path(invoked).resolve()
    found = shutil.which("bisca")
    if found is not None and Path(found).resolve() == program:
        return "bisca"
    try:
        shown = Path(os.path.relpath(program))
    except ValueError:
        shown = program
    if shown.parts and shown.parts[0] == os.pardir:
        shown = program
    text = str(shown) if len(shown.parts) > 1 else f".{os.sep}{shown}"  # a bare name is PATH's
    return shlex.quote(text)


#: The characters a token may hold: printable ASCII but the space (the server's are URL-safe,
#: and anything else cannot go in an HTTP or gRPC header).
TOKEN_CHARACTERS = frozenset(chr(code) for code in range(0x21, 0x7F))


def token_refusal(token: str, where: str) -> str | None:
    """Why ``token``, given as ``where`` (an option or a variable), cannot be shown to a server,
    never quoting it (a secret; a pasted carriage return would garble the line); ``None`` when
    it can."""
    if set(token) <= TOKEN_CHARACTERS:
        return None
    return (
        f"{where} holds a space, a control character or a non-ASCII character, which a token "
        "never has: copy it again"
    )


def handle(parser: argparse.ArgumentParser, run: Handler) -> None:
    """Make ``run`` the handler of the command ``parser`` parses."""
    parser.set_defaults(run=run, parser=parser)


#: The largest whole number an option takes unless it says otherwise: what the protocol's
#: 32-bit fields hold (a count, a limit, milliseconds), so a larger one is refused here, naming
#: the option, not by protobuf in the middle of a call (review 53).
WHOLE_MAX = 2**31 - 1


def whole(low: int, high: int | None = WHOLE_MAX) -> Callable[[str], int]:
    """An argument type: a whole number from ``low`` to ``high`` (``None``: the caller checks
    how large it may be, and says so in its own words)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a number of at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"expected a number of at most {high}, got {value}")
        return value

    return parse


def version_number(text: str) -> int:
    """An argument type: a hosted bot's version, ``2`` or ``v2`` (as its pages write it)."""
    number = text.removeprefix("v")
    if not number.isdigit() or not 1 <= int(number) <= WHOLE_MAX:
        raise argparse.ArgumentTypeError(f"a version is a number such as 2 or v2, not {text!r}")
    return int(number)


def file_path(text: str) -> Path:
    """An argument type: the path of a file to read.  An empty one is refused: ``Path("")`` is
    the current folder, and was reported as "Is a directory" (review 53)."""
    if not text:
        raise argparse.ArgumentTypeError("no file named: the path is empty")
    return Path(text)


def folder_path(text: str) -> Path:
    """An argument type: the path of a folder.  An empty one is refused, not taken for the
    current folder (``Path("")`` is ``.``: an unset shell variable wrote a new bot's files, or
    put a data directory, where the command ran); ``.`` says the current folder."""
    if not text:
        raise argparse.ArgumentTypeError("no folder named: the path is empty (. is this folder)")
    return Path(text)


def add_data_option(
    parser: argparse.ArgumentParser, what: str = "data directory", default: Path = DEFAULT_DATA_DIR
) -> None:
    parser.add_argument(
        "--data", type=folder_path, default=default, help=f"{what} (default {default})"
    )


def add_store_option(
    parser: argparse.ArgumentParser, *, required: bool = False, shared: bool = False
) -> None:
    """``--store URL``; ``shared``: a command that works on a shared (PostgreSQL) store only,
    whose help offers no SQLite file."""
    if shared:
        text = (
            "the shared store: postgresql://USER@HOST:PORT/DATABASE (a distributed "
            "tournament's; a local one's standings: `bisca leaderboard --data DIR`)"
        )
    else:
        text = (
            "the store: sqlite:PATH, or postgresql://USER@HOST:PORT/DATABASE shared by the "
            "machines of a league"
            + ("" if required else " (default: the SQLite file of the data directory)")
        )
    parser.add_argument("--store", metavar="URL", required=required, help=text)


#: The longest a timeout, lease or wait given in seconds may be (a day): PostgreSQL refuses an
#: infinite interval, and a worker given one looped on the refusal (review 53).
SECONDS_MAX = 86_400.0


def positive_seconds(text: str) -> float:
    """An argument type: a number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= SECONDS_MAX:  # NaN and infinity too
        raise argparse.ArgumentTypeError(
            f"expected more than 0 seconds, at most {SECONDS_MAX:,.0f}, got {text}"
        )
    return value
