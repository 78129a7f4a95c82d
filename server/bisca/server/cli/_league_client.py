"""The competitor's side of a league server: JSON calls to its web app (``--server URL``),
with an account's API token (``--token``, or ``BISCA_ACCOUNT_TOKEN``)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import ssl
import urllib.error
import urllib.request
from pathlib import Path

from bisca.server.errors import BiscaError

from ._args import bisca_command

TOKEN_VARIABLE = "BISCA_ACCOUNT_TOKEN"
PASSWORD_VARIABLE = "BISCA_PASSWORD"
#: Seconds a call may take (an upload is bounded by the server's archive limit).
TIMEOUT_S = 120.0


class LeagueCallFailed(BiscaError):
    """A call the league server refused or could not answer, with its reason; ``status`` is
    the HTTP status of a refusal (``None`` when there was no answer)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def add_server_options(parser: argparse.ArgumentParser, *, token: bool) -> None:
    parser.add_argument(
        "--server",
        required=True,
        metavar="URL",
        help="the league's app, e.g. https://league.example",
    )
    parser.add_argument("--ca", type=Path, metavar="FILE", help="trust this CA (PEM) for HTTPS")
    if token:
        parser.add_argument(
            "--token",
            metavar="TOKEN",
            help=f"the account's API token (default: ${TOKEN_VARIABLE})",
        )


def optional_token(args: argparse.Namespace) -> str | None:
    """The account's API token if one is given (``--token`` or the variable), else ``None``."""
    token: str | None = args.token or os.environ.get(TOKEN_VARIABLE)
    return token or None


def next_command(args: argparse.Namespace, *words: str) -> str:
    """A command to run next against the same league (``bisca WORDS --server URL``), printed
    for the person to copy: with the options it needs as this one had them, the secret excepted
    (review 45: ``bisca submit --token T`` said "follow it: bisca submission BOT N --server URL",
    which, run as printed, has no token)."""
    line = f"{bisca_command()} {shlex.join([*words, '--server', args.server])}"
    if args.ca is not None:
        line += f" --ca {shlex.quote(str(args.ca))}"
    if getattr(args, "token", None):  # given on the command line: never printed again
        line += f" (with your --token, or {TOKEN_VARIABLE} set)"
    return line


def account_token(args: argparse.Namespace) -> str:
    token = optional_token(args)
    if not token:
        raise LeagueCallFailed(
            f"no API token: give --token or set {TOKEN_VARIABLE} "
            "(`bisca account token create` makes one)"
        )
    return token


def call(
    args: argparse.Namespace,
    method: str,
    path: str,
    body: dict[str, object] | bytes | None = None,
    *,
    token: str | None = None,
    content_type: str = "application/json",
) -> dict[str, object]:
    """One call to the league's app; its JSON answer, or :class:`LeagueCallFailed` with the
    server's own sentence."""
    return _json(fetch(args, method, path, body, token=token, content_type=content_type))


def fetch(
    args: argparse.Namespace,
    method: str,
    path: str,
    body: dict[str, object] | bytes | None = None,
    *,
    token: str | None = None,
    content_type: str = "application/json",
) -> bytes:
    """One call to the league's app; the body of its answer as it came (a log is plain
    text), or :class:`LeagueCallFailed` with the server's own sentence and status."""
    url = args.server.rstrip("/") + path
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None or method not in ("GET", "HEAD"):
        request.add_header("Content-Type", content_type)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    context = ssl.create_default_context(cafile=args.ca) if args.ca else None
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as answer:
            received: bytes = answer.read()
            return received
    except urllib.error.HTTPError as problem:
        found = _json(problem.read())
        message = str(found.get("error") or f"HTTP {problem.code}")
        raise LeagueCallFailed(message, problem.code) from None
    except (urllib.error.URLError, OSError) as problem:
        reason = getattr(problem, "reason", problem)
        raise LeagueCallFailed(f"cannot reach {args.server}: {reason}") from None


def _json(data: bytes) -> dict[str, object]:
    try:
        value = json.loads(data or b"{}")
    except json.JSONDecodeError:
        return {"error": data[:200].decode(errors="replace")}
    return value if isinstance(value, dict) else {"answer": value}
