"""Signed results: every forgery of a match log fails ``bisca replay verify``.

A forger who knows the log format can recompute the hash chain, and a forger who knows the
rules can regenerate a whole match the engine agrees with.  Neither holds the server's key, so
each forgery below replays cleanly (or is built to) and must still fail verification: unsigned,
signed by another key, signed by the server but changed since, or not the log the store
recorded.
"""

from __future__ import annotations

import contextlib
import io
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bisca import wire
from bisca.engine import GAMES
from bisca.server import cli
from bisca.server.cli import EXIT_OK, EXIT_UNTRUSTED
from bisca.server.datadir import DataDir
from bisca.server.logs import LogWriter, ServerKey, read_log, verify
from bisca.server.records import rank_with_forfeits
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

BISCA = [sys.executable, "-m", "bisca.server.cli"]
Entries = list[log_pb2.LogEntry]


def bisca(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BISCA, *argv], capture_output=True, text=True, timeout=120)


def bisca_here(*argv: str) -> tuple[int, str]:
    """``bisca ARGV`` in this process (the same code path as the command, without an
    interpreter start-up per call): its exit code and its output.  The command line itself runs
    as a process in :func:`test_the_real_log_verifies`."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = cli.main(list(argv))
    return code, output.getvalue()


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A data directory with one real, signed match (its log and its store)."""
    data = tmp_path_factory.mktemp("signed") / "data"
    result = bisca(
        "match", "--game", "belote", "--bot", "greedy", "--bot", "random", "--bot", "greedy",
        "--bot", "random", "--deals", "2", "--seed", "11", "--data", str(data),
    )  # fmt: skip
    found = re.search(r"match (m-[0-9a-f]+)", result.stdout)
    assert found and result.returncode == 0, result.stdout + result.stderr
    return data, found.group(1)


def entries_of(path: Path) -> Entries:
    return [e for e in read_log(path).entries() if e.WhichOneof("kind") != "signature"]


def regenerate(header: log_pb2.LogHeader, choose: Callable[[int, list[object]], object]) -> Entries:
    """A whole match the engine agrees with, as the referee would log it: the forger's own
    referee, choosing the action of step N with ``choose(N, legal)``."""
    game = wire.game_name(header.game)
    state = GAMES[game].new_match(wire.decode_game_settings(game, header.settings), header.seed)
    entries = [log_pb2.LogEntry(header=header)]
    seen = 0

    def events() -> None:
        nonlocal seen
        batch = state.all_events(seen)
        if batch:
            logged = [
                log_pb2.LoggedEvent(
                    index=seen + n,
                    audience=audience,
                    event=wire.encode_game_event(game, seen + n, e),
                )
                for n, (audience, e) in enumerate(batch)
            ]
            steps = len([x for x in entries if x.WhichOneof("kind") == "step"])
            entries.append(
                log_pb2.LogEntry(events=log_pb2.LogEvents(after_step=steps, events=logged))
            )
            seen += len(batch)

    events()
    step = 0
    while not state.is_over:
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions()
        action = choose(step, legal)
        entries.append(
            log_pb2.LogEntry(
                step=log_pb2.LogStep(
                    step=step,
                    seat=seat,
                    observation=wire.encode_game_observation(game, state.observation(seat)),
                    legal_actions=[wire.encode_game_action(game, a) for a in legal],
                    action=wire.encode_game_action(game, action),
                    used_us=1000,
                )
            )
        )
        state.apply(action)
        step += 1
        events()
    outcome = state.outcome
    assert outcome is not None
    ranks = rank_with_forfeits(outcome.scores, [False] * len(outcome.scores))
    seats = [
        pb.SeatResult(seat=n, bot_name=info.bot_name, score=outcome.scores[n], rank=ranks[n],
                      end=pb.SEAT_END_COMPLETED)
        for n, info in enumerate(header.seats)
    ]  # fmt: skip
    footer = log_pb2.LogFooter(status=pb.MATCH_STATUS_FINISHED, seats=seats, steps=step)
    entries.append(log_pb2.LogEntry(footer=footer))
    return entries


class CopiedSignature:
    """A forger's "signer": the server's genuine signature, copied from the real log."""

    def __init__(self, signature: log_pb2.LogSignature) -> None:
        self.signature = signature

    def sign(self, footer_chain: bytes) -> log_pb2.LogSignature:
        return self.signature


Signer = ServerKey | CopiedSignature


def write(path: Path, entries: Entries, signer: Signer | None) -> None:
    """Publish ``entries`` as a complete, correctly chained log at ``path`` (in place of the
    real one), signed by ``signer`` (or not at all)."""
    path.unlink(missing_ok=True)
    writer = LogWriter(path, signer)  # type: ignore[arg-type]  # a forger's signer
    for entry in entries[:-1]:
        writer.write(entry)
    footer = log_pb2.LogFooter()
    footer.CopyFrom(entries[-1].footer)
    footer.ClearField("final_hash")
    writer.complete(footer)


def changed_action(entries: Entries) -> Entries:
    """One action changed, and the rest of the match regenerated around it."""
    header = entries[0].header
    actions = [e.step.action for e in entries if e.WhichOneof("kind") == "step"]
    game = wire.game_name(header.game)

    def choose(step: int, legal: list[object]) -> object:
        if step < len(actions):
            played = wire.decode_game_action(game, actions[step])
            if step == 20 and len(legal) > 1:
                return next(a for a in legal if a != played)
            if played in legal:
                return played
        return legal[0]

    return regenerate(header, choose)


def changed_seed(entries: Entries) -> Entries:
    """Another deal: the seed and its commitment (the salt is in the log) changed together."""
    header = log_pb2.LogHeader()
    header.CopyFrom(entries[0].header)
    header.seed += 1
    header.deal_commitment = wire.deal_commitment(header.deal_salt, header.seed, header.match_id)
    return regenerate(header, lambda step, legal: legal[0])


def copied(entries: Entries) -> Entries:
    forged = [log_pb2.LogEntry() for _ in entries]
    for copy, entry in zip(forged, entries, strict=True):
        copy.CopyFrom(entry)
    return forged


def swapped_names(entries: Entries) -> Entries:
    forged = copied(entries)
    seats = forged[0].header.seats
    seats[0].bot_name, seats[1].bot_name = seats[1].bot_name, seats[0].bot_name
    footer = forged[-1].footer.seats
    footer[0].bot_name, footer[1].bot_name = footer[1].bot_name, footer[0].bot_name
    return forged


def invented_forfeit(entries: Entries) -> Entries:
    forged = copied(entries)
    seats = forged[-1].footer.seats
    seats[1].end = pb.SEAT_END_FORFEITED
    seats[1].forfeit_reason = "no legal action within 2000 ms + bank; the seat forfeits"
    ranks = rank_with_forfeits(
        [s.score for s in seats], [s.end == pb.SEAT_END_FORFEITED for s in seats]
    )
    for seat, rank in zip(seats, ranks, strict=True):
        seat.rank = rank
    return forged


def invented_timeouts(entries: Entries) -> Entries:
    forged = copied(entries)
    step = next(e.step for e in forged if e.WhichOneof("kind") == "step" and e.step.seat == 2)
    step.rejected.append(log_pb2.RejectedAttempt(action=step.action, message="invented"))
    forged[-1].footer.seats[2].timeouts += 3
    forged[-1].footer.seats[2].defaults_played += 1
    return forged


def rewritten_timings(entries: Entries) -> Entries:
    forged = copied(entries)
    for entry in forged:
        if entry.WhichOneof("kind") == "step":
            entry.step.used_us = 1
    return forged


FORGERIES = {
    "a changed action, the match regenerated": changed_action,
    "a changed seed, the match regenerated": changed_seed,
    "swapped bot names": swapped_names,
    "an invented forfeit": invented_forfeit,
    "invented timeouts, defaults and rejections": invented_timeouts,
    "rewritten timings": rewritten_timings,
}


def test_the_real_log_verifies(played: tuple[Path, str]) -> None:
    data, match_id = played
    result = bisca("replay", "verify", str(DataDir(data).match_log(match_id)), "--data", str(data))
    assert result.returncode == EXIT_OK and ": OK," in result.stdout, result.stdout
    key = bisca("key", "--data", str(data)).stdout.strip()
    assert key in result.stdout and key.startswith("ed25519:")


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
@pytest.mark.parametrize("signing", ["unsigned", "another key", "the server's key, copied"])
def test_every_forgery_fails_verify(
    played: tuple[Path, str], tmp_path: Path, forgery: str, signing: str
) -> None:
    data, match_id = played
    real = DataDir(data).match_log(match_id)
    original = real.read_bytes()
    entries = FORGERIES[forgery](entries_of(real))
    genuine = read_log(real).signature
    assert genuine is not None
    signers: dict[str, Signer | None] = {
        "unsigned": None,
        "another key": ServerKey.generate(),
        "the server's key, copied": CopiedSignature(genuine),  # the genuine record, kept
    }
    try:
        write(real, entries, signers[signing])
        forged = read_log(real)
        assert forged.complete
        if forgery.endswith("regenerated"):  # the engine itself agrees with it
            assert verify(real).ok, verify(real).lines()
        key = bisca_here("key", "--data", str(data))[1].strip()
        for argv in (
            ["replay", "verify", str(real)],
            ["replay", "verify", "--key", key, str(real)],
        ):
            code, stdout = bisca_here(*argv)
            assert code != EXIT_OK, (forgery, signing, stdout)
            assert "UNTRUSTED" in stdout or "DIVERGES" in stdout, stdout
    finally:
        real.write_bytes(original)


def test_a_log_signed_by_the_server_but_not_the_one_recorded_is_untrusted(
    played: tuple[Path, str], tmp_path: Path
) -> None:
    """The server's own signed log of another match, put in this match's place."""
    data, match_id = played
    other = bisca(
        "match", "--game", "belote", "--bot", "random", "--bot", "random", "--bot", "random",
        "--bot", "random", "--deals", "1", "--data", str(data),
    )  # fmt: skip
    other_id = re.search(r"match (m-[0-9a-f]+)", other.stdout)
    assert other_id, other.stdout + other.stderr
    real = DataDir(data).match_log(match_id)
    original = real.read_bytes()
    try:
        real.write_bytes(DataDir(data).match_log(other_id.group(1)).read_bytes())
        result = bisca("replay", "verify", str(real), "--data", str(data))
        assert result.returncode == EXIT_UNTRUSTED, result.stdout
        assert "put in the place of match" in result.stdout
    finally:
        real.write_bytes(original)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            # Another first byte, whatever it was ('00' alone left one hash in 256 as it was).
            "UPDATE matches SET log_hash = CASE WHEN substr(log_hash, 1, 2) = '00' THEN 'ff'"
            " ELSE '00' END || substr(log_hash, 3) WHERE id = ?",
            "another final hash",
        ),
        ("UPDATE matches SET id = id || '-gone' WHERE id = ?", "no record of match"),
        # What the standings and ratings count, changed beside a log left as it was.
        (
            "UPDATE match_seats SET score = score + 1 WHERE match_id = ? AND seat = 0",
            "the store records another result for match",
        ),
        (
            "UPDATE match_seats SET forfeited = 1 - forfeited WHERE match_id = ? AND seat = 1",
            "the store records another result for match",
        ),
        (
            "UPDATE match_seats SET bot_name = 'someone-else' WHERE match_id = ? AND seat = 2",
            "the store records another result for match",
        ),
    ],
)
def test_verify_checks_the_hash_the_store_recorded(
    played: tuple[Path, str], change: str, reason: str
) -> None:
    data, match_id = played
    store = DataDir(data).store
    backup = store.read_bytes()
    try:
        db = sqlite3.connect(store)
        db.execute("PRAGMA foreign_keys=OFF")
        db.execute(change, (match_id,))
        db.commit()
        db.close()
        code, stdout = bisca_here(
            "replay", "verify", str(DataDir(data).match_log(match_id)), "--data", str(data)
        )
        assert code == EXIT_UNTRUSTED, stdout
        assert reason in stdout
    finally:
        for suffix in ("-wal", "-shm"):
            Path(f"{store}{suffix}").unlink(missing_ok=True)
        store.write_bytes(backup)
