"""The commands that talk to a running server (``bisca watch``, ``bisca matches``): where it
is, how to reach it (plaintext, TLS), and which token to show it.

The address and the TLS files are read as a bot's are (:func:`bisca.client.target_for`):
``grpcs://HOST:PORT`` or ``--ca FILE`` (``$BISCA_CA``) connect with TLS.  The token is the one
given, else ``$BISCA_ADMIN_TOKEN`` / ``$BISCA_SPECTATOR_TOKEN``, else the server's token file
in ``--data``.
"""

from __future__ import annotations

import argparse
import os
from enum import Enum
from pathlib import Path
from typing import Any

import grpc

from bisca.client import target_for
from bisca.server.datadir import DEFAULT_DATA_DIR, DataDir
from bisca.v1 import arena_pb2_grpc

from ._args import file_path, folder_path, token_refusal


class Role(Enum):
    """Whose token a command needs: the operator's, or a spectator's (the admin's will do)."""

    ADMIN = "admin"
    SPECTATOR = "spectator"


def add_server_options(parser: argparse.ArgumentParser, role: Role) -> None:
    parser.add_argument(
        "--address",
        default=os.environ.get("BISCA_ADDRESS", "127.0.0.1:50051"),
        help="the server: HOST:PORT, grpcs://HOST:PORT (TLS) or unix:PATH "
        "(default $BISCA_ADDRESS or 127.0.0.1:50051)",
    )
    parser.add_argument(
        "--ca", type=file_path, metavar="FILE", help="TLS: the CA of the server's cert"
    )
    parser.add_argument(
        "--token", help=f"the {role.value} token (default: ${_variable(role)}, or from --data)"
    )
    parser.add_argument(
        "--data",
        type=folder_path,
        default=DEFAULT_DATA_DIR,
        help=f"the server's data directory, for its token files (default {DEFAULT_DATA_DIR})",
    )


def _variable(role: Role) -> str:
    return f"BISCA_{role.value.upper()}_TOKEN"


def read_token(args: argparse.Namespace, role: Role) -> str:
    """The token to show the server; ``ValueError`` saying how to give one when none is, or
    where it came from when it cannot go in a header (grpc's own log and ``Invalid metadata``
    named neither: review s59b, L2), never the token itself."""
    if args.token:
        return _header_value(str(args.token), "--token")
    if os.environ.get(_variable(role)):
        return _header_value(os.environ[_variable(role)], f"${_variable(role)}")
    layout = DataDir(args.data)
    path: Path = layout.admin_token if role is Role.ADMIN else layout.spectator_token
    if not path.exists():
        raise ValueError(
            f"no {role.value} token: give --token, set ${_variable(role)}, or --data with the "
            f"server's data directory (there is no {path})"
        )
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError) as problem:
        why = problem.strerror if isinstance(problem, OSError) else problem
        raise ValueError(f"cannot read {path}: {why}") from None


def _header_value(token: str, given: str) -> str:
    if (refused := token_refusal(token, given)) is not None:
        raise ValueError(refused)
    return token


def arena_stub(args: argparse.Namespace) -> Any:
    """A stub of the Arena service on the server the options name (``ValueError`` for a TLS
    file that is missing or not PEM, or no address: an empty ``$BISCA_ADDRESS`` was grpc's
    log of a resolver's failure, review s59b, L1).  grpc's generated stubs carry no
    annotations."""
    if not args.address.strip():
        raise ValueError(
            "no server address: --address or $BISCA_ADDRESS is empty (HOST:PORT, "
            "grpcs://HOST:PORT or unix:PATH; the default is 127.0.0.1:50051)"
        )
    target = target_for(args.address, ca=args.ca)
    if target.credentials is None:
        channel = grpc.insecure_channel(target.dial)
    else:
        channel = grpc.secure_channel(target.dial, target.credentials)
    stub_type: Any = arena_pb2_grpc.ArenaStub  # generated code carries no annotations
    return stub_type(channel)


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]
