"""The tournaments: each one's plan (its file's text, for the workers that play it) and its
planned matches, each pointing at the match of its current attempt."""

from __future__ import annotations

import json
from collections.abc import Sequence

from bisca.server.errors import StoreError
from bisca.server.records import MatchStatus, TournamentSlot

from ._backend import Row
from ._clock import now
from ._database import Database
from ._records import StoredTournament
from ._rows import integer, json_names, optional_integer, optional_text, text


class TournamentRepository:
    def __init__(self, database: Database) -> None:
        self._database = database

    def save_plan(
        self,
        name: str,
        game: str,
        digest: str,
        source: str,
        slots: Sequence[TournamentSlot],
        spec: str = "",
        seed: int | None = None,
    ) -> bool:
        """Store a tournament's plan (and ``spec``, its file's text, for the workers that
        play it, and ``seed``, the one it was dealt from); ``False`` when the same plan is
        stored already (a resumed run), whose file's text is then stored anew when it changed
        (the bots' commands are not the plan: a fixed command was ignored, and every job kept
        failing with the old one, review s59c F7).  A different plan under the same name is
        refused."""
        with self._database.transaction() as db:
            row = db.execute(
                "SELECT plan_digest, source FROM tournaments WHERE name = ?", (name,)
            ).fetchone()
            if row is not None:
                if text(row, "plan_digest") != digest:
                    # The store named, not "this data directory": a PostgreSQL store is none.
                    raise StoreError(
                        f"the store {self._database.describe()} holds another plan for "
                        f"tournament {name!r} (from {text(row, 'source')}); give this one "
                        "another name, or another data directory or store"
                    )
                if spec:
                    db.execute(
                        "UPDATE tournaments SET spec = ?, source = ? WHERE name = ?",
                        (spec, source, name),
                    )
                return False
            db.execute(
                "INSERT INTO tournaments (name, game, plan_digest, source, planned, created_at,"
                " spec, seed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (name, game, digest, source, len(slots), now(), spec, seed),
            )
            db.executemany(
                "INSERT INTO tournament_matches (tournament, slot, planned_id, pairing, seating,"
                " seed, bots) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        name,
                        slot.slot,
                        slot.planned_id,
                        slot.pairing,
                        slot.seating,
                        slot.seed,
                        json.dumps(list(slot.bots)),
                    )
                    for slot in slots
                ],
            )
            return True

    def slots(self, name: str, slot: int | None = None) -> list[TournamentSlot]:
        """A tournament's planned matches (or the one numbered ``slot``), each with the
        status of its current attempt."""
        query = (
            "SELECT t.*, m.status AS status FROM tournament_matches t"
            " LEFT JOIN matches m ON m.id = t.match_id WHERE t.tournament = ?"
        )
        values: tuple[object, ...] = (name,)
        if slot is not None:
            query += " AND t.slot = ?"
            values = (name, slot)
        with self._database.reading() as db:
            rows = db.execute(query + " ORDER BY t.slot", values).fetchall()
        return [_tournament_slot(row) for row in rows]

    def unplayed(self, name: str) -> int:
        """How many of a tournament's planned matches are not finished: counted in the
        database (a worker asks after each match whether the tournament is over)."""
        with self._database.reading() as db:
            row = db.execute(
                "SELECT count(*) AS unplayed FROM tournament_matches t"
                " LEFT JOIN matches m ON m.id = t.match_id"
                " WHERE t.tournament = ? AND (m.status IS NULL OR m.status != ?)",
                (name, MatchStatus.FINISHED),
            ).fetchone()
        return 0 if row is None else integer(row, "unplayed")

    def get(self, name: str) -> StoredTournament | None:
        """A stored tournament: its game, where its file was read and the file's text."""
        with self._database.reading() as db:
            row = db.execute(
                "SELECT game, source, spec, seed FROM tournaments WHERE name = ?", (name,)
            ).fetchone()
        if row is None:
            return None
        return StoredTournament(
            name,
            text(row, "game"),
            text(row, "source"),
            text(row, "spec"),
            optional_integer(row, "seed"),
        )

    def names(self) -> list[str]:
        with self._database.reading() as db:
            rows = db.execute("SELECT name FROM tournaments ORDER BY created_at, name").fetchall()
        return [text(row, "name") for row in rows]

    def start_attempt(self, name: str, slot: int, match_id: str) -> bool:
        """Point a planned match at its new attempt, before the attempt's match row exists:
        a crash in between leaves the slot unplayed, never played twice.  ``False`` (and
        nothing changed) when its current attempt is finished: a worker taken for dead
        recorded it after the one taking its job back read the slot unplayed, and a second
        attempt would record the planned match twice.  Not flushed: the match row's commit,
        which is, follows it (lost with it, the slot points at its previous attempt and is
        played again)."""
        with self._database.transaction(flushed=False) as db:
            # Whoever replaces an attempt marks it failed first (abandon_unfinished), which
            # waits for a result being committed: any result of it is seen here.
            started = db.execute(
                "UPDATE tournament_matches SET match_id = ?, attempts = attempts + 1"
                " WHERE tournament = ? AND slot = ? AND NOT EXISTS (SELECT 1 FROM matches m"
                " WHERE m.id = tournament_matches.match_id AND m.status = ?)",
                (match_id, name, slot, MatchStatus.FINISHED),
            )
            return bool(started.rowcount)


def _tournament_slot(row: Row) -> TournamentSlot:
    status = optional_text(row, "status")
    return TournamentSlot(
        slot=integer(row, "slot"),
        planned_id=text(row, "planned_id"),
        pairing=integer(row, "pairing"),
        seating=integer(row, "seating"),
        seed=integer(row, "seed"),
        bots=tuple(json_names(row, "bots")),
        match_id=optional_text(row, "match_id"),
        attempts=integer(row, "attempts"),
        status=None if status is None else MatchStatus(status),
    )
