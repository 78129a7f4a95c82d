"""Signed results: the server's Ed25519 key, and the signature that ends every complete log.

The signature covers the chain hash of the footer record.  That chain runs through every
record before it (the header with game, settings, seed and bots; every step with its timings,
rejections and substitutions; every event) and the footer itself (status, results, forfeits),
so changing any byte of the log, or regenerating it with a recomputed chain, breaks the
signature unless the forger holds the server's private key.

The key is created on a server's first start as ``DATA/server.key`` (mode 0600, the raw 32
private bytes in hex); ``bisca key`` prints the public half, which is what league
participants keep to check results with ``bisca replay verify --key``.  A data directory whose
logs were signed and whose key is gone gets no new key without being asked for one
(:func:`data_key`): every earlier log would turn "untrusted" without a word (operator review).
On a PostgreSQL league the logs are kept in the store too: a server or worker is refused
there as well when the store holds logs its directory wrote and the directory is not new.
"""

from __future__ import annotations

import binascii
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from bisca.server.datadir import LOG_SUFFIX, DataDir
from bisca.server.errors import KeyFileError
from bisca.v1 import log_pb2

ALGORITHM = "ed25519"
#: What is signed: this prefix, then the 32-byte chain of the footer record.
SIGNED_PREFIX = b"bisca-log-v1\n"


def public_key_text(public: bytes) -> str:
    """How a public key is written for people: ``ed25519:`` and 64 hex digits."""
    return f"{ALGORITHM}:{public.hex()}"


def parse_public_key(text: str) -> bytes:
    """A public key as :func:`public_key_text` writes it (the prefix optional)."""
    digits = text.strip().removeprefix(f"{ALGORITHM}:")
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise KeyFileError(f"not an Ed25519 public key (ed25519:<64 hex digits>): {text.strip()!r}")
    return raw


@dataclass(frozen=True)
class ServerKey:
    """A server's signing key."""

    private: Ed25519PrivateKey

    @property
    def public(self) -> bytes:
        return self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def public_text(self) -> str:
        return public_key_text(self.public)

    def sign(self, footer_chain: bytes) -> log_pb2.LogSignature:
        return log_pb2.LogSignature(
            algorithm=ALGORITHM,
            public_key=self.public,
            signature=self.private.sign(SIGNED_PREFIX + footer_chain),
        )

    @classmethod
    def generate(cls) -> ServerKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def load(cls, path: Path) -> ServerKey:
        try:
            raw = bytes.fromhex(path.read_text().strip())
            return cls(Ed25519PrivateKey.from_private_bytes(raw))
        except FileNotFoundError:
            raise KeyFileError(f"no server key at {path}") from None
        except (OSError, UnicodeDecodeError) as problem:
            raise KeyFileError(f"cannot read the server key {path}: {problem}") from None
        except ValueError:
            raise KeyFileError(f"{path} is not a Bisca server key") from None

    @classmethod
    def load_or_create(cls, path: Path) -> ServerKey:
        """The key at ``path``, created there (mode 0600) if there is none yet."""
        if path.exists():
            return cls.load(path)
        key = cls.generate()
        raw = key.private.private_bytes_raw()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process created it meanwhile: use that one
            return cls.load(path)
        with os.fdopen(fd, "w") as file:
            file.write(binascii.hexlify(raw).decode() + "\n")
        return key


class KeptLogs(Protocol):
    """Where a data directory's signed logs are kept besides its ``matches/``: a shared
    store's logs (``store.logs``), which a PostgreSQL league's servers read instead."""

    def describe(self) -> str: ...

    def signed_in(self, folder: Path) -> tuple[str, str] | None:
        """A complete log a server wrote in ``folder``, kept here: its match and signer."""
        ...


def data_key(data: DataDir, *, new: bool = False, kept: KeptLogs | None = None) -> ServerKey:
    """The data directory's key, created if it has none: unless logs the key that is gone
    signed are kept, in its ``matches/`` or (``kept``) in the store its servers use, and
    ``new`` is not given, which raises :class:`KeyFileError` saying how to go on."""
    path = data.server_key
    if not path.exists() and not new:
        signed = _signed_by_the_missing_key(data, kept)
        if signed is not None:
            raise KeyFileError(
                f"{path} is missing, but {signed}: restore it from its backup, or create a new "
                f"key with `bisca key --new --data {data.root}` (the logs signed before then "
                "verify with the old public key only: `bisca replay verify --key`)"
            )
    return ServerKey.load_or_create(path)


def _signed_by_the_missing_key(data: DataDir, kept: KeptLogs | None) -> str | None:
    """Where logs that ``data``'s missing key signed are kept, said for the refusal; ``None``
    if nowhere.

    A store is shared by every machine of a league, each signing with its own directory's
    key, so only the logs the store records as written in this directory's ``matches/``
    are this key's (the store records each log's path; the public key that signed it cannot
    tell, the missing key's being unknown); and only when the directory is not new (it holds
    a server's files): a worker's fresh folder on another machine, at the same path as an
    older worker's, makes its first key."""
    signed = next(data.matches.glob(f"*/*{LOG_SUFFIX}"), None)
    if signed is not None:
        return f"{data.matches} holds logs its key signed ({signed.name}, ...)"
    if kept is None or not data.holds_bisca_data():
        return None
    found = kept.signed_in(data.matches)
    if found is None:
        return None
    match_id, public_key = found
    return (
        f"the store {kept.describe()} holds logs its key signed in {data.matches} (match "
        f"{match_id}, by {public_key}, ...)"
    )


class SignatureProblem(Exception):
    """Why a log's signature does not hold (its message is the whole reason)."""


def check_signature(
    signature: log_pb2.LogSignature, footer_chain: bytes, trusted: bytes | None
) -> None:
    """Raise :class:`SignatureProblem` unless ``signature`` is a valid Ed25519 signature of the
    footer's chain by the key ``trusted`` (``None``: no key to trust was given)."""
    if signature.algorithm != ALGORITHM:
        raise SignatureProblem(f"signed with an unknown algorithm {signature.algorithm!r}")
    try:
        public = Ed25519PublicKey.from_public_bytes(signature.public_key)
    except ValueError:
        raise SignatureProblem("the signature's public key is not an Ed25519 key") from None
    try:
        public.verify(signature.signature, SIGNED_PREFIX + footer_chain)
    except InvalidSignature:
        raise SignatureProblem(
            "the signature does not match the log: it was changed after it was signed"
        ) from None
    if trusted is None:
        raise SignatureProblem(
            f"signed by {public_key_text(signature.public_key)}, but no key to trust was given "
            "(--key, or --data with the server's data directory)"
        )
    if signature.public_key != trusted:
        raise SignatureProblem(
            f"signed by an unknown key {public_key_text(signature.public_key)}, not by "
            f"{public_key_text(trusted)}"
        )
