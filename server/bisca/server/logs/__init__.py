"""Match logs: the format, the writer, replay and verification, text rendering, spectating.

A match log is the whole truth of a match (``proto/bisca/v1/log.proto``): its header, every
step with its timing, every event with its audience, and the result, each record chained to
the one before by SHA-256.  :func:`verify` re-runs the engine on a log and says where it
diverges.  Spectators' views (:class:`Watcher`, :func:`log_updates`) are built from the same
event batches the log is made of, so a live view and a replayed one agree.
"""

from ._format import (
    FORMAT_VERSION,
    GENESIS,
    MAX_LOG_BYTES,
    LogFile,
    Record,
    chain_of,
    read_log,
    varint,
    why_unreadable,
    with_file_name,
)
from ._render import (
    CARD_LEGENDS,
    Frame,
    action_text,
    event_text,
    fields_text,
    log_frames,
    seat_view_lines,
    status_text,
)
from ._replay import Verdict, export_json, verify
from ._signing import (
    SIGNED_PREFIX,
    ServerKey,
    SignatureProblem,
    check_signature,
    data_key,
    parse_public_key,
    public_key_text,
)
from ._spectate import Audience, Push, Watcher, events_update, log_updates
from ._writer import FLUSH_AFTER_S, LogWriter

__all__ = [
    "CARD_LEGENDS",
    "FLUSH_AFTER_S",
    "FORMAT_VERSION",
    "GENESIS",
    "MAX_LOG_BYTES",
    "SIGNED_PREFIX",
    "Audience",
    "Frame",
    "LogFile",
    "LogWriter",
    "Push",
    "Record",
    "ServerKey",
    "SignatureProblem",
    "Verdict",
    "Watcher",
    "action_text",
    "chain_of",
    "check_signature",
    "data_key",
    "event_text",
    "events_update",
    "export_json",
    "fields_text",
    "log_frames",
    "log_updates",
    "parse_public_key",
    "public_key_text",
    "read_log",
    "seat_view_lines",
    "status_text",
    "varint",
    "verify",
    "why_unreadable",
    "with_file_name",
]
