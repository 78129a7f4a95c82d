"""``bisca bots add|list``: the registered bots of a data directory."""

from __future__ import annotations

import argparse
import sys

from bisca.server.errors import StoreError
from bisca.server.store import Store, check_bot_name, names_a_version, open_store

from ._args import Commands, add_data_option, add_store_option, handle
from ._stores import existing_store


def add_commands(commands: Commands) -> None:
    bots = commands.add_parser("bots", help="register and list bots")
    actions = bots.add_subparsers(dest="bots_command", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="register a bot and print its token once")
    add.add_argument("name")
    add_data_option(add)
    add_store_option(add)
    handle(add, run_add)
    listing = actions.add_parser("list", help="list the registered bots")
    add_data_option(listing)
    add_store_option(listing)
    handle(listing, run_list)


def _open(args: argparse.Namespace, *, upgrade: bool) -> Store | None:
    try:
        return open_store(args.store, args.data, upgrade=upgrade)
    except StoreError as problem:
        print(f"bisca bots: {problem}", file=sys.stderr)
        return None


def run_add(args: argparse.Namespace) -> int:
    if names_a_version(args.name):
        # The league registers each hosted version under this name when it is submitted: a
        # bot taken by hand would play (and be rated) as the version, or block its intake.
        print(
            f"bisca bots add: {args.name!r} reads as a hosted version's name (NAME.vN, "
            "whatever its case, 1 and l, 0 and o alike), kept for the league's versions; "
            "choose another name",
            file=sys.stderr,
        )
        return 1
    try:  # (before the store is made: review s59b, M5)
        check_bot_name(args.name)
    except StoreError as problem:
        print(f"bisca bots add: {problem}", file=sys.stderr)
        return 1
    store = _open(args, upgrade=True)
    if store is None:
        return 1
    with store:
        try:
            token = store.bots.add(args.name)
        except StoreError as problem:
            print(f"bisca bots add: {problem}", file=sys.stderr)
            return 1
    print(f"registered bot {args.name}; its token (shown only this once):")
    print(token)
    return 0


def run_list(args: argparse.Namespace) -> int:
    try:
        store = existing_store(args)
    except StoreError as problem:
        print(f"bisca bots: {problem}", file=sys.stderr)
        return 1
    with store:
        bots = store.bots.all()
        # The store that was read: --data's folder is not it when --store names another.
        where = args.data if args.store is None else store.describe()
    if not bots:
        print(f"no bots registered in {where}")
    for bot in bots:
        print(f"{bot.name:<32} registered {bot.created_at}")
    return 0
