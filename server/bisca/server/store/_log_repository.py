"""The match logs: where each match's log is and its final hash; and, in a shared store, the
complete logs themselves with the key that signed them, readable from every machine."""

from __future__ import annotations

from pathlib import Path

from bisca.server.errors import StoreError

from ._clock import now
from ._database import Database
from ._records import StoredLog
from ._rows import data, optional_text, text


class LogRepository:
    def __init__(self, database: Database) -> None:
        self._database = database
        #: The public key (``ed25519:HEX``) that signs the logs recorded through this store.
        self.key = ""

    def record(self, match_id: str, path: str, final_hash: str | None) -> None:
        """Where a match's log is, and its final hash once the log is complete.  A shared
        store keeps a complete log's bytes too (with :attr:`key`, the key that signed it), in
        the same transaction: any machine reads it there."""
        contents = None
        if final_hash is not None and self._database.keeps_logs:
            try:
                contents = Path(path).read_bytes()
            except OSError as problem:
                raise StoreError(f"cannot read the log {path} to store it: {problem}") from None
        with self._database.transaction() as db:
            db.execute(
                "UPDATE matches SET log_path = ?, log_hash = ? WHERE id = ?",
                (path, final_hash, match_id),
            )
            if contents is not None:
                db.execute(
                    "INSERT INTO match_logs (match_id, data, log_hash, public_key, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (match_id, contents, final_hash, self.key, now()),
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

    def hashes(self) -> dict[str, str | None]:
        """Every match recorded, with the final hash of its log (``None`` while it has no
        complete one)."""
        with self._database.reading() as db:
            rows = db.execute("SELECT id, log_hash FROM matches").fetchall()
        return {text(row, "id"): optional_text(row, "log_hash") for row in rows}
