"""The store a command works on, for the commands that read or change what a data directory
holds (not those that make one: ``serve``, ``match``, ``tournament run``, ``bots add``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bisca.server.datadir import DEFAULT_DATA_DIR, LOCAL_DATA_DIR, DataDir
from bisca.server.errors import StoreError
from bisca.server.store import Store, open_store, refuse_a_store_used_elsewhere

#: Where each command keeps its data by default (docs/getting-started.md says the same): apart,
#: so a local match never writes into a running server's store.
DATA_FOLDERS = (
    f"`bisca serve` keeps its data in {DEFAULT_DATA_DIR}, `bisca match` in {LOCAL_DATA_DIR}, "
    f"`bisca tournament run` in {DEFAULT_DATA_DIR}/tournaments/NAME"
)


def existing_store(args: argparse.Namespace, *, upgrade: bool = False) -> Store:
    """The store ``--store`` names, else the one of the data directory ``--data``, which must
    hold one: a mistyped ``--data`` made a whole new data directory, of which ``bots list``
    and ``account list`` said it was empty (review s59b, M5); :class:`StoreError` saying
    which folder holds no data, or which store its server used instead."""
    if args.store is None:
        refuse_a_store_used_elsewhere(args.data)  # (its server's store, when it noted one)
        folder = Path(args.data)
        empty = folder.is_dir() and next(folder.iterdir(), None) is None
        if not DataDir(folder).store.exists() and (empty or not folder.exists()):
            # (A folder of other files, or a file, is refused by the store, naming them.)
            raise StoreError(
                f"no Bisca data in {args.data} ({DATA_FOLDERS}: name one with --data DIR)"
            )
    return open_store(args.store, args.data, upgrade=upgrade)
