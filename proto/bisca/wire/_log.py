"""The match log's framing and hash chain (``proto/bisca/v1/log.proto``), with no file in it.

Both writers of logs use it: the referee's (``bisca.server.logs``, with its durable file) and
the SDK's in-process matches (``bisca.client.local``), so a log written by either is read and
verified by ``bisca replay`` alike.  It lives beside the codec because the SDK must not depend
on the server.
"""

from __future__ import annotations

import hashlib

from bisca.v1 import log_pb2

from ._fields import field_number, length_field, varint

#: The ``LogHeader.format_version`` of the logs written with this framing.
LOG_FORMAT_VERSION = 1
#: The chain before the first record.
LOG_GENESIS = bytes(32)

_RECORD_ENTRY = field_number(log_pb2.LogRecord, "entry")
_RECORD_CHAIN = field_number(log_pb2.LogRecord, "chain")


def log_chain(previous: bytes, entry: bytes) -> bytes:
    """The chain after a record holding the serialized ``LogEntry`` ``entry``."""
    return hashlib.sha256(previous + entry).digest()


def log_record(previous: bytes, entry: bytes) -> tuple[bytes, bytes]:
    """``(framed record, its chain)`` for the serialized ``LogEntry`` ``entry`` after the chain
    ``previous``: the length-delimited ``LogRecord`` as it is appended to a log file."""
    chain = log_chain(previous, entry)
    # A LogRecord put together from its two fields: the bytes protobuf would write (an entry is
    # never empty, a chain is 32 bytes).
    record = length_field(_RECORD_ENTRY, entry) + length_field(_RECORD_CHAIN, chain)
    return varint(len(record)) + record, chain
