"""The match logs: where each match's log is and its final hash; and, in a shared store, the
complete logs themselves with the key that signed them, readable from every machine.  Beside
them, on either back end, the output of a ladder match's launched seats (the last
:data:`MAX_SEAT_OUTPUT` bytes of each one's stderr and stdout), kept by the machine that played
it for its owner's page."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from bisca.server.errors import StoreError
from bisca.server.records import RecordedMatch

from ._backend import Connection
from ._clock import now, stamp
from ._database import Database
from ._records import MAX_SEAT_OUTPUT, KeptLog, SeatOutput, StoredLog
from ._rows import data, integer, optional_data, recorded_matches, text


class SignedLog(NamedTuple):
    """A complete log a shared store keeps: its match, and the key that signed it."""

    match_id: str
    public_key: str


class LogRepository:
    def __init__(self, database: Database) -> None:
        self._database = database
        #: The public key (``ed25519:HEX``) that signs the logs recorded through this store.
        self.key = ""

    def describe(self) -> str:
        """The store these logs are kept in (its URL without a password)."""
        return self._database.describe()

    def signed_in(self, folder: Path) -> SignedLog | None:
        """One of the complete logs this store keeps (a shared one's) that a server wrote in
        ``folder`` (a data directory's ``matches/``), and its signer; ``None`` if none.

        A server writes each log of its data directory there and signs it with that
        directory's key, and the store records the log's path as the server spelled it (as
        given, relative to where it ran, or whole): every spelling of ``folder`` is asked."""
        spellings = {str(folder), str(folder.absolute()), str(folder.resolve())}
        spellings.add(os.path.relpath(folder))
        prefixes = sorted(os.path.join(spelling, "") for spelling in spellings)
        # substr, not LIKE: a path's '_' and '%' would be patterns.
        inside = " OR ".join("substr(matches.log_path, 1, ?) = ?" for _ in prefixes)
        sql = (
            "SELECT match_logs.match_id, match_logs.public_key FROM match_logs"
            " JOIN matches ON matches.id = match_logs.match_id"
            f" WHERE match_logs.public_key <> '' AND ({inside})"
            " ORDER BY match_logs.created_at, match_logs.match_id LIMIT 1"
        )
        arguments = [value for prefix in prefixes for value in (len(prefix), prefix)]
        with self._database.reading() as db:
            row = db.execute(sql, arguments).fetchone()
        if row is None:
            return None
        return SignedLog(text(row, "match_id"), text(row, "public_key"))

    def record(self, match_id: str, path: str, final_hash: str | None) -> None:
        """Where a match's log is, and its final hash once the log is complete.  A shared
        store keeps a complete log's bytes too (with :attr:`key`, the key that signed it), in
        the same transaction: any machine reads it there."""
        kept = self.kept(path, final_hash)
        with self._database.transaction() as db:
            self.record_in(db, match_id, kept)

    def kept(self, path: str, final_hash: str | None) -> KeptLog:
        """What recording a log writes (a shared store: the complete log's bytes, read now,
        before any transaction waits on them)."""
        contents = None
        if final_hash is not None and self._database.keeps_logs:
            try:
                contents = Path(path).read_bytes()
            except OSError as problem:
                raise StoreError(f"cannot read the log {path} to store it: {problem}") from None
        return KeptLog(path, final_hash, contents)

    def record_in(self, db: Connection, match_id: str, log: KeptLog) -> None:
        """Inside a transaction: record ``log`` as the match's (:meth:`record`)."""
        db.execute(
            "UPDATE matches SET log_path = ?, log_hash = ? WHERE id = ?",
            (log.path, log.final_hash, match_id),
        )
        if log.contents is not None:
            db.execute(
                "INSERT INTO match_logs (match_id, data, log_hash, public_key, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (match_id, log.contents, log.final_hash, self.key, now()),
            )

    def get(self, match_id: str) -> StoredLog | None:
        """A complete log kept in the store (a shared one's), or ``None``."""
        with self._database.reading() as db:
            row = db.execute("SELECT * FROM match_logs WHERE match_id = ?", (match_id,)).fetchone()
        if row is None:
            return None
        return StoredLog(
            match_id, data(row, "data"), text(row, "log_hash"), text(row, "public_key")
        )

    def recorded(self) -> dict[str, RecordedMatch]:
        """Every match recorded, with the final hash of its log (``None`` while it has no
        complete one) and its seats' outcomes."""
        with self._database.reading() as db:
            return recorded_matches(db)

    def put_output(self, seats: Sequence[SeatOutput]) -> None:
        """Keep what each of ``seats`` of a match wrote, the last :data:`MAX_SEAT_OUTPUT`
        bytes of each stream; a seat kept before is replaced."""
        if not seats:
            return
        at = now()
        with self._database.transaction() as db:
            for seat in sorted(seats, key=lambda kept: (kept.match_id, kept.seat)):
                stdout = None if seat.stdout is None else bytes(seat.stdout[-MAX_SEAT_OUTPUT:])
                db.execute(
                    "INSERT INTO seat_stderr (match_id, seat, data, stdout, created_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (match_id, seat) DO UPDATE SET"
                    " data = excluded.data, stdout = excluded.stdout,"
                    " created_at = excluded.created_at",
                    (seat.match_id, seat.seat, bytes(seat.stderr[-MAX_SEAT_OUTPUT:]), stdout, at),
                )

    def forget_output(self, before: datetime, most: int) -> int:
        """Forget the output of at most ``most`` seats kept before ``before``, the oldest
        first; how many seats'.  (The matches themselves, their logs and results, stay.)"""
        with self._database.transaction() as db:
            return db.execute(
                "DELETE FROM seat_stderr WHERE (match_id, seat) IN (SELECT match_id, seat FROM"
                " seat_stderr WHERE created_at < ? ORDER BY created_at LIMIT ?)",
                (stamp(before), most),
            ).rowcount

    def output(self, match_id: str) -> dict[int, SeatOutput]:
        """The output kept of a match's seats, by seat (none kept: empty)."""
        with self._database.reading() as db:
            rows = db.execute(
                "SELECT match_id, seat, data, stdout FROM seat_stderr WHERE match_id = ?"
                " ORDER BY seat",
                (match_id,),
            ).fetchall()
        kept = [
            SeatOutput(
                text(row, "match_id"),
                integer(row, "seat"),
                data(row, "data"),
                optional_data(row, "stdout"),
            )
            for row in rows
        ]
        return {record.seat: record for record in kept}
