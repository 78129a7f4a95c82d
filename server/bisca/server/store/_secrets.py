"""Secrets a stranger holds (passwords, API and session tokens, invite codes), kept only as
hashes.

Passwords and tokens are hashed with scrypt and a salt of their own (a stolen copy of the
store costs a guesser scrypt's memory and time per guess, per secret); a hash is compared with
:func:`hmac.compare_digest`, whose time does not depend on where two values first differ.  A
token reads ``bisca_at_ID_SECRET``: ``ID`` (public, 16 hex digits) finds its row at once, so
checking a token costs one scrypt, never one per stored token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

#: scrypt's cost: 2^14 rounds of 8 blocks, 16 MiB and about 30 ms per hash on this machine.
SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
#: The public start of every account token (the operator's ``bisca bots`` tokens are ``bisca_``).
ACCOUNT_TOKEN_PREFIX = "bisca_at_"
TOKEN_ID_HEX = 16


def new_salt() -> str:
    return secrets.token_hex(16)


def slow_hash(secret: str, salt: str) -> str:
    return hashlib.scrypt(
        secret.encode(), salt=bytes.fromhex(salt), n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32
    ).hex()


def same_hash(secret: str, salt: str, expected: str) -> bool:
    return hmac.compare_digest(slow_hash(secret, salt).encode(), expected.encode())


def new_account_token() -> tuple[str, str, str]:
    """A new token: its id, its secret part, and the whole token as its holder sees it."""
    token_id = secrets.token_hex(TOKEN_ID_HEX // 2)
    secret = secrets.token_urlsafe(32)
    return token_id, secret, f"{ACCOUNT_TOKEN_PREFIX}{token_id}_{secret}"


def split_account_token(token: str) -> tuple[str, str] | None:
    """A token's id and secret, or ``None`` for text that is no account token."""
    if not token.startswith(ACCOUNT_TOKEN_PREFIX):
        return None
    rest = token.removeprefix(ACCOUNT_TOKEN_PREFIX)
    token_id, separator, secret = rest.partition("_")
    if not separator or not secret or len(token) > 200 or len(token_id) != TOKEN_ID_HEX:
        return None
    if not all(c in "0123456789abcdef" for c in token_id):
        return None
    return token_id, secret


def new_invite_code() -> str:
    return "invite_" + secrets.token_urlsafe(18)


def invite_hash(code: str) -> str:
    """An invite code carries 144 random bits: a fast hash keeps it as safe as a slow one."""
    return hashlib.sha256(code.encode()).hexdigest()
