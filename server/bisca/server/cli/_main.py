"""The ``bisca`` command line: one parser, one module per command group."""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Protocol

from ._args import Commands, Handler

#: Each command of ``bisca``, and the module of the group that adds it (with its handler).  The
#: parser of a run is built from the group of the command being run only (as pip's command
#: registry does): every group loads the rooms it drives, and the union — the web app, the
#: PostgreSQL driver, the worker's queue, the league's gate — costs a second of CPU at every
#: start, which ``bisca replay verify`` or ``bisca bots add`` would pay for nothing.  ``bisca``
#: alone, ``--help`` or an unknown command builds them all.  A test holds this table equal to
#: what the groups add.
COMMANDS: dict[str, str] = {
    "demo": "_demo",
    "serve": "_serve",
    "web": "_web",
    "bots": "_bots",
    "key": "_key",
    "match": "_match",
    "matches": "_matches",
    "replay": "_replay",
    "check-bot": "_check_bot",
    "new-bot": "_new_bot",
    "watch": "_watch",
    "tournament": "_league",
    "leaderboard": "_league",
    "worker": "_worker",
    "workers": "_worker",
    "account": "_account",
    "submit": "_submit",
    "submission": "_submit",
    "retire": "_submit",
    "ladder": "_ladder",
    "bot": "_bot",
}


class CommandGroup(Protocol):
    def add_commands(self, commands: Commands) -> None: ...


def command_group(module: str) -> CommandGroup:
    """The group module ``module`` of :data:`COMMANDS`, loaded."""
    group: CommandGroup = importlib.import_module(f"{__package__}.{module}")
    return group


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """``bisca``'s parser: with ``command`` (a name of :data:`COMMANDS`), its group's commands
    only; otherwise every command."""
    parser = argparse.ArgumentParser(prog="bisca", description="Bisca, a bot arena for card games")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the server does")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for module in chosen:
        command_group(module).add_commands(commands)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not an option (``bisca -v serve``)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _not_utf8(words: Sequence[str], environment: Mapping[str, str]) -> str | None:
    """What is not UTF-8 among the arguments and Bisca's environment variables (Python keeps
    such bytes as lone surrogates, which the store, grpc and the SDKs refuse deep in a
    command, with a traceback: review s59b, M2), said without its value (it may be a token);
    ``None`` when all is."""
    given = [
        (
            f"the value of {words[n - 1]} (argument {n + 1})"
            if n and words[n - 1][:1] == "-"
            else f"argument {n + 1}",
            word,
        )
        for n, word in enumerate(words)
    ]
    given += [
        (f"${name}", value) for name, value in environment.items() if name.startswith("BISCA_")
    ]
    for where, text in given:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return f"{where} is not UTF-8 text, as Bisca's names, tokens, paths and commands are"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    # A fatal signal (a SIGBUS from a store file truncated under the server, ...) is named on
    # stderr with where it struck, instead of a silent death.
    if sys.__stderr__ is not None:  # the process's own stderr (a caller may have replaced sys's)
        with contextlib.suppress(OSError, ValueError):
            faulthandler.enable(file=sys.__stderr__)
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_of(words))
    if (undecodable := _not_utf8(words, os.environ)) is not None:
        parser.error(undecodable)
    args = parser.parse_args(words)
    if args.command != "bot":
        logging.basicConfig(
            level=logging.INFO if args.verbose else logging.WARNING,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    run: Handler = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``bisca replay export LOG | head``): not an error of ours.
        # Point stdout at nothing so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
