"""Who may open an account on a league server, and how an account proves who it is.

``bisca serve --registration open`` lets anybody sign up; ``invite`` only the holder of an
invite code the operator made (``bisca account invite``).  A browser signs in with its
password and holds a session (a cookie the web sets, :data:`SESSION_DAYS` long); the command
line and connected bots hold API tokens.  Both are account tokens of the store, checked with
one scrypt each; a token once checked is remembered here by its SHA-256 (a fast hash of a
secret of 256 random bits is as safe as a slow one), so the next request of the same
holder costs one row read, which still sees a revocation, a suspension or an expiry at once.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import IO

from bisca.server.store import (
    AccountError,
    AccountRecord,
    AccountStatus,
    BotVersionRecord,
    Store,
    TokenKind,
    TokenRecord,
    stamp,
)

from ._intake import connect_version, take_submission
from ._limits import SubmissionLimits

SESSION_DAYS = 30
#: Tokens remembered as checked (the oldest forgotten first).
REMEMBERED_TOKENS = 4096


class Registration(StrEnum):
    OPEN = "open"
    INVITE = "invite"


@dataclass
class LeagueAccounts:
    """The accounts side of a league server: sign-up, sign-in, tokens, and its limits.

    Its calls are synchronous (the store's); the web calls them from a worker thread."""

    store: Store
    registration: Registration
    limits: SubmissionLimits = field(default_factory=SubmissionLimits)
    #: Where submissions are unpacked (``DATA/submissions``).
    uploads: Path | None = None
    _checked: OrderedDict[str, str] = field(default_factory=OrderedDict)
    #: The web calls from several worker threads at once.
    _checked_lock: threading.Lock = field(default_factory=threading.Lock)

    def sign_up(
        self,
        name: str,
        password: str,
        invite: str | None,
        before_slow_hash: Callable[[], None] | None = None,
    ) -> AccountRecord:
        """A new account (``before_slow_hash``: as :meth:`Store.accounts.create` takes it)."""
        if self.registration is Registration.INVITE and not invite:
            raise AccountError(
                "this league opens accounts by invitation: ask its operator for an invite code"
            )
        invited = invite if self.registration is Registration.INVITE else None
        return self.store.accounts.create(name, password, invited, before_slow_hash)

    def sign_in(self, name: str, password: str) -> AccountRecord:
        account = self.store.accounts.sign_in(name, password)
        if account is None:
            # One message whatever was wrong: a stranger learns nothing of which accounts exist.
            raise AccountError("wrong account name or password (or the account is not active)")
        return account

    def new_session(self, account: str) -> tuple[TokenRecord, str]:
        expires = stamp(datetime.now(UTC) + timedelta(days=SESSION_DAYS))
        return self.store.accounts.new_token(account, TokenKind.SESSION, "browser", expires)

    def new_api_token(self, account: str, label: str) -> tuple[TokenRecord, str]:
        return self.store.accounts.new_token(account, TokenKind.API, label)

    def holder(
        self, token: str, kind: TokenKind, before_slow_hash: Callable[[], None] | None = None
    ) -> AccountRecord | None:
        """The active account holding this live token of ``kind``, or ``None``.
        ``before_slow_hash`` is called before the token's secret is hashed (a live token's,
        not remembered here); it may raise to refuse."""
        digest = hashlib.sha256(f"{kind}:{token}".encode()).hexdigest()
        with self._checked_lock:
            token_id = self._checked.get(digest)
            if token_id is not None:
                self._checked.move_to_end(digest)
        if token_id is not None:
            return self._still_live(token_id, kind)
        account = self.store.accounts.holder(token, kind, before_slow_hash)
        if account is not None:
            with self._checked_lock:
                self._checked[digest] = token.removeprefix("bisca_at_").partition("_")[0]
                while len(self._checked) > REMEMBERED_TOKENS:
                    self._checked.popitem(last=False)
        return account

    def _still_live(self, token_id: str, kind: TokenKind) -> AccountRecord | None:
        record = self.store.accounts.token(token_id)
        if record is None or record.kind is not kind or record.revoked:
            return None
        if record.expires_at is not None and record.expires_at <= stamp(datetime.now(UTC)):
            return None
        account = self.store.accounts.get(record.account)
        return account if account is not None and account.status is AccountStatus.ACTIVE else None

    def sign_out(self, token: str) -> None:
        account = self.holder(token, TokenKind.SESSION)
        if account is not None:
            token_id = token.removeprefix("bisca_at_").partition("_")[0]
            self.store.accounts.revoke(account.name, token_id)

    def submit(self, account: str, archive: IO[bytes]) -> BotVersionRecord:
        """A new version from ``account``'s archive (``SubmissionRefused`` naming why not)."""
        if self.uploads is None:
            raise AccountError("this league takes no submissions (it has no uploads folder)")
        return take_submission(self.store, self.limits, self.uploads, account, archive)

    def connect(self, account: str, bot: str) -> tuple[BotVersionRecord, str]:
        """A new connected version of ``account``'s bot and its bot token (shown once)."""
        return connect_version(self.store, self.limits, account, bot)
