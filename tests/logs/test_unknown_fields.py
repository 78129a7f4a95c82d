"""A log whose records carry protobuf fields the format does not have fails verification,
naming the record: nothing reads such fields, so whatever hides in them (in the record
wrapper, which no signature covers, or in an entry) must not pass as part of a verified log."""

from __future__ import annotations

from pathlib import Path

from bisca import wire
from bisca.server.logs import LogWriter, ServerKey, read_log, varint, verify
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2
from tests.support.log_entries import belote_header

KEY = ServerKey.generate()
#: Field 15 of any message, as length-delimited bytes: no message of the format has it.
STRAY = wire.length_field(15, b"hidden payload")


def _signed_log(path: Path, header_bytes: bytes | None = None) -> Path:
    writer = LogWriter(path, KEY)
    writer.write_entry(
        header_bytes or belote_header(path.stem).SerializeToString(deterministic=True)
    )
    writer.complete(log_pb2.LogFooter(status=pb.MATCH_STATUS_FAILED, steps=0))
    return path


def test_the_untouched_log_verifies(tmp_path: Path) -> None:
    verdict = verify(_signed_log(tmp_path / "plain.binlog"), KEY.public)
    assert verdict.trusted, verdict.lines()


def test_a_stray_field_in_a_record_wrapper_fails_naming_the_record(tmp_path: Path) -> None:
    path = _signed_log(tmp_path / "wrapped.binlog")
    rewritten = b""
    for record in read_log(path).records:
        wrapper = log_pb2.LogRecord(entry=record.entry_bytes, chain=record.chain)
        body = wrapper.SerializeToString() + (STRAY if record.index == 1 else b"")
        rewritten += varint(len(body)) + body
    path.write_bytes(rewritten)
    verdict = verify(path, KEY.public)
    assert not verdict.ok and verdict.record == 1, verdict.lines()
    assert "record 1 carries protobuf fields" in verdict.problem, verdict.problem
    assert "the record" in verdict.problem


def test_a_stray_field_in_a_signed_entry_fails_too(tmp_path: Path) -> None:
    header = belote_header("m-stray").SerializeToString(deterministic=True) + STRAY
    verdict = verify(_signed_log(tmp_path / "m-stray.binlog", header), KEY.public)
    assert not verdict.ok and verdict.record == 0, verdict.lines()
    assert "record 0 carries protobuf fields" in verdict.problem and "the entry" in verdict.problem
