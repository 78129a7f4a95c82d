"""A match's log while it is played: opened with the header, appended to at every step,
completed (footer, sync, rename) and recorded in the store at the end.

The log is the whole truth of a match, so a match cannot go on without it: any failure to
write it is a :class:`MatchFailed`.  A log that cannot be completed is left ``.partial`` and
recorded so (without a hash), never presented as complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import trio

from bisca.server.errors import LogFormatError, MatchFailed, StoreError
from bisca.server.logs import LogWriter, ServerKey, read_log, verify
from bisca.server.records import SeatRecord
from bisca.server.store import Store, is_store_lost
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

from ._core import seat_record_of


class MatchJournal:
    """The log of one match (``path`` None: a match that keeps no log)."""

    def __init__(
        self, match_id: str, path: Path | None, store: Store, signer: ServerKey | None
    ) -> None:
        self.match_id = match_id
        self.target = path
        self.store = store
        self.signer = signer
        self._writer: LogWriter | None = None
        #: Where the log ended up (complete or ``.partial``) and its final hash if complete.
        self.path: Path | None = None
        self.hash: str | None = None

    def create(self) -> None:
        """Blocking (a worker thread's, before the match starts): create the log's file, so
        that :meth:`open` touches no disk on the loop that plays the match."""
        if self.target is None or self._writer is not None:
            return
        try:
            self._writer = LogWriter(self.target, self.signer)
        except OSError as problem:
            raise MatchFailed(f"its log {self.target} could not be opened: {problem}") from None

    def open(self, header: log_pb2.LogHeader) -> None:
        """Write the header (the file is created first if :meth:`create` was not called)."""
        if self.target is None:
            return
        self.create()
        self.write(log_pb2.LogEntry(header=header))

    def write(self, entry: log_pb2.LogEntry) -> None:
        self.write_entry(entry.SerializeToString(deterministic=True))

    def write_entry(self, data: bytes) -> None:
        """Append a serialized ``LogEntry`` (the writer batches records: ``_writer.py``)."""
        writer = self._writer
        if writer is not None:
            try:
                writer.write_entry(data)
            except OSError as problem:
                raise _unwritable(writer, problem) from None

    @property
    def waiting(self) -> bool:
        """Whether records wait in memory for their batch's write (:meth:`flush`)."""
        writer = self._writer
        return writer is not None and writer.waiting

    def flush(self) -> None:
        """Write the records that wait now: a batch is written when its first record has
        waited long enough even if no record follows (the seat to act thinks)."""
        writer = self._writer
        if writer is not None:
            try:
                writer.flush()
            except OSError as problem:
                raise _unwritable(writer, problem) from None

    def abandon(self) -> None:
        """The match stops unfinished, with nothing recorded (its task is cancelled: the
        server stops): the records that wait are written and the file closed, left
        ``.partial`` for the next start to record as the cut-off match's log."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.abandon()

    async def close(self, footer: log_pb2.LogFooter) -> None:
        """Complete the log and record it in the store, in one worker thread's call; a log
        that cannot be completed is kept ``.partial`` (recorded so) and the match fails."""
        await trio.to_thread.run_sync(self._close, footer)

    def _close(self, footer: log_pb2.LogFooter) -> None:
        complete = self.complete(footer)
        if complete is not None:
            self.store.logs.record(self.match_id, *complete)

    def complete(self, footer: log_pb2.LogFooter) -> tuple[str, str] | None:
        """Blocking (a worker thread's): write the footer, sync and publish the log; returns
        what the store is to record of it (path, final hash: the match's result records it
        in the same transaction), ``None`` when there is nothing more to record.  A log that
        cannot be completed is kept ``.partial``, recorded so, and the match fails
        (``MatchFailed``)."""
        writer = self._writer
        if writer is None:
            return None
        self._writer = None
        if writer.failure is not None or not writer.records:
            # The match already fails for its broken log, or it ends before its header.
            self._keep_partial(writer)
            return None
        try:
            self.hash = writer.complete(footer)
        except OSError as problem:
            self._keep_partial(writer)
            raise MatchFailed(
                f"its log {writer.partial_path} could not be completed: {problem}"
            ) from None
        self.path = writer.path
        return str(writer.path), self.hash

    def _keep_partial(self, writer: LogWriter) -> None:
        writer.abandon()
        self.path = writer.partial_path
        try:
            self.store.logs.record(self.match_id, str(writer.partial_path), None)
        except StoreError as problem:
            if not is_store_lost(problem):
                raise
            # A full disk takes the store too: the log's failure is the match's reason, and
            # its path is recorded with that failure once the store answers (``_match.py``).


def _unwritable(writer: LogWriter, problem: OSError) -> MatchFailed:
    return MatchFailed(f"its log {writer.partial_path} could not be written: {problem}")


@dataclass(frozen=True)
class LoggedResult:
    """A finished match's result as its complete log says it: what the store records of a
    finished match (its steps, its seats' results, the log's path and final hash)."""

    steps: int
    seats: list[SeatRecord]
    path: Path
    final_hash: str


def logged_result(path: Path, match_id: str, trusted_key: bytes) -> LoggedResult | None:
    """The result of match ``match_id`` in its complete log at ``path``, when the log replays,
    says the match finished and is signed by ``trusted_key`` (the server's own); ``None``
    otherwise.  A log is completed, synced and renamed before its result's transaction, so a
    server stopped between the two (or whose store was lost then) leaves a finished match that
    only its log records: the next start records it from there (review s59a, F1)."""
    try:
        log = read_log(path)
    except (OSError, LogFormatError):  # unreadable: the match is cut off, as any other
        return None
    verdict = verify(log, trusted_key)
    header, footer, final = log.header, log.footer, log.footer_record
    if not verdict.trusted or verdict.match_id != match_id or header is None or final is None:
        return None
    if footer is None or footer.status != pb.MATCH_STATUS_FINISHED:
        return None
    versions = {seat.seat: seat.bot_version for seat in header.seats}
    seats = [seat_record_of(result, versions.get(result.seat, "")) for result in footer.seats]
    return LoggedResult(footer.steps, seats, path, final.chain.hex())
