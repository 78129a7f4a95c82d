"""``bisca bot NAME --game GAME``: run a sample bot against a server.

The ``bisca`` command (``bisca.server.cli``) owns the parser; it wires this command in with::

    add_bot_command(commands)          # commands = parser.add_subparsers(...)
    ...
    if args.command == "bot":
        return run_bot_command(args)

``python -m bisca.client.cli bot NAME ...`` is the same command on its own (:func:`main`): the
arena launches its sample bots that way, so that a bot process loads the SDK alone (0.2 s of
CPU) rather than the whole server's command line (1 s).

Address and token default to ``BISCA_ADDRESS`` and ``BISCA_TOKEN``, which ``bisca match`` sets
for the bots it launches, so ``bisca bot greedy --game belote`` is a complete bot command there.
``--seed`` defaults to ``BISCA_SEED``, the seed the arena gives the bots it launches.
``--ca`` (``BISCA_CA``) connects with TLS; ``--client-cert`` and ``--client-key`` are for a
server that requires client certificates.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from ._text import printable
from ._transport import run
from ._types import BotCrashed, BotRejected, ConnectionLost
from .bots import BOTS, by_game, make_bot

logger = logging.getLogger("bisca.client")

#: Where a launched sample bot finds its seed when ``--seed`` does not give one.
SEED_VARIABLE = "BISCA_SEED"


def add_bot_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``bot`` command to ``subparsers`` (from ``ArgumentParser.add_subparsers``)."""
    known = "; ".join(f"{game}: {', '.join(sorted(bots))}" for game, bots in sorted(BOTS.items()))
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "bot",
        help="run a sample bot against a Bisca server",
        description=f"Run a sample bot against a Bisca server.  Bots by game: {known}.",
    )
    parser.add_argument("bot", metavar="NAME", help="the sample bot to run (e.g. random, greedy)")
    parser.add_argument(
        "--game",
        action="append",
        dest="games",
        metavar="GAME",
        help="a game to play (repeat for several; default: belote)",
    )
    parser.add_argument(
        "--address",
        help="host:port, grpcs://host:port (TLS) or unix:/path (default: $BISCA_ADDRESS)",
    )
    parser.add_argument("--token", help="the bot's token (default: $BISCA_TOKEN)")
    parser.add_argument(
        "--ca",
        metavar="FILE",
        help="connect with TLS, verifying the server's certificate against this CA (PEM; "
        "default: $BISCA_CA; a grpcs:// address without it uses the system's roots)",
    )
    parser.add_argument(
        "--client-cert",
        metavar="FILE",
        help="the bot's certificate (PEM), for a server that requires one (mutual TLS; "
        "default: $BISCA_CLIENT_CERT)",
    )
    parser.add_argument(
        "--client-key",
        metavar="FILE",
        help="the key of --client-cert (PEM; default: $BISCA_CLIENT_KEY)",
    )
    parser.add_argument("--name", help="the bot name to announce (default: NAME)")
    parser.add_argument("--version", dest="bot_version", default="0", help="the bot version")
    parser.add_argument(
        "--seed",
        type=int,
        help=f"seed of a random bot, for reproducible play (default: ${SEED_VARIABLE}, which "
        "the arena sets for the bots it launches, derived from the match's or the "
        "tournament's seed; without either, unseeded)",
    )
    parser.add_argument(
        "--live-events",
        action="store_true",
        help="ask for every event as it happens (default: inside the next request)",
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="when the bot's code raises, print the traceback and play the first legal action "
        "(saying so each time) instead of ending the bot",
    )
    parser.add_argument(
        "--no-reconnect",
        dest="reconnect",
        action="store_false",
        help="exit when the connection fails instead of reconnecting",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="logging level on stderr (default: INFO)",
    )
    return parser


def seed_from_environment() -> int | None:
    """``$BISCA_SEED`` as a seed (``None`` when it is not set; ``ValueError`` naming it when it
    is not a whole number)."""
    text = os.environ.get(SEED_VARIABLE, "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{SEED_VARIABLE} must be a whole number, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    """``bisca bot ...`` with only the SDK loaded: ``argv`` is ``bot NAME [options]``."""
    parser = argparse.ArgumentParser(prog="bisca")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_bot_command(commands)
    return run_bot_command(parser.parse_args(argv))


def run_bot_command(args: argparse.Namespace) -> int:
    """Run the bot that ``args`` (parsed by the ``bot`` command) names; the exit status."""
    logging.basicConfig(
        level=args.log_level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    games: list[str] = list(dict.fromkeys(args.games or ["belote"]))
    try:
        seed = args.seed if args.seed is not None else seed_from_environment()
        bots = {game: make_bot(game, args.bot, seed) for game in games}
        run(
            bots[games[0]] if len(games) == 1 else by_game(bots),
            address=args.address,
            token=args.token,
            name=args.name or args.bot,
            version=args.bot_version,
            games=games,
            reconnect=args.reconnect,
            live_events=args.live_events,
            keep_going=args.keep_going,
            ca=args.ca,
            client_cert=args.client_cert,
            client_key=args.client_key,
        )
    except ValueError as error:
        print(printable(f"bisca bot: {error}"), file=sys.stderr)
        return 2
    except (BotRejected, BotCrashed, ConnectionLost) as error:
        print(printable(f"bisca bot: {error}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
