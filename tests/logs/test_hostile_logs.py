"""Logs crafted by someone else, read by ``bisca replay``: each is refused or shown with a
clear error naming the file and what is wrong, without a traceback, without allocating far
more than the file holds, and without its text driving the terminal or the verdict lines."""

from __future__ import annotations

import json
from pathlib import Path

from bisca import wire
from bisca.engine import ENGINE_VERSION, GAMES
from bisca.server.cli import EXIT_DIVERGES, EXIT_UNREADABLE
from bisca.server.logs import LogWriter, read_log, varint
from bisca.v1 import arena_pb2, log_pb2
from tests.support.commands import bisca
from tests.support.log_entries import belote_header


def _partial_log(path: Path, *entries: log_pb2.LogEntry) -> Path:
    """``entries`` chained as the writer chains them, under ``path`` (no footer)."""
    writer = LogWriter(path)
    for entry in entries:
        writer.write(entry)
    writer.abandon()
    writer.partial_path.rename(path)
    return path


def test_empty_records_are_not_read_on_past_the_first(tmp_path: Path) -> None:
    """A one-byte record of length 0 parses as an empty ``LogRecord``: before, every one was
    kept (a 20 MB file of them took 14 GB and three minutes before the replay refused the
    first)."""
    path = _partial_log(tmp_path / "m-empty.binlog", belote_header("m-empty"))
    start = path.stat().st_size
    with path.open("ab") as file:
        file.write(b"\x00" * 100_000)
    log = read_log(path)
    assert len(log.records) == 1, len(log.records)
    assert log.damage == f"record 1 (byte {start}) cannot be parsed: its entry is empty"
    result = bisca("replay", "verify", str(path))
    assert result.returncode == EXIT_DIVERGES, result.stdout + result.stderr
    assert f"{path}: DIVERGES at record 1: the log is damaged: record 1" in result.stdout
    assert "Traceback" not in result.stderr, result.stderr

    only_empty = tmp_path / "empty.binlog"
    only_empty.write_bytes(b"\x00" * 100_000)
    result = bisca("replay", "verify", str(only_empty))
    assert result.returncode == EXIT_UNREADABLE, result.stdout + result.stderr
    assert f"{only_empty} is not a Bisca match log: its entry is empty" in result.stdout


def test_a_record_whose_chain_is_no_sha256_is_damage(tmp_path: Path) -> None:
    path = _partial_log(tmp_path / "m-chain.binlog", belote_header("m-chain"))
    start = path.stat().st_size
    entry = log_pb2.LogEntry(events=log_pb2.LogEvents()).SerializeToString()
    record = log_pb2.LogRecord(entry=entry, chain=b"short").SerializeToString()
    with path.open("ab") as file:
        file.write(varint(len(record)) + record)
    log = read_log(path)
    assert len(log.records) == 1
    assert log.damage == (
        f"record 1 (byte {start}) cannot be parsed: its chain is 5 bytes, not a SHA-256's 32"
    )


def test_a_step_of_a_seat_the_header_does_not_name_is_an_error_not_a_traceback(
    tmp_path: Path,
) -> None:
    """``show`` names each step's bot from the header's seats: a header naming none made it
    end in an ``IndexError`` traceback."""
    header = belote_header("m-seatless", seats=[])
    game = GAMES["belote"].new_match(wire.decode_game_settings("belote", None), 1)
    seat = game.to_act
    assert seat is not None
    action = game.legal_actions()[0]
    step = log_pb2.LogStep(
        step=0,
        seat=seat,
        observation=wire.encode_game_observation("belote", game.observation(seat)),
        legal_actions=[wire.encode_game_action("belote", a) for a in game.legal_actions()],
        action=wire.encode_game_action("belote", action),
    )
    path = _partial_log(tmp_path / "m-seatless.binlog", header, log_pb2.LogEntry(step=step))
    result = bisca("replay", "show", str(path))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == EXIT_UNREADABLE, result.stdout + result.stderr
    assert (
        f"bisca replay: {path}: record 1 cannot be shown: step 0 is seat {seat}'s, but the "
        "header names 0 seat(s)"
    ) in result.stderr, result.stderr


def test_text_quoted_from_a_log_cannot_add_a_verdict_line(tmp_path: Path) -> None:
    """A verdict line quotes the log (here the header's engine version): a newline in it
    printed a line of the forger's, a verdict saying OK."""
    path = tmp_path / "m-lines.binlog"
    fake = f"{path}: OK, match m-1, 64 steps, 142 records verified, signed by ed25519:{'ab' * 32}"
    header = belote_header("m-lines")
    header.header.engine_version = f"0\n{fake}"
    _partial_log(path, header)
    result = bisca("replay", "verify", str(path))
    assert result.returncode == EXIT_DIVERGES, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        f"{path}: DIVERGES at record 0: the log was written by another engine version",
        f"  expected: {ENGINE_VERSION}",
        f"  found:    0\\n{fake}",
    ], result.stdout


def test_a_key_file_that_is_not_text_is_a_usage_error(tmp_path: Path) -> None:
    """``--key FILE`` reads the file as text: a binary one ended in a ``UnicodeDecodeError``
    traceback."""
    log = _partial_log(tmp_path / "m-key.binlog", belote_header("m-key"))
    key_file = tmp_path / "key.bin"
    key_file.write_bytes(b"\xff\xfe" + bytes(range(256)))
    result = bisca("replay", "verify", str(log), "--key", str(key_file))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"--key: {key_file} holds no public key as `bisca key` prints it" in result.stderr


def test_export_escapes_the_controls_json_leaves_to_the_terminal(tmp_path: Path) -> None:
    """JSON escapes C0 controls but not DEL and the C1 controls: a bot named with U+009B
    (CSI) reached the terminal through ``replay export`` as a working escape sequence."""
    name = "evil\x9b2J\x9d0;title\x9c\x7f"
    header = belote_header("m-export")
    header.header.seats[0].bot_name = name
    path = _partial_log(tmp_path / "m-export.binlog", header)
    result = bisca("replay", "export", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert not any(0x7F <= ord(char) <= 0x9F for char in result.stdout), repr(result.stdout)
    document = json.loads(result.stdout)
    assert document["records"][0]["header"]["seats"][0]["bot_name"] == name


def test_a_header_whose_seats_are_not_the_games_diverges(tmp_path: Path) -> None:
    """Every step and result names its seat by number: a header naming fewer seats than the
    game seats, or other numbers, describes no match of that game."""
    for name, seats in (("m-three", [0, 1, 2]), ("m-renumbered", [0, 1, 2, 7])):
        infos = [arena_pb2.SeatInfo(seat=seat, bot_name="b") for seat in seats]
        path = _partial_log(tmp_path / f"{name}.binlog", belote_header(name, seats=infos))
        result = bisca("replay", "verify", str(path))
        assert result.returncode == EXIT_DIVERGES, result.stdout + result.stderr
        assert result.stdout.splitlines() == [
            f"{path}: DIVERGES at record 0: the header's seats are not the match's",
            "  expected: seats [0, 1, 2, 3]",
            f"  found:    seats {seats}",
        ], result.stdout


def test_reading_stops_at_the_first_record_whose_chain_breaks(tmp_path: Path) -> None:
    """Review 53: a genuine header, then 200,000 small step records with made-up chains: all
    were parsed (23 times the file in memory) before the first check said the chain breaks."""
    path = _partial_log(tmp_path / "m-many.binlog", belote_header("m-many"))
    bogus = log_pb2.LogRecord(
        entry=log_pb2.LogEntry(step=log_pb2.LogStep(step=1)).SerializeToString(),
        chain=bytes(32),
    ).SerializeToString()
    with path.open("ab") as file:
        file.write((varint(len(bogus)) + bogus) * 200_000)
    log = read_log(path)
    assert len(log.records) == 2  # the header, and the record the replay names
    result = bisca("replay", "verify", str(path))
    assert result.returncode == EXIT_DIVERGES, result.stdout + result.stderr
    assert "DIVERGES at record 1: the hash chain breaks" in result.stdout


def test_a_record_larger_than_any_the_writer_makes_is_damage(tmp_path: Path) -> None:
    path = _partial_log(tmp_path / "m-big.binlog", belote_header("m-big"))
    with path.open("ab") as file:
        file.write(varint(5 * 1024 * 1024) + bytes(5 * 1024 * 1024))
    log = read_log(path)
    assert len(log.records) == 1
    assert log.damage == (
        f"record 1 (byte {path.stat().st_size - 5 * 1024 * 1024 - 4}) is 5,242,880 bytes, more "
        "than any the writer makes (1,048,576)"
    )


def test_an_empty_file_is_not_a_match_log(tmp_path: Path) -> None:
    empty = tmp_path / "m-empty.binlog"
    empty.write_bytes(b"")
    result = bisca("replay", "verify", str(empty))
    assert result.returncode == EXIT_UNREADABLE, result.stdout + result.stderr
    assert "is empty: not a Bisca match log" in result.stdout + result.stderr


def test_a_record_framed_otherwise_than_the_writer_frames_it_is_damage(tmp_path: Path) -> None:
    """Review 53: the chain covers each record's entry, not its frame, so a file of other
    bytes (a padded length, the record's two fields the other way round) verified as the same
    signed log."""
    header_only = _partial_log(tmp_path / "m-header.binlog", belote_header("m-frame"))
    first = header_only.read_bytes()
    entry = log_pb2.LogEntry(step=log_pb2.LogStep(step=0)).SerializeToString()
    framed, chain = wire.log_record(read_log(header_only).records[0].chain, entry)
    genuine = tmp_path / "m-frame.binlog"
    genuine.write_bytes(first + framed)
    record = log_pb2.LogRecord(entry=entry, chain=chain)
    body = record.SerializeToString(deterministic=True)
    swapped = (  # chain (field 2) before entry (field 1): the same message to protobuf
        b"\x12" + varint(len(record.chain)) + record.chain + b"\x0a" + varint(len(record.entry))
    ) + record.entry
    assert log_pb2.LogRecord.FromString(swapped) == record
    for name, reframed in (
        ("padded", varint(len(body))[:-1] + bytes([varint(len(body))[-1] | 0x80, 0]) + body),
        ("swapped", varint(len(swapped)) + swapped),
    ):
        path = tmp_path / f"m-{name}.binlog"
        path.write_bytes(first + reframed)
        assert read_log(genuine).damage == ""
        damage = read_log(path).damage
        assert damage.startswith("record 1 (byte ") and "as the writer" in damage, (name, damage)
