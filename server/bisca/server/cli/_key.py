"""``bisca key``: the public key a data directory's server signs its match logs with."""

from __future__ import annotations

import argparse
import sys

from bisca.server.datadir import DataDir
from bisca.server.errors import KeyFileError, StoreError
from bisca.server.logs import data_key
from bisca.server.store import open_store, refuse_a_store_used_elsewhere

from ._args import Commands, add_data_option, add_store_option, handle


def add_commands(commands: Commands) -> None:
    key = commands.add_parser(
        "key",
        help="print the public key this server signs match logs with",
        description="Print the server's public key (created with the data directory's first "
        "server, or now).  Publish it: `bisca replay verify --key KEY LOG` checks a log "
        "against it.",
    )
    add_data_option(key)
    key.add_argument(
        "--new",
        action="store_true",
        help="create a new key where the data directory's is missing although its logs were "
        "signed (they verify with the old public key only)",
    )
    add_store_option(key)
    handle(key, run_key)


def run_key(args: argparse.Namespace) -> int:
    layout = DataDir(args.data)
    try:
        created = not layout.server_key.exists()
    except OSError as problem:  # (a folder it may not read: review s57c)
        print(f"bisca key: cannot read {layout.server_key}: {problem.strerror}", file=sys.stderr)
        return 1
    if args.new and not created:
        print(
            f"bisca key: {layout.server_key} exists: --new makes a key only where it is missing "
            "(move the old one aside first, and keep its public key to verify the logs it signed)",
            file=sys.stderr,
        )
        return 1
    try:
        if not args.new:
            refuse_a_lost_key(layout, args.store, existing_store=True)
        layout.create()
        key = data_key(layout, new=args.new)
    except (OSError, KeyFileError, StoreError) as problem:
        print(f"bisca key: {problem}", file=sys.stderr)
        return 1
    print(key.public_text)
    if created:
        print(f"(a new key, kept in {layout.server_key})", file=sys.stderr)
    return 0


def refuse_a_lost_key(layout: DataDir, store: str | None, *, existing_store: bool = False) -> None:
    """A :class:`KeyFileError` (from :func:`data_key`, saying how to go on) where the data
    directory's key is missing in a folder that is not new and the store its servers use keeps
    logs that key signed: a PostgreSQL league keeps its logs there, and the folder's
    ``matches/`` may hold none.  ``store`` is that store; not given, the one the folder notes
    its server uses must be (a ``StoreError`` names it); ``existing_store``: a SQLite store
    that is not there is an error, not an empty store made to be asked.  Where nothing is
    refused, the key is made (``data_key`` makes it once it has asked)."""
    if layout.server_key.exists() or not layout.holds_bisca_data():
        return
    if store is None:
        refuse_a_store_used_elsewhere(layout.root)
        return
    with open_store(store, layout.root, existing=existing_store, upgrade=False) as opened:
        data_key(layout, kept=opened.logs)
