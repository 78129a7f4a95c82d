"""The competitor's side of a league server: JSON calls to its web app (``--server URL``),
with an account's API token (``--token``, or ``BISCA_ACCOUNT_TOKEN``)."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shlex
import ssl
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from bisca.server.errors import BiscaError
from bisca.server.textfiles import MAX_PEM_BYTES, read_regular_file

from ._args import bisca_command, file_path, token_refusal

TOKEN_VARIABLE = "BISCA_ACCOUNT_TOKEN"
PASSWORD_VARIABLE = "BISCA_PASSWORD"
#: Seconds a call may take (an upload is bounded by the server's archive limit).
TIMEOUT_S = 120.0
#: The schemes a league's app answers on (``--server``).
SCHEMES = ("http", "https")


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
    parser.add_argument(
        "--ca", type=file_path, metavar="FILE", help="trust this CA (PEM) for HTTPS"
    )
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


def check_server(args: argparse.Namespace) -> None:
    """The ``--server`` and ``--ca`` options checked before anything is asked of the person (a
    password) or sent: :class:`LeagueCallFailed` naming the option and its value."""
    league_url(args.server)
    ssl_context(args.ca)


def league_url(server: str) -> str:
    """``--server`` as the base of the calls' URLs (without its trailing ``/``), once it is
    an ``http://`` or ``https://`` URL with a host; :class:`LeagueCallFailed` naming it else
    (urllib's own errors for it, ``unknown url type`` or ``Invalid IPv6 URL``, name neither the
    option nor its value)."""
    usage = "give the league's app as http://HOST[:PORT] or https://HOST[:PORT]"
    if any(character.isspace() or not character.isprintable() for character in server):
        raise LeagueCallFailed(f"--server {server!r} holds spaces or control characters; {usage}")
    try:
        parts = urllib.parse.urlsplit(server)
        host, port = parts.hostname, parts.port  # ``port`` refuses one that is not a number
    except ValueError as problem:
        raise LeagueCallFailed(f"--server {server!r} is not a URL ({problem}); {usage}") from None
    if parts.scheme not in SCHEMES or not host:
        raise LeagueCallFailed(f"--server {server!r} is not a league's address; {usage}")
    if parts.query or parts.fragment:
        # The calls' paths are added after it: a query or fragment would swallow them.
        raise LeagueCallFailed(f"--server {server!r} has a ?query or #fragment; {usage}")
    if port == 0:
        raise LeagueCallFailed(f"--server {server!r} has port 0; {usage}")
    return server.rstrip("/")


def ssl_context(ca: Path | None) -> ssl.SSLContext | None:
    """The TLS context trusting ``--ca`` (``None``: the system's CAs); :class:`LeagueCallFailed`
    naming the option and the file when it cannot be read or holds no certificate (the
    ``ssl`` module's errors name neither)."""
    if ca is None:
        return None
    try:
        pem = read_regular_file(ca, MAX_PEM_BYTES).decode("ascii", errors="replace")
        if not pem.strip():  # (taken as no CA at all: every server refused, unsaid)
            raise LeagueCallFailed(f"--ca {ca}: the file is empty")
        return ssl.create_default_context(cadata=pem)
    except ssl.SSLError as problem:
        why = problem.reason or problem
        raise LeagueCallFailed(f"--ca {ca}: not a CA certificate in PEM ({why})") from None
    except OSError as problem:
        raise LeagueCallFailed(f"--ca {ca}: {problem.strerror or problem}") from None


def checked_token(args: argparse.Namespace, token: str) -> str:
    """``token`` once it can go in an ``Authorization`` header; :class:`LeagueCallFailed`
    naming where it came from, never the token itself (a secret, and a pasted one with a
    carriage return would garble the line)."""
    where = "--token" if token == getattr(args, "token", None) else f"${TOKEN_VARIABLE}"
    if (refused := token_refusal(token, where)) is not None:
        raise LeagueCallFailed(refused)
    return token


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
    answer = fetch(args, method, path, body, token=token, content_type=content_type)
    found = _json(answer)
    if found is None:
        raise LeagueCallFailed(_not_a_league(args, path, "200"))
    return found


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
    url = league_url(args.server) + path
    context = ssl_context(args.ca)
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None or method not in ("GET", "HEAD"):
        request.add_header("Content-Type", content_type)
    if token is not None:
        request.add_header("Authorization", f"Bearer {checked_token(args, token)}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as answer:
            received: bytes = answer.read()
            return received
    except urllib.error.HTTPError as problem:
        found = _json(problem.read())
        if found is None or "error" not in found:  # (a league's app says why, in JSON)
            message = _not_a_league(args, path, f"HTTP {problem.code}")
        else:
            message = str(found["error"])
        raise LeagueCallFailed(message, problem.code) from None
    except http.client.InvalidURL as problem:
        # What the checks above let through and http.client still refuses (a path's part
        # left unquoted by a caller): named, not a traceback.
        raise LeagueCallFailed(f"cannot call {url!r}: {problem}") from None
    except http.client.HTTPException:
        # Not HTTP at all: a gRPC port, whose HTTP/2 frames http.client cannot read as a
        # status line (review s59b, M3: a traceback).
        raise LeagueCallFailed(
            f"{args.server} did not answer HTTP: is it the arena's gRPC address? --server "
            "names the league's browser app (`bisca serve --http HOST:PORT`)"
        ) from None
    except (urllib.error.URLError, OSError) as problem:
        reason = getattr(problem, "reason", problem)
        raise LeagueCallFailed(f"cannot reach {args.server}: {reason}") from None


def _json(data: bytes) -> dict[str, object] | None:
    """The JSON object ``data`` holds (``{}`` for none), or ``None`` when it is not JSON."""
    try:
        value = json.loads(data or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else {"answer": value}


def _not_a_league(args: argparse.Namespace, path: str, answered: str) -> str:
    """What to say of an answer no league's app gives (a page, not its JSON): review s57c
    found the whole HTML page of another server printed, or ``HTTP 404`` naming nothing."""
    return (
        f"{league_url(args.server)}{path} answered {answered} without a Bisca league's JSON: "
        f"is --server {args.server} a Bisca league's app?"
    )
