"""The bots: their names and the hashes of their tokens (a token is shown once, when its bot
is registered, and never kept)."""

from __future__ import annotations

import hashlib
import secrets

from bisca.server.errors import StoreError
from bisca.server.records import BotRecord

from ._clock import now
from ._database import Database
from ._rows import text

TOKEN_PREFIX = "bisca_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def check_bot_name(name: str) -> None:
    """Bot names are 1-64 characters of ASCII letters, digits, ``-``, ``_`` and ``.``: other
    scripts' letters and digits drew names a person reads as another bot's on one leaderboard
    (``ａｂｃ``, ``a١``: review s59b, L17), as account names are ASCII already.  A name
    registered before stays as it is."""
    if not 1 <= len(name) <= 64 or not all(
        (c.isascii() and c.isalnum()) or c in "-_." for c in name
    ):
        raise StoreError(f"bad bot name {name!r}: use 1-64 ASCII letters, digits, '-', '_' or '.'")


class BotRepository:
    def __init__(self, database: Database) -> None:
        self._database = database

    def add(self, name: str) -> str:
        """Register a bot and return its token (only its hash is kept)."""
        check_bot_name(name)
        token = new_token()
        try:
            with self._database.transaction() as db:
                db.execute(
                    "INSERT INTO bots (name, token_hash, created_at) VALUES (?, ?, ?)",
                    (name, hash_token(token), now()),
                )
        except self._database.integrity_errors:
            raise StoreError(f"a bot named {name!r} is already registered") from None
        return token

    def all(self) -> list[BotRecord]:
        """Every registered bot, by name."""
        with self._database.reading() as db:
            rows = db.execute("SELECT name, created_at FROM bots ORDER BY name").fetchall()
        return [BotRecord(text(row, "name"), text(row, "created_at")) for row in rows]

    def for_token(self, token: str) -> str | None:
        """The name of the bot whose token this is, or ``None``."""
        with self._database.reading() as db:
            row = db.execute(
                "SELECT name FROM bots WHERE token_hash = ?", (hash_token(token),)
            ).fetchone()
        return None if row is None else text(row, "name")

    def has(self, name: str) -> bool:
        with self._database.reading() as db:
            row = db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone()
        return row is not None
