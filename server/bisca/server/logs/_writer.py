"""Writing a match log while its match runs.

Durability: a log is written to ``NAME.partial`` and only renamed to ``NAME`` once its footer
is written and synced, so a crashed or killed server leaves a log marked incomplete, never a
complete-looking one that is short.  Records are batched: they are kept in memory and handed
to the operating system in one write when the oldest has waited :data:`FLUSH_AFTER_S`, when
:data:`FLUSH_BYTES` are waiting, and at the end, so a match costs one system call per batch
instead of one per record.  A crash loses at most the records of that last moment, and the
file always ends on a whole record (a write that fails half way breaks the writer for good).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from pathlib import Path
from typing import BinaryIO

from bisca import wire
from bisca.server import metrics
from bisca.server.datadir import partial_of
from bisca.v1 import log_pb2

from ._format import GENESIS
from ._signing import ServerKey

#: Records wait in memory at most this long (from the first of a batch) before a write ...
FLUSH_AFTER_S = 0.1
#: ... or until this many bytes wait.
FLUSH_BYTES = 64 * 1024


class LogWriter:
    """Appends entries to ``PATH.partial``; :meth:`complete` renames it to ``PATH``.

    ``flush_after_s`` and ``flush_bytes`` (default :data:`FLUSH_AFTER_S`, :data:`FLUSH_BYTES`)
    say when waiting records are written.

    A write that fails (a full disk, ...) breaks the writer for good: the record may be half
    on disk, so nothing more is appended and the log can never be completed; it stays
    ``.partial``, incomplete as far as it goes, rather than a complete-looking log with a
    record missing.
    """

    flush_after_s: float = FLUSH_AFTER_S
    flush_bytes: int = FLUSH_BYTES

    def __init__(self, path: Path, signer: ServerKey | None = None) -> None:
        self.path = path
        self.partial_path = partial_of(path)
        self.signer = signer
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.exists():  # never written over: a log is the record of a match that was played
            raise FileExistsError(
                errno.EEXIST,
                "a log of this match exists already; it is not written over",
                str(path),
            )
        # Readable by the server's owner only: a live log holds every hand.
        fd = os.open(self.partial_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.fchmod(fd, 0o600)
        # Unbuffered: records are batched here, and a write hands over whole records only.
        self._file: BinaryIO = os.fdopen(fd, "wb", buffering=0)
        self._pending = bytearray()
        self._pending_since = 0.0
        self.chain = GENESIS
        self.records = 0
        self.bytes_written = 0
        #: The error of the write that broke the log, if one did.
        self.failure: OSError | None = None

    @property
    def waiting(self) -> bool:
        """Whether records wait in memory for their batch's write."""
        return bool(self._pending)

    def write(self, entry: log_pb2.LogEntry) -> None:
        self.write_entry(entry.SerializeToString(deterministic=True))

    def write_entry(self, data: bytes) -> None:
        """Append a serialized ``LogEntry`` (the bytes the chain covers, kept as they are)."""
        if self.failure is not None:
            raise OSError(f"an earlier write to {self.partial_path} failed: {self.failure}")
        framed, self.chain = wire.log_record(self.chain, data)
        now = time.monotonic()
        if not self._pending:
            self._pending_since = now
        self._pending += framed
        self.records += 1
        self.bytes_written += len(framed)
        if (
            len(self._pending) >= self.flush_bytes
            or now - self._pending_since >= self.flush_after_s
        ):
            self.flush()

    def flush(self) -> None:
        """Hand every waiting record to the operating system (one write, retried on a short
        one)."""
        if self._file.closed or not self._pending:
            return
        view = memoryview(bytes(self._pending))
        self._pending.clear()
        try:
            while view:
                written = self._file.write(view) or 0
                metrics.LOG_BYTES.inc(written)  # (counted per write: one per batch of records)
                view = view[written:]
        except OSError as problem:
            self.failure = problem
            raise

    def complete(self, footer: log_pb2.LogFooter) -> str:
        """Write the footer, sync, and publish the log under its final name; returns the hex
        final hash (the chain of the footer record).  Raises ``OSError`` (and the log stays
        ``.partial``) if any write failed."""
        footer.final_hash = self.chain
        self.write(log_pb2.LogEntry(footer=footer))
        footer_chain = self.chain
        if self.signer is not None:
            self.write(log_pb2.LogEntry(signature=self.signer.sign(footer_chain)))
        try:
            self.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self.partial_path, self.path)
        except OSError as problem:
            self.failure = problem
            raise
        return footer_chain.hex()

    def abandon(self) -> None:
        """Close without completing: the ``.partial`` file stays as the record of what was
        (a failed write's bytes may be lost with it)."""
        with contextlib.suppress(OSError):  # what could not be written stays unwritten
            if self.failure is None:
                self.flush()
            self._file.close()
