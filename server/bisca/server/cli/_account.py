"""``bisca account``: a league's accounts.

The operator's commands work on the store (``--data``/``--store``): ``invite``, ``list``,
``suspend``, ``reinstate``, ``delete``.  The competitor's talk to the league's app
(``--server URL``): ``create``, and ``token create|list|revoke``.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
import warnings
from collections.abc import Callable
from urllib.parse import quote

from bisca.server.errors import StoreError
from bisca.server.store import (
    AccountStatus,
    Store,
    check_account_name,
    check_token_label,
)

from ._args import Commands, add_data_option, add_store_option, handle
from ._league_client import (
    PASSWORD_VARIABLE,
    TOKEN_VARIABLE,
    LeagueCallFailed,
    account_token,
    add_server_options,
    call,
    check_server,
)
from ._stores import existing_store

#: The operator's status changes, by command.
STATUS_COMMANDS = {
    "suspend": (AccountStatus.SUSPENDED, "its bots stop playing; its results stay"),
    "reinstate": (AccountStatus.ACTIVE, "its bots play again"),
    "delete": (AccountStatus.DELETED, "its tokens are revoked; its results stay"),
}


def add_commands(commands: Commands) -> None:
    account = commands.add_parser("account", help="a league's accounts (operator and competitor)")
    actions = account.add_subparsers(dest="account_command", required=True, metavar="ACTION")

    invite = actions.add_parser("invite", help="operator: make a single-use invite code")
    invite.add_argument("--note", default="", help="who it is for (kept with the account)")
    _operator_options(invite)
    handle(invite, run_invite)
    listing = actions.add_parser("list", help="operator: list the accounts")
    _operator_options(listing)
    handle(listing, run_list)
    for name, (status, effect) in STATUS_COMMANDS.items():
        change = actions.add_parser(name, help=f"operator: {name} an account ({effect})")
        change.add_argument("name")
        _operator_options(change)
        change.set_defaults(status=status, effect=effect)
        handle(change, run_status)

    create = actions.add_parser("create", help="competitor: open an account on a league server")
    create.add_argument("name")
    create.add_argument("--invite", metavar="CODE", help="the invite code the operator gave you")
    add_server_options(create, token=False)
    handle(create, run_create)

    connect = actions.add_parser(
        "connect",
        help="competitor: a new connected version of a bot that runs on your machine and "
        "dials in (prints its bot token once)",
    )
    connect.add_argument("bot", help="the bot's name (made with its first version)")
    add_server_options(connect, token=True)
    handle(connect, run_connect)

    token = actions.add_parser("token", help="competitor: the account's API tokens")
    token_actions = token.add_subparsers(dest="token_command", required=True, metavar="ACTION")
    new = token_actions.add_parser("create", help="a new API token (asks the password)")
    new.add_argument("name", help="the account")
    new.add_argument("--label", default="command line", help="what the token is for")
    add_server_options(new, token=False)
    handle(new, run_token_create)
    tokens = token_actions.add_parser("list", help="the account's tokens (never their secrets)")
    add_server_options(tokens, token=True)
    handle(tokens, run_token_list)
    revoke = token_actions.add_parser("revoke", help="revoke a token by its id")
    revoke.add_argument("token_id")
    add_server_options(revoke, token=True)
    handle(revoke, run_token_revoke)


def _operator_options(parser: argparse.ArgumentParser) -> None:
    add_data_option(parser)
    add_store_option(parser)


def _operator(args: argparse.Namespace, work: Callable[[Store], int]) -> int:
    """``work`` on the league's store, which must be there (a mistyped ``--data`` made one
    whose invites no server knew: review s59b, M5)."""
    try:
        with existing_store(args, upgrade=True) as store:
            return work(store)
    except StoreError as problem:
        print(f"bisca account {args.account_command}: {problem}", file=sys.stderr)
        return 1


def run_invite(args: argparse.Namespace) -> int:
    def invite(store: Store) -> int:
        code = store.accounts.new_invite(args.note)
        print("an invite code (single use, shown only this once):")
        print(code)
        return 0

    return _operator(args, invite)


def run_list(args: argparse.Namespace) -> int:
    def listing(store: Store) -> int:
        accounts = store.accounts.all()
        if not accounts:
            print("no accounts")
        for account in accounts:
            bots = sorted({version.bot for version in store.versions.of_account(account.name)})
            print(
                f"{account.name:<32} {account.status:<10} since {account.created_at}"
                f"  bots: {', '.join(bots) or '-'}"
            )
        return 0

    return _operator(args, listing)


def run_status(args: argparse.Namespace) -> int:
    def change(store: Store) -> int:
        store.accounts.set_status(args.name, args.status)
        print(f"account {args.name} is {args.status}: {args.effect}")
        return 0

    return _operator(args, change)


def _password(confirm: bool) -> str:
    given = os.environ.get(PASSWORD_VARIABLE)
    if given:
        return given
    try:
        # getpass warns, then reads the password with echo on, when there is no terminal to
        # turn echo off on (stdin a pipe or /dev/null, no /dev/tty): made an error, its
        # warning stops it before it prompts, and the person is told the two ways instead.
        with warnings.catch_warnings():
            warnings.simplefilter("error", getpass.GetPassWarning)
            password = getpass.getpass("password: ")
            if confirm and getpass.getpass("password again: ") != password:
                raise LeagueCallFailed("the two passwords differ")
    except (EOFError, getpass.GetPassWarning):
        raise LeagueCallFailed(
            f"no password: it is read from the terminal, or from ${PASSWORD_VARIABLE}"
        ) from None
    return password


def _competitor(args: argparse.Namespace, work: Callable[[], int]) -> int:
    try:
        return work()
    except (LeagueCallFailed, StoreError) as problem:
        print(f"bisca account: {problem}", file=sys.stderr)
        return 1


def run_create(args: argparse.Namespace) -> int:
    def create() -> int:
        # Checked here, before the password is asked: not typed for nothing.
        check_account_name(args.name)
        check_server(args)
        password = _password(confirm=True)
        body: dict[str, object] = {"name": args.name, "password": password}
        if args.invite:
            body["invite"] = args.invite
        call(args, "POST", "/api/accounts", body)
        print(f"account {args.name} created on {args.server}")
        answer = call(
            args, "POST", "/api/tokens", {"name": args.name, "password": password, "label": "cli"}
        )
        _show_token(answer)
        return 0

    return _competitor(args, create)


def _show_token(answer: dict[str, object]) -> None:
    print(f"its API token {answer.get('id')} (shown only this once):")
    print(answer.get("token"))
    print(f"export {TOKEN_VARIABLE}=... to use it with `bisca submit`")


def run_token_create(args: argparse.Namespace) -> int:
    def create() -> int:
        # Checked here, before the password is asked: not typed for nothing.
        check_account_name(args.name)
        check_token_label(args.label)
        check_server(args)
        body = {"name": args.name, "password": _password(confirm=False), "label": args.label}
        _show_token(call(args, "POST", "/api/tokens", body))
        return 0

    return _competitor(args, create)


def run_token_list(args: argparse.Namespace) -> int:
    def listing() -> int:
        answer = call(args, "GET", "/api/account/tokens", token=account_token(args))
        tokens = answer.get("tokens")
        for token in tokens if isinstance(tokens, list) else []:
            state = "revoked" if token.get("revoked") else "live"
            print(f"{token.get('id')}  {token.get('kind'):<8} {state:<8} {token.get('label')}")
        return 0

    return _competitor(args, listing)


def run_token_revoke(args: argparse.Namespace) -> int:
    def revoke() -> int:
        path = f"/api/account/tokens/{quote(args.token_id, safe='')}"
        call(args, "DELETE", path, token=account_token(args))
        print(f"token {args.token_id} revoked")
        return 0

    return _competitor(args, revoke)


def run_connect(args: argparse.Namespace) -> int:
    def connect() -> int:
        path = f"/api/bots/{quote(args.bot, safe='')}/connect"
        answer = call(args, "POST", path, {}, token=account_token(args))
        version = answer.get("version")
        label = version.get("label") if isinstance(version, dict) else args.bot
        player = version.get("player") if isinstance(version, dict) else args.bot
        print(f"{label}: connected, active; it plays the ladder as {player} while it is online")
        print("its bot token (shown only this once):")
        print(answer.get("token"))
        print("run the bot with BISCA_ADDRESS=the league's gRPC address and BISCA_TOKEN=this token")
        return 0

    return _competitor(args, connect)
