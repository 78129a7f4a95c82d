"""Who may open an account on a league server, and how an account proves who it is.

``bisca serve --registration open`` lets anybody sign up; ``invite`` only the holder of an
invite code the operator made (``bisca account invite``).  A browser signs in with its
password and holds a session (a cookie the web sets, :data:`SESSION_DAYS` long); the command
line and connected bots hold API tokens.  Both are account tokens of the store, checked with
one scrypt each; a token once checked is remembered here by its SHA-256 (a fast hash of a
secret of 256 random bits is as safe as a slow one), so the next request of the same
holder costs one row read, which still sees a revocation, a suspension or an expiry at once.
A token made here is remembered as it is made (its first use costs no scrypt), and requests
that bring one token not remembered yet at once (after a restart) share one check.
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

from ._attempts import UploadAttempts, UploadHold
from ._intake import (
    DiskWarnings,
    check_disk,
    connect_version,
    over_budget,
    take_submission,
    versions_of_the_day,
)
from ._limits import SubmissionLimits
from ._refusals import DiskFull

SESSION_DAYS = 30
#: Sessions one account holds at once: a person's browsers and devices over the 30 days a
#: session lasts.  Past it a sign-in ends the account's oldest session (that browser signs in
#: again) rather than being refused: a person is never locked out by sessions of browsers
#: long gone, and a loop of sign-ins (each a row of 30 days, review 38) keeps ten rows.
MAX_SESSIONS = 10
#: API tokens one account holds at once (the command line, CI, a few machines).  Past it a
#: new one is refused (409) until the owner revokes one: a program holds each, and ending
#: one behind its owner's back would stop that program without a word.
MAX_API_TOKENS = 20
#: Tokens remembered as checked (the oldest forgotten first).
REMEMBERED_TOKENS = 4096
#: The longest a request waits for another's check of the same token before its own.
CHECK_WAIT_S = 5.0


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
    #: The tokens being checked now (by SHA-256), for the requests that bring them meanwhile.
    _checking: dict[str, threading.Event] = field(default_factory=dict)
    #: The web calls from several worker threads at once.
    _checked_lock: threading.Lock = field(default_factory=threading.Lock)
    #: Every upload counts against ``submissions_per_day``, refused ones too.
    _uploads: UploadAttempts = field(default_factory=UploadAttempts)
    _disk_warnings: DiskWarnings = field(default_factory=DiskWarnings)

    def sign_up(
        self,
        name: str,
        password: str,
        invite: str | None,
        before_slow_hash: Callable[[], None] | None = None,
        before_name_check: Callable[[], None] | None = None,
    ) -> AccountRecord:
        """A new account (``before_slow_hash``, ``before_name_check``: as
        :meth:`Store.accounts.create` takes them)."""
        if self.registration is Registration.INVITE and not invite:
            raise AccountError(
                "this league opens accounts by invitation: ask its operator for an invite code"
            )
        invited = invite if self.registration is Registration.INVITE else None
        return self.store.accounts.create(
            name, password, invited, before_slow_hash, before_name_check
        )

    def sign_in(self, name: str, password: str) -> AccountRecord:
        account = self.store.accounts.sign_in(name, password)
        if account is None:
            # One message whatever was wrong: a stranger learns nothing of which accounts exist.
            raise AccountError("wrong account name or password (or the account is not active)")
        return account

    def new_session(self, account: str) -> tuple[TokenRecord, str]:
        expires = stamp(datetime.now(UTC) + timedelta(days=SESSION_DAYS))
        made = self.store.accounts.new_token(
            account,
            TokenKind.SESSION,
            "browser",
            expires,
            most_live=MAX_SESSIONS,
            end_oldest=True,
        )
        self._remember(made[1], TokenKind.SESSION)
        return made

    def new_api_token(
        self, account: str, label: str, before_slow_hash: Callable[[], None] | None = None
    ) -> tuple[TokenRecord, str]:
        """An API token (``before_slow_hash``: as :meth:`Store.accounts.new_token` takes it)."""
        made = self.store.accounts.new_token(
            account,
            TokenKind.API,
            label,
            most_live=MAX_API_TOKENS,
            before_slow_hash=before_slow_hash,
        )
        self._remember(made[1], TokenKind.API)
        return made

    def holder(
        self, token: str, kind: TokenKind, before_slow_hash: Callable[[], None] | None = None
    ) -> AccountRecord | None:
        """The active account holding this live token of ``kind``, or ``None``.
        ``before_slow_hash`` is called before the token's secret is hashed (a live token's,
        not remembered here); it may raise to refuse."""
        digest = _digest(token, kind)
        while True:
            with self._checked_lock:
                token_id = self._checked.get(digest)
                if token_id is not None:
                    self._checked.move_to_end(digest)
                    return self._still_live(token_id, kind)
                checking = self._checking.get(digest)
                if checking is None:
                    self._checking[digest] = mine = threading.Event()
            if checking is None:
                break
            # Checked by another request now: its answer, or (refused) a check of our own.
            checking.wait(CHECK_WAIT_S)
        try:
            account = self.store.accounts.holder(token, kind, before_slow_hash)
            if account is not None:
                self._remember(token, kind)
            return account
        finally:
            with self._checked_lock:
                del self._checking[digest]
            mine.set()

    def _remember(self, token: str, kind: TokenKind) -> None:
        with self._checked_lock:
            self._checked[_digest(token, kind)] = token.removeprefix("bisca_at_").partition("_")[0]
            while len(self._checked) > REMEMBERED_TOKENS:
                self._checked.popitem(last=False)

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

    def hold_upload(self, account: str, sent_from: str | None = None) -> UploadHold:
        """A place for one upload of ``account`` from the address ``sent_from``, taken before
        its archive is received (``LimitReached``, 429, past its uploads of the day or while
        another is under way: :mod:`._attempts`; ``DiskFull``, 507, while the disk keeps less
        than its reserve; ``AccountFull``, 409, when the account's or the address's budget is
        spent): :meth:`submit` settles it, or :meth:`give_back_upload`.  The refusals before
        a place is taken cost no unpack and take no turn in the unpacker's lane (review
        s57b: refused after, 300 uploads a second kept honest ones out of it)."""
        uploads = self._uploads_folder()
        try:
            check_disk(uploads, self.limits)
        except DiskFull as short:
            self._disk_warnings.refused(short)
            raise
        full = over_budget(self.store, uploads, self.limits, account, sent_from, None)
        if full is not None:
            raise full
        added = versions_of_the_day(self.store, account)
        return self._uploads.hold(account, added, self.limits.submissions_per_day, sent_from)

    def _uploads_folder(self) -> Path:
        if self.uploads is None:
            raise AccountError("this league takes no submissions (it has no uploads folder)")
        return self.uploads

    def give_back_upload(self, hold: UploadHold) -> None:
        """An upload held and never unpacked (its archive did not arrive): it counts for
        nothing."""
        self._uploads.give_back(hold)

    def submit(
        self,
        account: str,
        archive: IO[bytes],
        hold: UploadHold | None = None,
        sent_from: str | None = None,
    ) -> BotVersionRecord:
        """A new version from ``account``'s archive (``SubmissionRefused`` naming why not),
        under ``hold``, which says the address it was sent from (else a place taken now for
        an upload from ``sent_from``).
        Whatever ends the upload but its version added counts against the account's uploads
        of the day: it was unpacked, or began to be."""
        if hold is None:
            hold = self.hold_upload(account, sent_from)
        uploads = self._uploads_folder()
        try:
            version = take_submission(
                self.store, self.limits, uploads, account, archive, hold.sent_from
            )
        except DiskFull as short:
            self._disk_warnings.refused(short)
            self._uploads.give_back(hold)  # refused before a byte of it was unpacked
            raise
        except BaseException:
            self._uploads.refused(hold)
            raise
        self._uploads.added(hold)
        return version

    def connect(self, account: str, bot: str) -> tuple[BotVersionRecord, str]:
        """A new connected version of ``account``'s bot and its bot token (shown once)."""
        return connect_version(self.store, self.limits, account, bot)


def _digest(token: str, kind: TokenKind) -> str:
    return hashlib.sha256(f"{kind}:{token}".encode()).hexdigest()
