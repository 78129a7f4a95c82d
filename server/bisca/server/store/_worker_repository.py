"""The workers of a shared store: each ``bisca worker`` process, its heartbeats and the
matches it runs."""

from __future__ import annotations

from bisca.server.records import MatchStatus

from ._clock import now
from ._database import Database
from ._records import WorkerRecord
from ._rows import integer, optional_real, optional_text, text


class WorkerRepository:
    def __init__(self, database: Database) -> None:
        self._database = database

    def seen(
        self,
        name: str,
        host: str,
        pid: int,
        concurrency: int,
        note: str,
        lease_seconds: float | None = None,
    ) -> None:
        """A worker's heartbeat (its first one registers it), with the lease it beats within."""
        stamp_now = now()
        with self._database.transaction() as db:
            db.execute(
                "INSERT INTO workers (name, host, pid, concurrency, started_at, seen_at, note,"
                " lease_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET"
                " seen_at = excluded.seen_at, note = excluded.note,"
                " lease_seconds = excluded.lease_seconds, stopped_at = NULL",
                (name, host, pid, concurrency, stamp_now, stamp_now, note, lease_seconds),
            )

    def stopped(self, name: str, note: str) -> None:
        with self._database.transaction() as db:
            db.execute(
                "UPDATE workers SET stopped_at = ?, note = ? WHERE name = ?", (now(), note, name)
            )

    def all(self) -> list[WorkerRecord]:
        """Every worker that ever ran on this store, the latest first, each with the matches
        it runs now."""
        with self._database.reading() as db:
            rows = db.execute("SELECT * FROM workers ORDER BY started_at DESC, name").fetchall()
            running = db.execute(
                "SELECT id, server FROM matches WHERE status IN (?, ?) ORDER BY id",
                (MatchStatus.WAITING, MatchStatus.RUNNING),
            ).fetchall()
        by_worker: dict[str, list[str]] = {}
        for match in running:
            by_worker.setdefault(optional_text(match, "server") or "", []).append(text(match, "id"))
        return [
            WorkerRecord(
                name=text(row, "name"),
                host=text(row, "host"),
                pid=integer(row, "pid"),
                concurrency=integer(row, "concurrency"),
                started_at=text(row, "started_at"),
                seen_at=text(row, "seen_at"),
                stopped_at=optional_text(row, "stopped_at"),
                note=text(row, "note"),
                running=tuple(by_worker.get(text(row, "name"), ())),
                lease_seconds=optional_real(row, "lease_seconds"),
            )
            for row in rows
        ]
