"""The bots of a league's accounts and their versions (``mybot v3``), each with the output of
every step of the gate it went through.

A bot belongs to one account; each submission is a new version, numbered from 1, with the
fingerprint of its files.  A version's state only moves forward (:data:`VERSION_MOVES`), and it
plays and is rated under its own name, ``mybot.v3`` (:attr:`BotVersionRecord.player`).
"""

from __future__ import annotations

import re

from bisca.server.errors import StoreError

from ._account_repository import name_key, name_key_sql, spelt_as
from ._backend import Connection, Row
from ._clock import now
from ._database import Database
from ._records import (
    VERSION_MOVES,
    AccountStatus,
    BotVersionRecord,
    StepRecord,
    VersionKind,
    VersionState,
    VersionStep,
)
from ._rows import flag, integer, text

#: The most a step's output keeps (its end: where a build or a check says what went wrong).
MAX_STEP_OUTPUT = 64 * 1024

_VERSION_COLUMNS = (
    "v.bot, b.account, v.version, v.kind, v.fingerprint, v.manifest, v.state, v.reason,"
    " v.created_at, v.updated_at, v.sent_from"
)
_FROM = " FROM bot_versions v JOIN hosted_bots b ON b.name = v.bot"


class VersionError(StoreError):
    """A request about a bot or version the store refuses (another's bot, a bad move, ...)."""


class SubmittedTooMany(VersionError):
    """A new version of an account that made as many as ``add`` was told it may, since."""


class TooManyLive(VersionError):
    """A new version of a bot with as many versions live as ``add`` was told it may have."""


def check_hosted_bot_name(name: str) -> None:
    """A league bot's name: 1-40 letters, digits, ``-`` and ``_`` (no dot: ``NAME.vN`` is
    the name a version plays under)."""
    if not (1 <= len(name) <= 40 and all(c.isascii() and (c.isalnum() or c in "-_") for c in name)):
        raise VersionError(f"bad bot name {name!r}: use 1-40 letters, digits, '-' or '_'")


#: What a hosted version's player name (:attr:`BotVersionRecord.player`, ``mybot.v3``: a bot
#: name without a dot, ``.v`` and its number from 1) reads as, by :func:`name_key` (``1`` and
#: ``0`` read as ``l`` and ``o``).
_VERSION_PLAYER_KEY = re.compile(r"[^.]{1,40}\.v[2-9l][0-9lo]*")


def names_a_version(name: str) -> bool:
    """Whether ``name`` reads as a hosted version's player (``mybot.v3``, or ``MyBot.V3``,
    ``mybot.vl`` that read alike: :func:`name_key`), which the league registers for the
    version itself and no one else may take."""
    return _VERSION_PLAYER_KEY.fullmatch(name_key(name)) is not None


def _named(db: Connection, table: str, name: str) -> str | None:
    """The name in ``table`` (``hosted_bots``, ``bots``) that reads as ``name``
    (:func:`name_key`: whatever its case, ``I``, ``1`` and ``0`` read as ``l``, ``l``, ``o``)."""
    row = db.execute(
        f"SELECT name FROM {table} WHERE {name_key_sql('name')} = ? ORDER BY name",
        (name_key(name),),
    ).fetchone()
    return None if row is None else text(row, "name")


def _version(row: Row) -> BotVersionRecord:
    return BotVersionRecord(
        bot=text(row, "bot"),
        account=text(row, "account"),
        version=integer(row, "version"),
        kind=VersionKind(text(row, "kind")),
        fingerprint=text(row, "fingerprint"),
        manifest=text(row, "manifest"),
        state=VersionState(text(row, "state")),
        reason=text(row, "reason"),
        created_at=text(row, "created_at"),
        updated_at=text(row, "updated_at"),
        sent_from=None if row["sent_from"] is None else text(row, "sent_from"),
    )


def _one(db: Connection, bot: str, version: int) -> BotVersionRecord | None:
    row = db.execute(
        f"SELECT {_VERSION_COLUMNS}{_FROM} WHERE v.bot = ? AND v.version = ?", (bot, version)
    ).fetchone()
    return None if row is None else _version(row)


def _submitted_since(db: Connection, account: str, since: str) -> int:
    row = db.execute(
        "SELECT COUNT(*) AS n FROM bot_versions v JOIN hosted_bots b ON b.name = v.bot"
        " WHERE b.account = ? AND v.created_at >= ?",
        (account, since),
    ).fetchone()
    return 0 if row is None else integer(row, "n")


def _live(db: Connection, bot: str) -> int:
    states = [VersionState.BUILDING, VersionState.CHECKING, VersionState.VALIDATING]
    states.append(VersionState.ACTIVE)
    row = db.execute(
        "SELECT COUNT(*) AS n FROM bot_versions WHERE bot = ? AND state IN (?, ?, ?, ?)",
        (bot, *states),
    ).fetchone()
    return 0 if row is None else integer(row, "n")


class VersionRepository:
    def __init__(self, database: Database) -> None:
        self._database = database

    def add(
        self,
        account: str,
        bot: str,
        kind: VersionKind,
        fingerprint: str,
        manifest: str,
        state: VersionState = VersionState.BUILDING,
        *,
        most_since: tuple[int, str] | None = None,
        most_live: int | None = None,
        sent_from: str | None = None,
        kept_bytes: int | None = None,
    ) -> BotVersionRecord:
        """A new version of ``account``'s bot (the bot is made with its first version),
        uploaded from the address ``sent_from`` if it was, its kept files taking ``kept_bytes``
        of disk (:meth:`set_kept_bytes`); a
        bot of another account, or a name the operator's bots hold, is refused.  With
        ``most_since`` (``(most, since)``), refused (:class:`SubmittedTooMany`) when the
        account made ``most`` versions from ``since`` on; with ``most_live``, refused
        (:class:`TooManyLive`) when the bot has that many versions :meth:`live`.  Both are
        counted in the transaction that adds, so versions added at once cannot pass them
        together."""
        check_hosted_bot_name(bot)
        stamp = now()
        with self._database.transaction() as db:
            if most_since is not None:
                self._database.lock(f"account-versions:{account}")
                most, since = most_since
                if _submitted_since(db, account, since) >= most:
                    raise SubmittedTooMany(
                        f"{account} made {most} versions since {since}, the limit"
                    )
            self._database.lock(f"bot-versions:{bot}")
            owner = db.execute("SELECT account FROM hosted_bots WHERE name = ?", (bot,)).fetchone()
            if owner is None:
                # A new bot: its name is taken by any bot's that reads alike (``AdaBot`` or
                # ``adab0t`` beside ``adabot`` reads as the same bot on every page).  Such
                # names made before this rule stay and keep their owners.
                self._database.lock(f"bot-name:{name_key(bot)}")
                same = _named(db, "hosted_bots", bot) or _named(db, "bots", bot)
                if same is not None:
                    raise VersionError(f"the bot name {bot!r} is taken{spelt_as(same, bot)}")
                try:
                    db.execute(
                        "INSERT INTO hosted_bots (name, account, created_at) VALUES (?, ?, ?)",
                        (bot, account, stamp),
                    )
                except self._database.integrity_errors:
                    raise VersionError(f"the bot name {bot!r} is taken") from None
            elif text(owner, "account") != account:
                raise VersionError(f"the bot name {bot!r} is taken")
            if most_live is not None and _live(db, bot) >= most_live:
                raise TooManyLive(f"{bot} has {most_live} versions live, the limit")
            last = db.execute(
                "SELECT MAX(version) AS last FROM bot_versions WHERE bot = ?", (bot,)
            ).fetchone()
            number = 1 if last is None or last["last"] is None else integer(last, "last") + 1
            db.execute(
                "INSERT INTO bot_versions (bot, version, kind, fingerprint, manifest, state,"
                " created_at, updated_at, sent_from, kept_bytes)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    bot,
                    number,
                    kind,
                    fingerprint,
                    manifest,
                    state,
                    stamp,
                    stamp,
                    sent_from,
                    kept_bytes,
                ),
            )
        return BotVersionRecord(
            bot, account, number, kind, fingerprint, manifest, state, "", stamp, stamp, sent_from
        )

    def get(self, bot: str, version: int) -> BotVersionRecord | None:
        with self._database.reading() as db:
            return _one(db, bot, version)

    def of_bot(self, bot: str) -> list[BotVersionRecord]:
        with self._database.reading() as db:
            rows = db.execute(
                f"SELECT {_VERSION_COLUMNS}{_FROM} WHERE v.bot = ? ORDER BY v.version", (bot,)
            ).fetchall()
        return [_version(row) for row in rows]

    def of_account(self, account: str) -> list[BotVersionRecord]:
        with self._database.reading() as db:
            rows = db.execute(
                f"SELECT {_VERSION_COLUMNS}{_FROM} WHERE b.account = ? ORDER BY v.bot, v.version",
                (account,),
            ).fetchall()
        return [_version(row) for row in rows]

    def set_kept_bytes(self, bot: str, version: int, kept_bytes: int) -> None:
        """Record the disk ``bot``'s ``version``'s kept files take (0: they were removed)."""
        with self._database.transaction() as db:
            db.execute(
                "UPDATE bot_versions SET kept_bytes = ? WHERE bot = ? AND version = ?",
                (kept_bytes, bot, version),
            )

    def unmeasured(self, account: str, sent_from: str | None) -> list[BotVersionRecord]:
        """The hosted versions of ``account``, or uploaded from ``sent_from``, whose kept
        files were never measured (made before the store recorded it)."""
        # Two reads, each by an index (one condition over both tables read every version).
        unmeasured = f"SELECT {_VERSION_COLUMNS}{_FROM} WHERE v.kept_bytes IS NULL AND v.kind = ?"
        with self._database.reading() as db:
            rows = db.execute(f"{unmeasured} AND b.account = ?", (VersionKind.HOSTED, account))
            found = {(row["bot"], row["version"]): row for row in rows.fetchall()}
            if sent_from is not None:
                rows = db.execute(
                    f"{unmeasured} AND v.sent_from = ?", (VersionKind.HOSTED, sent_from)
                )
                found.update({(row["bot"], row["version"]): row for row in rows.fetchall()})
        return [_version(found[key]) for key in sorted(found)]

    def kept_bytes_of(self, account: str) -> int:
        """The disk the kept files of ``account``'s versions take, as recorded."""
        return self._kept_bytes("b.account = ?", account)

    def kept_bytes_sent_from(self, address: str) -> int:
        """The disk the kept files of the versions uploaded from ``address`` take, whichever
        accounts sent them, as recorded."""
        return self._kept_bytes("v.sent_from = ?", address)

    def _kept_bytes(self, where: str, value: str) -> int:
        with self._database.reading() as db:
            row = db.execute(
                # (PostgreSQL's SUM of a BIGINT is a NUMERIC.)
                f"SELECT CAST(COALESCE(SUM(v.kept_bytes), 0) AS BIGINT) AS kept{_FROM}"
                f" WHERE {where}",
                (value,),
            ).fetchone()
        assert row is not None  # (an aggregate has its one row)
        return integer(row, "kept")

    def owner(self, bot: str) -> str | None:
        with self._database.reading() as db:
            row = db.execute("SELECT account FROM hosted_bots WHERE name = ?", (bot,)).fetchone()
        return None if row is None else text(row, "account")

    def in_state(self, state: VersionState) -> list[BotVersionRecord]:
        """Every version in ``state``, the oldest first (the gate takes them in turn)."""
        with self._database.reading() as db:
            rows = db.execute(
                f"SELECT {_VERSION_COLUMNS}{_FROM} WHERE v.state = ?"
                " ORDER BY v.created_at, v.bot, v.version",
                (state,),
            ).fetchall()
        return [_version(row) for row in rows]

    def playing(self) -> list[BotVersionRecord]:
        """The versions the ladder plays: active, of an active account."""
        with self._database.reading() as db:
            rows = db.execute(
                f"SELECT {_VERSION_COLUMNS}{_FROM} JOIN accounts a ON a.name = b.account"
                " WHERE v.state = ? AND a.status = ? ORDER BY v.created_at, v.bot, v.version",
                (VersionState.ACTIVE, AccountStatus.ACTIVE),
            ).fetchall()
        return [_version(row) for row in rows]

    def of_kind(self, kind: VersionKind) -> list[BotVersionRecord]:
        """Every version of ``kind``, whatever its state (the connected ones: bots that may
        dial in under their player name)."""
        with self._database.reading() as db:
            rows = db.execute(
                f"SELECT {_VERSION_COLUMNS}{_FROM} WHERE v.kind = ? ORDER BY v.bot, v.version",
                (kind,),
            ).fetchall()
        return [_version(row) for row in rows]

    def submitted_since(self, account: str, since: str) -> int:
        """How many versions ``account`` submitted from ``since`` (a store timestamp) on."""
        with self._database.reading() as db:
            return _submitted_since(db, account, since)

    def live(self, bot: str) -> int:
        """How many of ``bot``'s versions are active or on their way through the gate."""
        with self._database.reading() as db:
            return _live(db, bot)

    def move(
        self, bot: str, version: int, state: VersionState, reason: str = ""
    ) -> BotVersionRecord:
        """Move a version to ``state``; a move :data:`VERSION_MOVES` does not allow (a failed
        version made active, a retired one revived) is refused."""
        with self._database.transaction() as db:
            self._database.lock(f"bot-versions:{bot}")
            found = _one(db, bot, version)
            if found is None:
                raise VersionError(f"no version {version} of the bot {bot!r}")
            if state not in VERSION_MOVES[found.state]:
                raise VersionError(f"{found.label} is {found.state}: it cannot become {state}")
            db.execute(
                "UPDATE bot_versions SET state = ?, reason = ?, updated_at = ?"
                " WHERE bot = ? AND version = ?",
                (state, reason[:2000], now(), bot, version),
            )
            moved = _one(db, bot, version)
        assert moved is not None
        return moved

    def record_step(
        self,
        bot: str,
        version: int,
        step: VersionStep,
        passed: bool,
        output: str,
        started_at: str,
    ) -> StepRecord:
        """Keep a step's output (its last :data:`MAX_STEP_OUTPUT` characters) for the owner;
        a step run again (the gate restarted) replaces its earlier output."""
        if len(output) > MAX_STEP_OUTPUT:
            output = "[... the start is cut]\n" + output[-MAX_STEP_OUTPUT:]
        record = StepRecord(step, passed, output, started_at, now())
        with self._database.transaction() as db:
            db.execute(
                "DELETE FROM bot_version_steps WHERE bot = ? AND version = ? AND step = ?",
                (bot, version, step),
            )
            db.execute(
                "INSERT INTO bot_version_steps (bot, version, step, passed, output, started_at,"
                " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (bot, version, step, int(passed), output, started_at, record.finished_at),
            )
        return record

    def steps(self, bot: str, version: int) -> list[StepRecord]:
        """A version's steps, in the order they ran."""
        with self._database.reading() as db:
            rows = db.execute(
                "SELECT * FROM bot_version_steps WHERE bot = ? AND version = ?"
                " ORDER BY started_at, finished_at",
                (bot, version),
            ).fetchall()
        return [
            StepRecord(
                step=VersionStep(text(row, "step")),
                passed=flag(row, "passed"),
                output=text(row, "output"),
                started_at=text(row, "started_at"),
                finished_at=text(row, "finished_at"),
            )
            for row in rows
        ]
