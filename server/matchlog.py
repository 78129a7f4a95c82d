"""Match logs: writing them while a match runs, and reading them back.

The format is ``proto/bisca/v1/log.proto``: length-delimited ``LogRecord`` messages, each the
exact bytes of one ``LogEntry`` plus a running SHA-256 over the previous chain and those bytes.
Hashing the stored bytes (not a re-serialization) lets any language check the chain.

Durability: a log is written to ``NAME.partial`` and flushed to the operating system after
every record, so a crashed or killed server leaves every whole record on disk; on completion it
is synced and renamed to ``NAME``.  A reader never takes a ``.partial`` file, or one without a
footer, for a complete log.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from google.protobuf.message import DecodeError

from bisca.v1 import log_pb2

FORMAT_VERSION = 1
LOG_SUFFIX = ".binlog"
PARTIAL_SUFFIX = ".partial"
GENESIS = bytes(32)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data: bytes, position: int) -> tuple[int, int] | None:
    """``(value, next position)``, or ``None`` when the data ends inside the varint."""
    shift = 0
    value = 0
    while position < len(data):
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
        shift += 7
        if shift > 63:
            raise LogFormatError(f"a record length at byte {position} is not a varint")
    return None


class LogFormatError(Exception):
    """A file that is not a Bisca match log at all."""


def chain_of(previous: bytes, entry: bytes) -> bytes:
    return hashlib.sha256(previous + entry).digest()


class LogWriter:
    """Appends entries to ``PATH.partial``; :meth:`complete` renames it to ``PATH``.

    A write that fails (a full disk, ...) breaks the writer for good: the record may be half
    on disk, so nothing more is appended and the log can never be completed; it stays
    ``.partial``, incomplete as far as it goes, rather than a complete-looking log with a
    record missing.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.partial_path = path.with_name(path.name + PARTIAL_SUFFIX)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO = open(self.partial_path, "wb")  # noqa: SIM115 (closed in complete)
        self.chain = GENESIS
        self.records = 0
        self.bytes_written = 0
        #: The error of the write that broke the log, if one did.
        self.failure: OSError | None = None

    def write(self, entry: log_pb2.LogEntry) -> None:
        if self.failure is not None:
            raise OSError(f"an earlier write to {self.partial_path} failed: {self.failure}")
        data = entry.SerializeToString(deterministic=True)
        self.chain = chain_of(self.chain, data)
        record = log_pb2.LogRecord(entry=data, chain=self.chain).SerializeToString()
        framed = _varint(len(record)) + record
        try:
            self._file.write(framed)
            self._file.flush()
        except OSError as problem:
            self.failure = problem
            raise
        self.records += 1
        self.bytes_written += len(framed)

    def complete(self, footer: log_pb2.LogFooter) -> str:
        """Write the footer, sync, and publish the log under its final name; returns the hex
        final hash (the chain of the footer record).  Raises ``OSError`` (and the log stays
        ``.partial``) if any write failed."""
        footer.final_hash = self.chain
        self.write(log_pb2.LogEntry(footer=footer))
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self.partial_path, self.path)
        except OSError as problem:
            self.failure = problem
            raise
        return self.chain.hex()

    def abandon(self) -> None:
        """Close without completing: the ``.partial`` file stays as the record of what was
        (a failed write's bytes may be lost with it)."""
        if not self._file.closed:
            with contextlib.suppress(OSError):  # closed even when its last flush fails
                self._file.close()


@dataclass
class Record:
    index: int
    entry: log_pb2.LogEntry
    entry_bytes: bytes
    chain: bytes


@dataclass
class LogFile:
    """A log as read from disk, whole records only."""

    path: Path
    records: list[Record] = field(default_factory=list)
    #: Bytes after the last whole record (a crash mid-write); 0 for a clean file.
    trailing_bytes: int = 0
    #: Why the record after the last whole one could not be read, when it was all there.
    damage: str = ""

    @property
    def partial(self) -> bool:
        return self.path.name.endswith(PARTIAL_SUFFIX)

    @property
    def header(self) -> log_pb2.LogHeader | None:
        if self.records and self.records[0].entry.WhichOneof("kind") == "header":
            return self.records[0].entry.header
        return None

    @property
    def footer(self) -> log_pb2.LogFooter | None:
        if self.records and self.records[-1].entry.WhichOneof("kind") == "footer":
            return self.records[-1].entry.footer
        return None

    @property
    def complete(self) -> bool:
        return not self.partial and self.footer is not None and not self.trailing_bytes

    def entries(self) -> Iterator[log_pb2.LogEntry]:
        for record in self.records:
            yield record.entry


def read_log(path: Path) -> LogFile:
    """Every whole record of the log at ``path`` (a truncated tail is counted, not parsed)."""
    data = path.read_bytes()
    log = LogFile(path)
    position = 0
    while position < len(data):
        start = position
        length = _read_varint(data, position)
        if length is None or length[1] + length[0] > len(data):
            log.trailing_bytes = len(data) - start
            break
        size, position = length
        try:
            record = log_pb2.LogRecord.FromString(data[position : position + size])
            entry = log_pb2.LogEntry.FromString(record.entry)
        except DecodeError as problem:
            if not log.records:
                raise LogFormatError(f"{path} is not a Bisca match log: {problem}") from None
            log.trailing_bytes = len(data) - start
            log.damage = f"record {len(log.records)} (byte {start}) cannot be parsed: {problem}"
            break
        log.records.append(Record(len(log.records), entry, record.entry, record.chain))
        position += size
    if not log.records and data:
        raise LogFormatError(f"{path} is not a Bisca match log")
    return log


def log_file(match_dir: Path, match_id: str) -> Path:
    """Where a match's log lives: ``MATCH_ID.binlog`` in the match's own folder (beside its
    bots' output)."""
    return match_dir / f"{match_id}{LOG_SUFFIX}"
