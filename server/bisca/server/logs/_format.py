"""The match log format: framing, the hash chain, and reading a log back.

The format is ``proto/bisca/v1/log.proto``: length-delimited ``LogRecord`` messages, each the
exact bytes of one ``LogEntry`` plus a running SHA-256 over the previous chain and those bytes.
Hashing the stored bytes (not a re-serialization) lets any language check the chain.

A reader never takes a ``.partial`` file (see ``_writer.py``), or one without a footer, for a
complete log.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf.message import DecodeError, Message

from bisca import wire
from bisca.server.datadir import PARTIAL_SUFFIX
from bisca.server.errors import LogFormatError
from bisca.server.textfiles import read_bounded
from bisca.v1 import log_pb2

# The framing and the chain are shared with the SDK's in-process matches (bisca.wire).
FORMAT_VERSION = wire.LOG_FORMAT_VERSION
GENESIS = wire.LOG_GENESIS
chain_of = wire.log_chain
#: The largest record a log may hold: the writer's are a few kB (an observation and its legal
#: actions, a batch of events); one bigger is damage, and is not parsed (a 20 MB batch of
#: events took 4 GB to export: review 53).
MAX_RECORD_BYTES = 1 << 20
#: The most a log file may hold to be read: far past any match's (a long Bestia match's log
#: is a few MB), and a bound on the memory a file named as a log costs (``/dev/zero`` read
#: 6 GB in 15 s; a sparse file of 1 GB took 1 GB: review s57c).
MAX_LOG_BYTES = 256 * 1024 * 1024


def varint(value: int) -> bytes:
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


@dataclass
class Record:
    index: int
    entry: log_pb2.LogEntry
    entry_bytes: bytes
    chain: bytes
    #: Where the record carries protobuf fields the format does not have ("" when nowhere):
    #: nothing reads them, so nothing may be hidden in them (see :func:`unknown_fields_in`).
    unknown_fields: str = ""


@dataclass
class LogFile:
    """A log as read from disk, whole records only."""

    path: Path
    records: list[Record] = field(default_factory=list)
    #: Bytes after the last whole record (a crash mid-write); 0 for a clean file.
    trailing_bytes: int = 0
    #: Why the record after the last whole one could not be read, when it was all there.
    damage: str = ""
    #: The chain the last record should carry, when it carries another (reading stopped
    #: there: :func:`read_log`); empty when every record's chain holds.
    broken_chain: bytes = b""

    @property
    def partial(self) -> bool:
        return self.path.name.endswith(PARTIAL_SUFFIX)

    @property
    def header(self) -> log_pb2.LogHeader | None:
        if self.records and self.records[0].entry.WhichOneof("kind") == "header":
            return self.records[0].entry.header
        return None

    @property
    def footer_record(self) -> Record | None:
        """The footer: the last record, or the one before the signature."""
        for record in self.records[-2:][::-1]:
            if record.entry.WhichOneof("kind") == "footer":
                return record
        return None

    @property
    def footer(self) -> log_pb2.LogFooter | None:
        record = self.footer_record
        return None if record is None else record.entry.footer

    @property
    def signature(self) -> log_pb2.LogSignature | None:
        if self.records and self.records[-1].entry.WhichOneof("kind") == "signature":
            return self.records[-1].entry.signature
        return None

    @property
    def complete(self) -> bool:
        return not self.partial and self.footer is not None and not self.trailing_bytes

    def entries(self) -> Iterator[log_pb2.LogEntry]:
        for record in self.records:
            yield record.entry


def unknown_fields_in(**parts: Message) -> str:
    """Which of ``parts`` (named messages) carry fields their schema does not know, at any
    depth: "" when none does.  A field the format has no name for is read by nobody, so a log
    that carries one could hide anything there, in the unsigned record wrapper above all."""
    found = []
    for name, message in parts.items():
        known = type(message)()
        known.CopyFrom(message)
        known.DiscardUnknownFields()
        if known.ByteSize() != message.ByteSize():
            found.append(name)
    return " and ".join(f"the {name}" for name in found)


def _not_a_record(record: log_pb2.LogRecord) -> str:
    """Why a parsed ``LogRecord`` is none the writer could have written ("" when it could):
    every entry has its kind (so is never empty) and every chain is a SHA-256.  A record is
    refused before it is kept: a file of one-byte empty records held ~700 bytes of Python
    objects per byte of file (a 20 MB file took 14 GB) before the replay looked at the first."""
    if not record.entry:
        return "its entry is empty"
    if len(record.chain) != len(GENESIS):
        return f"its chain is {len(record.chain)} bytes, not a SHA-256's {len(GENESIS)}"
    return ""


def _not_framed_as_written(record: log_pb2.LogRecord, framed: bytes, length: bytes) -> str:
    """Why a record's frame is not the one the writer makes ("" when it is): the chain covers
    a record's entry, not its frame, so another encoding of the same record (a padded length,
    its fields in another order) made a file of other bytes that verified as the same signed
    log (review 53)."""
    if varint(len(framed)) != length:
        return "its length is not written as the writer writes it"
    if record.SerializeToString(deterministic=True) != framed:
        return "it is not framed as the writer frames it"
    return ""


def with_file_name(text: str, path: Path) -> str:
    """``text`` with the file's name for its path: for anybody to read, the server's folders
    being its own."""
    return text.replace(str(path), path.name)


def why_unreadable(path: Path, problem: OSError | LogFormatError) -> str:
    """Why the log at ``path`` cannot be read, for anybody to read: the system's words for a
    file's error, the log reader's naming the file only (:func:`with_file_name`)."""
    why = problem.strerror if isinstance(problem, OSError) and problem.strerror else str(problem)
    return with_file_name(why, path)


def read_log(path: Path) -> LogFile:
    """Every whole record of the log at ``path`` up to the first whose hash chain breaks (a
    truncated tail is counted, not parsed).  Reading stops at that record, which is kept for
    the replay to name: what follows it is not the log the chain vouches for, and parsing it
    all first let a crafted file of a million small records cost a gigabyte before the first
    check (review 53).  ``OSError`` past :data:`MAX_LOG_BYTES`.  A pipe is read as it is
    handed out, once (``replay show`` judges what it shows: review 48)."""
    data = read_bounded(path, MAX_LOG_BYTES)
    if not data and not path.name.endswith(PARTIAL_SUFFIX):
        raise LogFormatError(f"{path} is empty: not a Bisca match log")
    log = LogFile(path)
    position = 0
    chain = GENESIS
    while position < len(data):
        start = position
        length = _read_varint(data, position)
        if length is None or length[1] + length[0] > len(data):
            log.trailing_bytes = len(data) - start
            break
        size, position = length
        if size > MAX_RECORD_BYTES:
            if not log.records:
                raise LogFormatError(f"{path} is not a Bisca match log: its first record is huge")
            log.trailing_bytes = len(data) - start
            log.damage = (
                f"record {len(log.records)} (byte {start}) is {size:,} bytes, more than any "
                f"the writer makes ({MAX_RECORD_BYTES:,})"
            )
            break
        framed = data[position : position + size]
        try:
            record = log_pb2.LogRecord.FromString(framed)
            entry = log_pb2.LogEntry.FromString(record.entry)
            problem = _not_a_record(record) or _not_framed_as_written(
                record, framed, data[start:position]
            )
        except DecodeError as undecodable:
            problem = str(undecodable)
        if problem:
            if not log.records:
                raise LogFormatError(f"{path} is not a Bisca match log: {problem}")
            log.trailing_bytes = len(data) - start
            log.damage = f"record {len(log.records)} (byte {start}) cannot be parsed: {problem}"
            break
        unknown = unknown_fields_in(record=record, entry=entry)
        log.records.append(Record(len(log.records), entry, record.entry, record.chain, unknown))
        position += size
        chain = chain_of(chain, record.entry)
        if chain != record.chain:
            log.broken_chain = chain  # the replay names this record; nothing after it is read
            break
    if not log.records and data:
        raise LogFormatError(f"{path} is not a Bisca match log")
    return log
