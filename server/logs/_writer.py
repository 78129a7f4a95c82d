"""Writing a match log while its match runs.

Durability: a log is written to ``NAME.partial`` and flushed to the operating system after
every record, so a crashed or killed server leaves every whole record on disk; on completion it
is synced and renamed to ``NAME``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from bisca.server.datadir import partial_of
from bisca.v1 import log_pb2

from ._format import GENESIS, chain_of, varint
from ._signing import ServerKey


class LogWriter:
    """Appends entries to ``PATH.partial``; :meth:`complete` renames it to ``PATH``.

    A write that fails (a full disk, ...) breaks the writer for good: the record may be half
    on disk, so nothing more is appended and the log can never be completed; it stays
    ``.partial``, incomplete as far as it goes, rather than a complete-looking log with a
    record missing.
    """

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
        self._file: BinaryIO = os.fdopen(fd, "wb")
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
        framed = varint(len(record)) + record
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
        footer_chain = self.chain
        if self.signer is not None:
            self.write(log_pb2.LogEntry(signature=self.signer.sign(footer_chain)))
        try:
            self._file.flush()
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
        if not self._file.closed:
            with contextlib.suppress(OSError):  # closed even when its last flush fails
                self._file.close()
