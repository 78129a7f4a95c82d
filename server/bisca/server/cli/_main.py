"""The ``bisca`` command line: one parser, one module per command group."""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import logging
import os
import sys
from collections.abc import Sequence

from bisca.client.cli import add_bot_command, run_bot_command

from . import (
    _account,
    _bots,
    _check_bot,
    _demo,
    _key,
    _league,
    _match,
    _matches,
    _new_bot,
    _replay,
    _serve,
    _submit,
    _watch,
    _web,
    _worker,
)
from ._args import Handler, handle

#: Each group adds its commands (and their handlers) to the ``bisca`` subcommands.
COMMAND_GROUPS = (
    _demo,
    _serve,
    _web,
    _bots,
    _key,
    _match,
    _matches,
    _replay,
    _check_bot,
    _new_bot,
    _watch,
    _league,
    _worker,
    _account,
    _submit,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bisca", description="Bisca, a bot arena for card games")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the server does")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_commands(commands)
    # The sample bots' command is the Python SDK's own (it sets up its own logging).
    handle(add_bot_command(commands), run_bot_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # A fatal signal (a SIGBUS from a store file truncated under the server, ...) is named on
    # stderr with where it struck, instead of a silent death.
    if sys.__stderr__ is not None:  # the process's own stderr (a caller may have replaced sys's)
        with contextlib.suppress(OSError, ValueError):
            faulthandler.enable(file=sys.__stderr__)
    parser = build_parser()
    args = parser.parse_args(argv)
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
