"""A seeded match between seeded bots writes the same log bytes it always has: the referee's
encoders may change how they build its messages, never a byte of what they build.

The log's times (and what is random by design: the deal's salt and commitment, the match and
request ids, the chain that hashes them, the signature) are cut out at the wire level, field by
field, so every other byte is compared as written.  The digests were taken from the referee
before its encoders were compiled (the reflective ``encode_*().SerializeToString()``); a
change to them is a change of the log format, which no bot or log reader may see unannounced.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
import trio

from bisca.engine import GAMES
from bisca.server.logs import read_log
from bisca.server.referee import MatchPlan, Referee, ServerOptions, clock_settings
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import AutoBot, hello
from tests.support.waiting import wait_until

#: (game, settings, seed) -> SHA-256 of the log without its times, entries in the log.
GOLDEN = {
    ("belote", (("deals", 1),), 7): (
        "0cdbc647477f5fd2fc3f5eaccd2e8fa8fa1fc7991c0aabda0b340d7b3f60560a",
        69,
    ),
    ("bestia", (("seats", 4), ("rounds", 1)), 5): (
        "ca23a0f55697cd24babf2b698e69c37c720b066aec5fe910f0343700c95c0447",
        113,
    ),
}

# LogEntry's kinds, and the fields of each that hold times or what is random by design.
_HEADER, _STEP, _EVENTS, _FOOTER, _SIGNATURE = 1, 2, 3, 4, 5
_UNCOMPARED = {
    _HEADER: {3, 9, 10, 11},  # match id, started at, deal salt, deal commitment
    _STEP: {3, 7, 8, 9, 10},  # request id, requested at, answered at, used, bank left
    _FOOTER: {4, 6},  # ended at, final hash
}


class SeededBot(AutoBot):
    """Answers every request with a legal action drawn from its own seeded generator."""

    def __init__(self, referee: Referee, connection_id: str, seed: int) -> None:
        super().__init__(referee, connection_id, playing=False)
        self.rng = random.Random(seed)

    def _receive(self, data: bytes) -> None:
        super()._receive(data)
        message = self.received[-1] if self.received else None
        if message is not None and message.WhichOneof("kind") == "action_request":
            request = message.action_request
            action = self.rng.choice(request.legal_actions)
            self.say(
                pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=action))
            )


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, position


def _fields(data: bytes) -> list[tuple[int, bytes, bytes]]:
    """Each top-level field of a serialized message: (number, its whole bytes, its payload)."""
    fields = []
    position = 0
    while position < len(data):
        start = position
        key, position = _read_varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, position = _read_varint(data, position)
            payload = b""
        elif wire_type == 2:
            length, position = _read_varint(data, position)
            payload = data[position : position + length]
            position += length
        else:  # the log's messages hold no fixed-width fields
            raise AssertionError(f"wire type {wire_type} in a log entry")
        fields.append((number, data[start:position], payload))
    return fields


def _comparable(entry: bytes) -> bytes:
    """The entry's bytes without the fields of :data:`_UNCOMPARED` (nothing of a signature)."""
    [(kind, _, body)] = _fields(entry)
    if kind == _SIGNATURE:
        return b""
    cut = _UNCOMPARED.get(kind, set())
    kept = b"".join(whole for number, whole, _ in _fields(body) if number not in cut)
    return bytes([kind]) + len(kept).to_bytes(4, "big") + kept


async def _play(tmp_path: Path, game: str, settings: dict[str, int], seed: int) -> Path:
    referee = Referee(
        Store.in_directory(tmp_path),
        ServerOptions(clock=clock_settings(60_000, 0, "default"), join_timeout=30),
    )
    spec = GAMES[game]
    match_settings = spec.settings(settings)
    seats = getattr(match_settings, "seats", 4)
    names = [f"{game}{seat}" for seat in range(seats)]
    async with trio.open_nursery() as nursery:
        await nursery.start(referee.run)
        bots = []
        for seat, name in enumerate(names):
            bot = SeededBot(referee, f"conn-{name}", seed * 100 + seat)
            bot.say(
                hello(referee.add_ephemeral_bot(name), int(pb.Game.Value(f"GAME_{game.upper()}")))
            )
            bots.append(bot)
        await wait_until(lambda: all(bot.of_kind("welcome") for bot in bots))
        runner = await referee.create_match(
            MatchPlan(game, match_settings, tuple(names), seed=seed)
        )
        with trio.fail_after(120):
            await runner.done.wait()
        assert runner.status == "finished", runner.reason
        nursery.cancel_scope.cancel()
    [path] = tmp_path.rglob("*.binlog")
    return path


def log_digest(tmp_path: Path, game: str, settings: dict[str, int], seed: int) -> tuple[str, int]:
    path = trio.run(_play, tmp_path, game, settings, seed)
    records = read_log(path).records
    digest = hashlib.sha256(b"".join(_comparable(record.entry_bytes) for record in records))
    return digest.hexdigest(), len(records)


@pytest.mark.parametrize(("game", "settings", "seed"), sorted(GOLDEN))
def test_a_seeded_match_writes_the_golden_log(
    tmp_path: Path, game: str, settings: tuple[tuple[str, int], ...], seed: int
) -> None:
    assert log_digest(tmp_path, game, dict(settings), seed) == GOLDEN[game, settings, seed]
