"""Versions of a league's accounts made active without the gate (its own tests take them
through it: ``tests/hosting/test_gate.py``, ``tests/cli/test_league_server.py``), for the tests
of what active versions do: the ladder."""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Sequence
from pathlib import Path

from bisca.engine import GAMES
from bisca.server.accounts import SubmissionLimits, connect_version, pack_folder, take_submission
from bisca.server.cli import main
from bisca.server.hosting import Ladder
from bisca.server.league import LadderSettings
from bisca.server.records import MatchRecord
from bisca.server.store import BotVersionRecord, Store, VersionState

from .arena import Arena, start_server, stop_arena

PASSWORD = "a long enough password"
#: The accounts of :func:`one_pairing_ladder`.
LADDER_ACCOUNTS = ("ada", "bob", "cy", "dee")
#: Its game: one deal of Belote a match.
ONE_DEAL = {"belote": GAMES["belote"].settings({"deals": 1})}
#: One pairing only: once its first rotation is over every version is at its pace, so the
#: ladder draws no other and a test looks at one deal.
ONE_PAIRING = LadderSettings(matches_per_hour=1, newcomer_matches=1, duplicate=True, poll_s=0.2)


def starter_bot(folder: Path, language: str = "python") -> Path:
    """``bisca new-bot LANGUAGE FOLDER``: the starter bot, named after its folder."""
    assert main(["new-bot", language, str(folder)]) == 0
    return folder


def active_version(store: Store, uploads: Path, account: str, folder: Path) -> BotVersionRecord:
    """``account``'s next version of the bot in ``folder``, submitted and made active."""
    version = take_submission(
        store, SubmissionLimits(), uploads, account, io.BytesIO(pack_folder(folder))
    )
    for state in (VersionState.CHECKING, VersionState.VALIDATING, VersionState.ACTIVE):
        version = store.versions.move(version.bot, version.version, state)
    return version


def open_ladder_league(
    tmp: Path, data: Path, fillers: Sequence[str], ladder: Sequence[str]
) -> Arena:
    """``bisca serve`` of a one-deal Belote league open to strangers, its ladder set by
    ``ladder`` (``--ladder KEY=VALUE`` words), with a connected version of each of ``fillers``
    (an account of its own, as ``bisca account connect`` makes it) online as a ``random``
    sample bot: opponents for the versions a test submits."""
    with Store(data / "bisca.sqlite3") as store:
        tokens = []
        for name in fillers:
            store.accounts.create(name, PASSWORD)
            tokens.append(connect_version(store, SubmissionLimits(), name, f"{name}bot")[1])
    arena, _ = start_server(
        tmp,
        data,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(data)],
        *["--registration", "open", "--league", "belote:deals=1", *ladder],
    )
    try:
        for token in tokens:
            arena.sample_bot(token, "random", "belote")
    except BaseException:
        stop_arena(arena)
        raise
    return arena


def one_pairing_ladder(store: Store, bots: Path) -> Ladder:
    """A served ladder (SQLite, as ``bisca serve --ladder`` plays it) of the starter bots of
    :data:`LADDER_ACCOUNTS` (each account's bot an active version, its folder under ``bots``),
    which draws one pairing with duplicate deals (four rotations of one Belote deal)."""
    uploads = store.data_dir / "submissions"
    for name in LADDER_ACCOUNTS:
        store.accounts.create(name, PASSWORD)
        active_version(store, uploads, name, starter_bot(bots / f"{name}bot"))
    return Ladder(store, uploads, ONE_DEAL, ONE_PAIRING, random.Random(9))


def on_rotation_end(ladder: Ladder, then: Callable[[MatchRecord], None]) -> None:
    """Call ``then`` with each rotation the ladder plays, as its end left it in the store (once
    its seats' output is kept)."""
    keep = ladder.keep_output

    def keep_then(match_id: str, match_dir: Path, seats: list[int]) -> None:
        keep(match_id, match_dir, seats)
        record = ladder.store.matches.get(match_id)
        assert record is not None
        then(record)

    ladder.keep_output = keep_then  # type: ignore[method-assign]
