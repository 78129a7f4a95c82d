"""The store's schema, as numbered migrations.

:data:`MIGRATIONS` is applied in order, each in its own transaction, so an older data directory
upgrades in place when a newer server opens it; the back end counts the ones applied (SQLite's
``PRAGMA user_version``, a one-row table in PostgreSQL).  The scripts are written in the SQL the
two back ends share; :func:`for_postgresql` turns SQLite's loose column types into the exact
ones PostgreSQL needs (64-bit seeds, double precision ratings, bytes).  Never edit a released
migration: add one.
"""

from __future__ import annotations

import re

MIGRATIONS: list[str] = [
    # 1: bots, matches, per-seat results.
    """
    CREATE TABLE bots (
        name        TEXT PRIMARY KEY,
        token_hash  TEXT NOT NULL UNIQUE,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE matches (
        id           TEXT PRIMARY KEY,
        game         TEXT NOT NULL,
        settings     TEXT NOT NULL,
        seed         INTEGER NOT NULL,
        status       TEXT NOT NULL,
        bots         TEXT NOT NULL,
        clock        TEXT NOT NULL,
        reason       TEXT NOT NULL DEFAULT '',
        steps        INTEGER NOT NULL DEFAULT 0,
        created_at   TEXT NOT NULL,
        finished_at  TEXT
    );
    CREATE INDEX matches_status ON matches (status, created_at);
    CREATE TABLE match_seats (
        match_id        TEXT NOT NULL REFERENCES matches (id),
        seat            INTEGER NOT NULL,
        bot_name        TEXT NOT NULL,
        bot_version     TEXT NOT NULL DEFAULT '',
        score           INTEGER NOT NULL,
        rank            INTEGER NOT NULL,
        forfeited       INTEGER NOT NULL,
        forfeit_reason  TEXT NOT NULL DEFAULT '',
        timeouts        INTEGER NOT NULL DEFAULT 0,
        defaults_played INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (match_id, seat)
    );
    """,
    # 2: each match's log file and its final hash (bisca.server.matchlog).
    """
    ALTER TABLE matches ADD COLUMN log_path TEXT;
    ALTER TABLE matches ADD COLUMN log_hash TEXT;
    """,
    # 3: ratings (bisca.server.ratings): whether a match counts, each game's current ratings
    # with the running mean and spread of each bot's results, and every update ever applied.
    """
    ALTER TABLE matches ADD COLUMN rated INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE ratings (
        game         TEXT NOT NULL,
        bot          TEXT NOT NULL,
        mu           REAL NOT NULL,
        sigma        REAL NOT NULL,
        matches      INTEGER NOT NULL,
        result_mean  REAL NOT NULL,
        result_m2    REAL NOT NULL,
        updated_at   TEXT NOT NULL,
        PRIMARY KEY (game, bot)
    );
    CREATE TABLE rating_history (
        match_id      TEXT NOT NULL REFERENCES matches (id),
        bot           TEXT NOT NULL,
        game          TEXT NOT NULL,
        rank          INTEGER NOT NULL,
        result        REAL NOT NULL,
        mu_before     REAL NOT NULL,
        sigma_before  REAL NOT NULL,
        mu            REAL NOT NULL,
        sigma         REAL NOT NULL,
        created_at    TEXT NOT NULL,
        PRIMARY KEY (match_id, bot)
    );
    CREATE INDEX rating_history_bot ON rating_history (game, bot, created_at);
    """,
    # 4: tournaments (bisca.server.tournament): each one's plan, one row per planned match,
    # pointing at the match row of its current attempt.
    """
    CREATE TABLE tournaments (
        name         TEXT PRIMARY KEY,
        game         TEXT NOT NULL,
        plan_digest  TEXT NOT NULL,
        source       TEXT NOT NULL,
        planned      INTEGER NOT NULL,
        created_at   TEXT NOT NULL
    );
    CREATE TABLE tournament_matches (
        tournament   TEXT NOT NULL REFERENCES tournaments (name),
        slot         INTEGER NOT NULL,
        planned_id   TEXT NOT NULL UNIQUE,
        pairing      INTEGER NOT NULL,
        seating      INTEGER NOT NULL,
        seed         INTEGER NOT NULL,
        bots         TEXT NOT NULL,
        match_id     TEXT,
        attempts     INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tournament, slot)
    );
    """,
    # 5: which server process runs each match (bisca.server.app.ServerLease), so a server that
    # starts can tell the matches of a server that is gone from those of one that still runs.
    """
    ALTER TABLE matches ADD COLUMN server TEXT;
    """,
    # 6: stores shared by several machines (PostgreSQL, bisca worker).  When a match's ratings
    # were applied (a tournament applies them in the order of its plan, whichever worker
    # finishes first, up to its first slot not played yet: rated_slots; every rated match
    # finished so far was rated when it finished); a tournament's file, so any worker can run
    # its matches; complete logs kept in the store
    # itself, readable from every machine; and the workers that take matches.
    """
    ALTER TABLE matches ADD COLUMN rated_at TEXT;
    UPDATE matches SET rated_at = finished_at WHERE rated = 1 AND status = 'finished';
    ALTER TABLE tournaments ADD COLUMN spec TEXT NOT NULL DEFAULT '';
    ALTER TABLE tournaments ADD COLUMN rated_slots INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE match_logs (
        match_id    TEXT PRIMARY KEY REFERENCES matches (id),
        data        BLOB NOT NULL,
        log_hash    TEXT NOT NULL,
        public_key  TEXT NOT NULL,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE workers (
        name        TEXT PRIMARY KEY,
        host        TEXT NOT NULL,
        pid         INTEGER NOT NULL,
        concurrency INTEGER NOT NULL,
        started_at  TEXT NOT NULL,
        seen_at     TEXT NOT NULL,
        stopped_at  TEXT,
        note        TEXT NOT NULL DEFAULT ''
    );
    """,
    # 7: the lease each worker announces (`bisca workers` judges it alive by its own lease;
    # NULL for a worker of before, judged by the lease `bisca workers` is given).
    """
    ALTER TABLE workers ADD COLUMN lease_seconds REAL;
    """,
    # 8: a league for strangers (bisca.server.accounts, docs/league-server.md): accounts and
    # the invite codes that let one be created, their API and browser-session tokens (a salted
    # slow hash of each, never the token), their hosted bots and each bot's versions, with the
    # output of every step a version went through (build, check-bot, validation match).
    """
    CREATE TABLE accounts (
        name               TEXT PRIMARY KEY,
        password_salt      TEXT NOT NULL,
        password_hash      TEXT NOT NULL,
        status             TEXT NOT NULL,
        invite             TEXT,
        created_at         TEXT NOT NULL,
        status_changed_at  TEXT NOT NULL
    );
    CREATE TABLE account_invites (
        code_hash   TEXT PRIMARY KEY,
        note        TEXT NOT NULL DEFAULT '',
        created_at  TEXT NOT NULL,
        used_by     TEXT,
        used_at     TEXT
    );
    CREATE TABLE account_tokens (
        id            TEXT PRIMARY KEY,
        account       TEXT NOT NULL REFERENCES accounts (name),
        kind          TEXT NOT NULL,
        label         TEXT NOT NULL,
        salt          TEXT NOT NULL,
        secret_hash   TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        expires_at    TEXT,
        revoked_at    TEXT
    );
    CREATE INDEX account_tokens_account ON account_tokens (account, created_at);
    CREATE TABLE hosted_bots (
        name        TEXT PRIMARY KEY,
        account     TEXT NOT NULL REFERENCES accounts (name),
        created_at  TEXT NOT NULL
    );
    CREATE INDEX hosted_bots_account ON hosted_bots (account);
    CREATE TABLE bot_versions (
        bot          TEXT NOT NULL REFERENCES hosted_bots (name),
        version      INTEGER NOT NULL,
        kind         TEXT NOT NULL,
        fingerprint  TEXT NOT NULL,
        manifest     TEXT NOT NULL,
        state        TEXT NOT NULL,
        reason       TEXT NOT NULL DEFAULT '',
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        PRIMARY KEY (bot, version)
    );
    CREATE INDEX bot_versions_state ON bot_versions (state, created_at);
    CREATE TABLE bot_version_steps (
        bot          TEXT NOT NULL,
        version      INTEGER NOT NULL,
        step         TEXT NOT NULL,
        passed       INTEGER NOT NULL,
        output       TEXT NOT NULL,
        started_at   TEXT NOT NULL,
        finished_at  TEXT NOT NULL,
        PRIMARY KEY (bot, version, step)
    );
    """,
    # 9: what went wrong for each seat beside its timeouts and defaults: its bot's crashes
    # and its rejected (illegal or malformed) answers.  0 for the matches of before.
    """
    ALTER TABLE match_seats ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE match_seats ADD COLUMN illegal_moves INTEGER NOT NULL DEFAULT 0;
    """,
    # 10: the stderr of each launched seat of a ladder match (the last MAX_SEAT_OUTPUT bytes),
    # kept by whichever machine played it (a bisca worker too), for its owner's page.
    """
    CREATE TABLE seat_stderr (
        match_id    TEXT NOT NULL REFERENCES matches (id),
        seat        INTEGER NOT NULL,
        data        BLOB NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (match_id, seat)
    );
    """,
    # 11: a deal stays sealed while a tournament's planned match of it is not played (a
    # duplicate set's rotations not begun yet): found by its seed at every match's end.
    """
    CREATE INDEX tournament_matches_seed ON tournament_matches (seed);
    """,
    # 12: the seed a tournament's plan was dealt from: drawn at random when its file gives
    # none (bisca.server.tournament.planned_seed), so a resumed run and the workers deal the
    # same plan.
    """
    ALTER TABLE tournaments ADD COLUMN seed INTEGER;
    """,
    # 13: whether a match, while not over, keeps the matches dealt from its seed sealed
    # (bisca.server.referee.MatchPlan.seals_twins): a person's table does not.
    """
    ALTER TABLE matches ADD COLUMN seals_twins INTEGER NOT NULL DEFAULT 1;
    """,
    # 14: a version's matches of the last hour (the ladder's pace) and of the last week (its
    # rest) are read at every draw, for every version: without an index of when each match was
    # created, each read scanned the whole table (54 ms a version at 200,000 matches, 0.4 with
    # it: bench/ladder.py).
    """
    CREATE INDEX matches_created ON matches (created_at);
    """,
    # 15: a version's page sums what went wrong in its seats (``MatchRepository.player_totals``)
    # at every view, by anybody: without an index of the seats' bots each sum read every seat of
    # the store, and the page loaded every match the version played (1.9 s a view at 200,000
    # matches: bench/ladder.py).
    """
    CREATE INDEX match_seats_bot ON match_seats (bot_name);
    """,
    # 16: a launched seat's stdout is kept beside its stderr (``data``), for its owner (a bot's
    # print() goes there); NULL for the matches before.  Added, not renamed: a worker of the
    # release before, still playing on a shared store while it is upgraded, keeps writing its
    # seats' stderr where it did.
    """
    ALTER TABLE seat_stderr ADD COLUMN stdout BLOB;
    """,
    # 17: the ladder forgets its seats' output after ``output_days`` (``forget_output``), every
    # hour: without an index of when each was kept, each sweep read every row, blobs and all.
    """
    CREATE INDEX seat_stderr_created ON seat_stderr (created_at);
    """,
    # 18: the address a hosted version was uploaded from (an IPv6 one by its /64; NULL for the
    # versions before, and for a connected one), so the files kept of the versions one address
    # sent are bounded whichever accounts sent them (``address_bytes``: review s56d); and the
    # disk its kept files take (NULL: not measured yet, 0 once they are removed), so a budget
    # is a sum, not a walk of every kept file at every upload (review s57: 8 s at 1 M files).
    """
    ALTER TABLE bot_versions ADD COLUMN sent_from TEXT;
    ALTER TABLE bot_versions ADD COLUMN kept_bytes INTEGER;
    CREATE INDEX bot_versions_sent_from ON bot_versions (sent_from);
    """,
]


#: SQLite's column types and PostgreSQL's: SQLite's INTEGER is 64-bit and its REAL is a double;
#: PostgreSQL's are 32-bit and single precision, so they are widened.
_POSTGRESQL_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE PRECISION", "BLOB": "BYTEA"}


def for_postgresql(script: str) -> str:
    """A migration script in PostgreSQL's dialect."""
    return re.sub(
        r"\b(" + "|".join(_POSTGRESQL_TYPES) + r")\b",
        lambda found: _POSTGRESQL_TYPES[found.group(1)],
        script,
    )
