"""The store's schema, as numbered migrations.

:data:`MIGRATIONS` is applied in order, each in its own transaction, so an older data directory
upgrades in place when a newer server opens it; ``PRAGMA user_version`` counts the ones applied.
Never edit a released migration: add one.
"""

from __future__ import annotations

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
]
