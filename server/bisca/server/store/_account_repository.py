"""The accounts of a league for strangers, their invite codes and their tokens.

An account signs in with its password (the browser) or a token (the command line, a connected
bot).  Nothing secret is kept: passwords and tokens as salted scrypt hashes, invite codes as
SHA-256 (``_secrets.py``).  A token is shown once, when it is made; revoking one, suspending
or deleting its account makes it answer nobody from the next request on.
"""

from __future__ import annotations

from collections.abc import Callable

from bisca.server.errors import StoreError

from ._backend import Connection, Row
from ._clock import now
from ._database import Database
from ._records import AccountRecord, AccountStatus, InviteRecord, TokenKind, TokenRecord
from ._rows import optional_text, text
from ._secrets import (
    invite_hash,
    new_account_token,
    new_invite_code,
    new_salt,
    same_hash,
    slow_hash,
    split_account_token,
)

MIN_PASSWORD = 10
MAX_PASSWORD = 200
#: A token's label: what its owner calls it in the list of its tokens, one short line.
MAX_LABEL = 64
#: Hashed instead of a missing account's, so a wrong name costs what a wrong password does.
_NOBODY_SALT = "00" * 16
_NOBODY_HASH = "00" * 32


class AccountError(StoreError):
    """A request about an account the store refuses (taken name, bad invite, ...)."""


class NameTaken(AccountError):
    """An account name taken already (or one that reads alike)."""


class TooManyTokens(AccountError):
    """An account holding as many live tokens of a kind as it may."""


def check_account_name(name: str) -> None:
    """Account names are 2-32 letters, digits, ``-`` and ``_``, starting with a letter."""
    if not (
        2 <= len(name) <= 32
        and name[0].isascii()
        and name[0].isalpha()
        and all(c.isascii() and (c.isalnum() or c in "-_") for c in name)
    ):
        raise AccountError(
            f"bad account name {name!r}: use 2-32 letters, digits, '-' or '_', "
            "starting with a letter"
        )


def check_token_label(label: str) -> str:
    """A token's label as kept: one line of at most :data:`MAX_LABEL` printable characters
    (its spaces around taken off), refused otherwise rather than cut."""
    kept = label.strip()
    if len(kept) > MAX_LABEL or not kept.isprintable():
        raise AccountError(
            f"a token's label is one line of at most {MAX_LABEL} printable characters "
            f"(this one has {len(kept)} characters"
            + ("" if kept.isprintable() else ", some not printable")
            + ")"
        )
    return kept


def check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(
            f"a password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters "
            f"(this one has {len(password)})"
        )


def _account(row: Row) -> AccountRecord:
    return AccountRecord(
        name=text(row, "name"),
        status=AccountStatus(text(row, "status")),
        created_at=text(row, "created_at"),
        status_changed_at=text(row, "status_changed_at"),
        invite=optional_text(row, "invite"),
    )


def _token(row: Row) -> TokenRecord:
    return TokenRecord(
        id=text(row, "id"),
        account=text(row, "account"),
        kind=TokenKind(text(row, "kind")),
        label=text(row, "label"),
        created_at=text(row, "created_at"),
        expires_at=optional_text(row, "expires_at"),
        revoked_at=optional_text(row, "revoked_at"),
    )


def _invite_note(db: Connection, invite: str) -> str:
    """The note of ``invite``, an unused code of this league (else :class:`AccountError`)."""
    row = db.execute(
        "SELECT note, used_by FROM account_invites WHERE code_hash = ?", (invite_hash(invite),)
    ).fetchone()
    if row is None:
        raise AccountError("this invite code is not one of this league's")
    if optional_text(row, "used_by") is not None:
        raise AccountError("this invite code was used already")
    return text(row, "note")


def name_key(name: str) -> str:
    """What a name reads as: two names with one key are one name (an account's, a bot's).
    Case is not read (``Alice`` is ``alice``), nor the letters the app's sans-serif font
    draws alike: ``I`` (and so, its case not read, ``i``) and the digit ``1`` read as ``l``,
    the digit ``0`` as ``o`` (``aIice`` and ``a1ice`` are ``alice``, ``adab0t`` is
    ``adabot``).  Names are ASCII."""
    return name.lower().replace("i", "l").replace("1", "l").replace("0", "o")


def name_key_sql(column: str) -> str:
    """:func:`name_key` of ``column`` in SQL, alike in SQLite and PostgreSQL (the capital
    ``I`` is replaced before ``lower``, which a Turkish collation would read as ``ı``)."""
    folded = f"lower(replace({column}, 'I', 'l'))"
    return f"replace(replace(replace({folded}, 'i', 'l'), '1', 'l'), '0', 'o')"


def _check_name_free(db: Connection, name: str) -> None:
    """:class:`AccountError` when an account holds a name that reads as ``name``
    (:func:`name_key`): ``Alice`` or ``aIice`` beside ``alice`` would read as one person on
    every page.  Such names made before this rule stay and sign in as they are."""
    row = db.execute(
        f"SELECT name FROM accounts WHERE {name_key_sql('name')} = ? ORDER BY name",
        (name_key(name),),
    ).fetchone()
    if row is not None:
        raise NameTaken(f"the account name {name!r} is taken{spelt_as(text(row, 'name'), name)}")


def spelt_as(taken: str, name: str) -> str:
    """How a refusal names the name that took ``name`` when it is spelt otherwise (an
    account's or a bot's)."""
    if taken == name:
        return ""
    return f" (as {taken!r}: a name is taken whatever its case, and i, I, 1 read as l, 0 as o)"


class AccountRepository:
    def __init__(self, database: Database) -> None:
        self._database = database

    # ---- accounts ---------------------------------------------------------------------------

    def create(
        self,
        name: str,
        password: str,
        invite: str | None = None,
        before_slow_hash: Callable[[], None] | None = None,
        before_name_check: Callable[[], None] | None = None,
    ) -> AccountRecord:
        """Open an account; with ``invite``, that code is used up in the same transaction
        (an unknown or used code refuses the account).  What refuses without the password (a
        bad name or invite, a taken name: :class:`NameTaken`) is read before the password is
        hashed: a stranger's bogus invite costs a row read, never a scrypt.
        ``before_name_check`` is called before the store is asked whether the name is taken,
        ``before_slow_hash`` before the password is hashed; either may raise to refuse."""
        check_account_name(name)
        check_password(password)
        with self._database.reading() as db:
            if invite is not None:
                _invite_note(db, invite)
            if before_name_check is not None:
                before_name_check()
            _check_name_free(db, name)
        if before_slow_hash is not None:
            before_slow_hash()
        salt = new_salt()
        password_hash = slow_hash(password, salt)
        stamp = now()
        try:
            with self._database.transaction() as db:
                # Sign-ups of one name in two cases at once wait for each other here.
                self._database.lock(f"account-name:{name_key(name)}")
                _check_name_free(db, name)
                note: str | None = None
                if invite is not None:
                    note = _invite_note(db, invite)
                    db.execute(
                        "UPDATE account_invites SET used_by = ?, used_at = ? WHERE code_hash = ?",
                        (name, stamp, invite_hash(invite)),
                    )
                db.execute(
                    "INSERT INTO accounts (name, password_salt, password_hash, status, invite,"
                    " created_at, status_changed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (name, salt, password_hash, AccountStatus.ACTIVE, note, stamp, stamp),
                )
        except self._database.integrity_errors:
            raise NameTaken(f"the account name {name!r} is taken") from None
        return AccountRecord(name, AccountStatus.ACTIVE, stamp, stamp, note)

    def get(self, name: str) -> AccountRecord | None:
        with self._database.reading() as db:
            row = db.execute("SELECT * FROM accounts WHERE name = ?", (name,)).fetchone()
        return None if row is None else _account(row)

    def all(self) -> list[AccountRecord]:
        with self._database.reading() as db:
            rows = db.execute("SELECT * FROM accounts ORDER BY name").fetchall()
        return [_account(row) for row in rows]

    def sign_in(self, name: str, password: str) -> AccountRecord | None:
        """The account if ``password`` is its own and it is active; one scrypt either way."""
        with self._database.reading() as db:
            row = db.execute("SELECT * FROM accounts WHERE name = ?", (name,)).fetchone()
        if row is None:
            same_hash(password, _NOBODY_SALT, _NOBODY_HASH)
            return None
        if not same_hash(password, text(row, "password_salt"), text(row, "password_hash")):
            return None
        account = _account(row)
        return account if account.status is AccountStatus.ACTIVE else None

    def set_status(self, name: str, status: AccountStatus) -> AccountRecord:
        """Suspend, reinstate or delete an account.  Deleting revokes its tokens and is
        final: its name is never given again, its bots' results stay."""
        account = self.get(name)
        if account is None:
            raise AccountError(f"no account named {name!r}")
        if account.status is AccountStatus.DELETED and status is not AccountStatus.DELETED:
            raise AccountError(f"the account {name!r} was deleted; it cannot come back")
        stamp = now()
        with self._database.transaction() as db:
            db.execute(
                "UPDATE accounts SET status = ?, status_changed_at = ? WHERE name = ?",
                (status, stamp, name),
            )
            if status is not AccountStatus.ACTIVE:
                # Sessions end with a suspension; API tokens too, for a deletion.
                kinds = (
                    (TokenKind.SESSION, TokenKind.API)
                    if status is AccountStatus.DELETED
                    else (TokenKind.SESSION,)
                )
                for kind in kinds:
                    db.execute(
                        "UPDATE account_tokens SET revoked_at = ? WHERE account = ? AND kind = ?"
                        " AND revoked_at IS NULL",
                        (stamp, name, kind),
                    )
        return AccountRecord(name, status, account.created_at, stamp, account.invite)

    # ---- invites ----------------------------------------------------------------------------

    def new_invite(self, note: str = "") -> str:
        """A single-use invite code (shown once; only its hash is kept)."""
        code = new_invite_code()
        with self._database.transaction() as db:
            db.execute(
                "INSERT INTO account_invites (code_hash, note, created_at) VALUES (?, ?, ?)",
                (invite_hash(code), note[:200], now()),
            )
        return code

    def invites(self) -> list[InviteRecord]:
        with self._database.reading() as db:
            rows = db.execute("SELECT * FROM account_invites ORDER BY created_at").fetchall()
        return [
            InviteRecord(
                code_hash=text(row, "code_hash"),
                note=text(row, "note"),
                created_at=text(row, "created_at"),
                used_by=optional_text(row, "used_by"),
                used_at=optional_text(row, "used_at"),
            )
            for row in rows
        ]

    # ---- tokens -----------------------------------------------------------------------------

    def new_token(
        self,
        account: str,
        kind: TokenKind,
        label: str,
        expires_at: str | None = None,
        *,
        most_live: int | None = None,
        end_oldest: bool = False,
        before_slow_hash: Callable[[], None] | None = None,
    ) -> tuple[TokenRecord, str]:
        """A token for an active account: its record and the token itself, shown this once.
        With ``most_live``, the account's live tokens of ``kind`` are at most that many,
        counted in the transaction that adds this one (tokens made at once cannot pass it
        together): past it the oldest are ended (``end_oldest``) or this one is refused
        (:class:`TooManyTokens`), also by a read before the secret is hashed (a refusal
        costs no scrypt).  ``before_slow_hash`` is called before the scrypt; it may raise to
        refuse."""
        label = check_token_label(label) or kind.value
        found = self.get(account)
        if found is None or found.status is not AccountStatus.ACTIVE:
            raise AccountError(f"no active account named {account!r}")
        refuse_past = None if most_live is None or end_oldest else most_live
        if refuse_past is not None:
            with self._database.reading() as db:
                _refuse_past(account, kind, _live_tokens(db, account, kind, now()), refuse_past)
        if before_slow_hash is not None:
            before_slow_hash()
        token_id, secret, token = new_account_token()
        salt = new_salt()
        secret_hash = slow_hash(secret, salt)  # (before the transaction: it takes a while)
        stamp = now()
        with self._database.transaction() as db:
            if most_live is not None:
                self._database.lock(f"account-tokens:{account}")
                live = _live_tokens(db, account, kind, stamp)
                if refuse_past is not None:
                    _refuse_past(account, kind, live, refuse_past)
                over = len(live) + 1 - most_live
                for oldest in live[: max(0, over)]:
                    db.execute(
                        "UPDATE account_tokens SET revoked_at = ? WHERE id = ?", (stamp, oldest)
                    )
            db.execute(
                "INSERT INTO account_tokens (id, account, kind, label, salt, secret_hash,"
                " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (token_id, account, kind, label, salt, secret_hash, stamp, expires_at),
            )
        return TokenRecord(token_id, account, kind, label, stamp, expires_at, None), token

    def holder(
        self, token: str, kind: TokenKind, before_slow_hash: Callable[[], None] | None = None
    ) -> AccountRecord | None:
        """The active account whose live token of ``kind`` this is, or ``None``.

        Only the token of a live id of ``kind`` and an active account costs a scrypt: an
        unknown, revoked or expired id (ids are not secret: a stale cookie is one) is refused
        by its row alone.  ``before_slow_hash`` is called just before the scrypt (it may raise
        to refuse: the web counts it as a sign-in attempt)."""
        parts = split_account_token(token)
        if parts is None:
            return None
        token_id, secret = parts
        with self._database.reading() as db:
            row = db.execute(
                "SELECT t.salt, t.secret_hash, t.kind, t.expires_at, t.revoked_at, a.*"
                " FROM account_tokens t JOIN accounts a ON a.name = t.account WHERE t.id = ?",
                (token_id,),
            ).fetchone()
        if row is None:
            return None
        expires = optional_text(row, "expires_at")
        if (
            text(row, "kind") != kind
            or optional_text(row, "revoked_at") is not None
            or (expires is not None and expires <= now())
        ):
            return None
        account = _account(row)
        if account.status is not AccountStatus.ACTIVE:
            return None
        if before_slow_hash is not None:
            before_slow_hash()
        if not same_hash(secret, text(row, "salt"), text(row, "secret_hash")):
            return None
        return account

    def tokens(self, account: str) -> list[TokenRecord]:
        with self._database.reading() as db:
            rows = db.execute(
                "SELECT * FROM account_tokens WHERE account = ? ORDER BY created_at, id",
                (account,),
            ).fetchall()
        return [_token(row) for row in rows]

    def token(self, token_id: str) -> TokenRecord | None:
        """A token's record by its id (its public part)."""
        with self._database.reading() as db:
            row = db.execute("SELECT * FROM account_tokens WHERE id = ?", (token_id,)).fetchone()
        return None if row is None else _token(row)

    def revoke(self, account: str, token_id: str) -> TokenRecord:
        """Revoke one of ``account``'s tokens (another account's is as unknown as none)."""
        with self._database.transaction() as db:
            db.execute(
                "UPDATE account_tokens SET revoked_at = ? WHERE id = ? AND account = ?"
                " AND revoked_at IS NULL",
                (now(), token_id, account),
            )
        found = [token for token in self.tokens(account) if token.id == token_id]
        if not found:
            raise AccountError(f"{account!r} has no token {token_id!r}")
        return found[0]


def _live_tokens(db: Connection, account: str, kind: TokenKind, stamp: str) -> list[str]:
    """The ids of ``account``'s live tokens of ``kind``, oldest first."""
    rows = db.execute(
        "SELECT id FROM account_tokens WHERE account = ? AND kind = ?"
        " AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"
        " ORDER BY created_at, id",
        (account, kind, stamp),
    ).fetchall()
    return [text(row, "id") for row in rows]


def _refuse_past(account: str, kind: TokenKind, live: list[str], most: int) -> None:
    """:class:`TooManyTokens` if one more token would put ``account`` past ``most`` live."""
    if len(live) + 1 > most:
        raise TooManyTokens(
            f"{account} holds {len(live)} live {kind} tokens, the limit: revoke one "
            "first (`bisca account token revoke ID`)"
        )
