"""The options of the commands that run bots or serve them: the sandbox, game settings, a
worker's lease, the metrics page.  Apart from ``_args`` because they load the rooms they
describe (the league, the sandbox, the tournaments, the metrics), which the commands that only
read a store or a log do not need (``_main.COMMANDS``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from bisca.server.errors import ConfigError
from bisca.server.league import SettingValue, parse_setting, setting_text
from bisca.server.metrics import parse_metrics_address
from bisca.server.sandbox import Limits, SandboxPolicy
from bisca.server.tournament import DEFAULT_LEASE_SECONDS

from ._args import positive_seconds


def setting(text: str) -> tuple[str, SettingValue]:
    """An argument type: ``KEY=VALUE``, the value read as a bool, an int or a string."""
    try:
        return parse_setting(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


def set_settings(
    pairs: Iterable[tuple[str, SettingValue]],
) -> list[tuple[str, str, SettingValue]]:
    """``--set`` settings as ``merged_settings`` takes them: each with the words that gave it,
    for the message when one key is given two values."""
    return [(f"--set {setting_text(key, value)}", key, value) for key, value in pairs]


def add_sandbox_options(parser: argparse.ArgumentParser, *, limits: bool = True) -> None:
    parser.add_argument(
        "--no-sandbox",
        dest="sandbox",
        action="store_false",
        help="run the bots as plain processes, not in the bubblewrap sandbox (trusted bots only)",
    )
    if limits:
        parser.add_argument(
            "--limit",
            type=setting,
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help=f"a sandbox limit of each bot ({', '.join(Limits.keys())}; repeatable)",
        )


def sandbox_policy(args: argparse.Namespace) -> SandboxPolicy:
    """The sandbox options of a command (a usage error for a limit that cannot be used)."""
    try:
        limits = Limits().merged(dict(getattr(args, "limit", [])), "--limit")
    except ConfigError as problem:
        args.parser.error(str(problem))
    return SandboxPolicy(enabled=args.sandbox, limits=limits)


def add_lease_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lease",
        type=positive_seconds,
        default=DEFAULT_LEASE_SECONDS,
        metavar="SECONDS",
        help="a worker silent this long is taken for dead and its matches are played again "
        f"(default {DEFAULT_LEASE_SECONDS:g})",
    )


def add_metrics_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metrics",
        type=_metrics_address,
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (docs/operating.md)",
    )


def _metrics_address(text: str) -> tuple[str, int]:
    try:
        return parse_metrics_address(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None
