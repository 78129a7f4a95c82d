"""``bisca``'s table of commands (``cli._main.COMMANDS``), which lets a run load only the group
of the command it runs, says exactly what the groups add."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from bisca.server.cli import build_parser
from bisca.server.cli._main import COMMANDS

#: Loading every group starts a process: croniter, which procrastinate (the worker's queue)
#: imports, runs ``file`` on the interpreter as it is imported.
pytestmark = pytest.mark.system


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    (subparsers,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(subparsers.choices)


def test_the_table_names_every_command_of_every_group() -> None:
    assert _commands(build_parser()) == set(COMMANDS)


def test_a_command_s_parser_holds_its_group_s_commands_only() -> None:
    for command, module in COMMANDS.items():
        group = {name for name, other in COMMANDS.items() if other == module}
        assert _commands(build_parser(command)) == group, command


def _loaded(command: str, roots: tuple[str, ...], prefixes: tuple[str, ...]) -> list[str]:
    """The modules a fresh process loads to build ``command``'s parser (its command group) that
    are among ``roots`` (top-level packages) or start with one of ``prefixes``."""
    probe = (
        f"import sys; from bisca.server.cli import _main; _main.build_parser({command!r});"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{roots!r} or m.startswith({prefixes!r}))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return loaded.stdout.split()


def test_a_store_command_loads_neither_the_web_app_nor_the_referee() -> None:
    """What the table is for: ``bisca bots list`` starts without the rooms it does not use."""
    rooms = ("bisca.server.web", "bisca.server.referee", "bisca.server.hosting")
    assert _loaded("bots", ("aiohttp", "procrastinate"), rooms) == []


@pytest.mark.parametrize("command", ["serve", "match", "check-bot", "matches", "web"])
def test_a_command_on_one_machine_loads_no_queue(command: str) -> None:
    """The match queue (procrastinate, its driver psycopg and croniter's ``file`` process) is
    loaded by the distributed commands only (``bisca.server.tournament.distributed``), and
    by a served ladder once its store is shared."""
    queue = ("procrastinate", "psycopg", "croniter")
    assert _loaded(command, queue, ("bisca.server.tournament.distributed",)) == []
