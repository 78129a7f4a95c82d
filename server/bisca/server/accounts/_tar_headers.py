"""The headers a tar member may carry before its own, checked before ``tarfile`` reads them.

A member's name, link or metadata may come in a header of its own just before it: a pax
extended header (``x``, Solaris ``X``) or global header (``g``), a list of ``"LEN key=value\\n"``
records, or a GNU long name or long link (``L``, ``K``).  ``tarfile`` reads such a header's
whole payload into memory and parses it before the member is handed to :mod:`._archive`, so
the checks there come too late for it: CPython before 3.11.10 searches a pax payload with a
regular expression quadratic in its runs of digits that holds the GIL throughout
(CVE-2024-6232: 60,000 digits stop every thread for seconds), its record loop takes records
that overlap (quadratic memory in the payload), and a ``GNU.sparse`` record makes it read a
sparse map from the next member's bytes with no bound.

So :class:`WaryTarInfo` (``tarfile.open(tarinfo=...)``) looks at each header in
``_proc_member``, the hook tarfile leaves for subclasses, before its payload is read, and
refuses (:class:`ArchiveRefused`, each naming what was wrong):

* an extended header over :data:`MAX_EXTENDED_HEADER` bytes (a bot's archive needs far less:
  its paths are at most ``MAX_PATH`` characters);
* a second header of one kind before one member (one pax, one long name, one long link, one
  global), so a member costs at most four;
* a GNU sparse member (``S``), which a bot's archive has no use for;

and reads a pax payload itself, before tarfile parses it, to refuse it unless it is
well-formed records covering it exactly, at most :data:`MAX_PAX_RECORDS` of them (the global
ones counted over the whole archive, since tarfile keeps them for every later member), none a
``GNU.sparse`` one, with no run of more than :data:`MAX_DIGIT_RUN` digits.  The payload it
read is then handed to tarfile as read, its padding zeroed, so tarfile parses exactly what was
checked.  Every check costs time linear in a payload of at most :data:`MAX_EXTENDED_HEADER`
bytes, whatever Python's tarfile does with it afterwards.
"""

from __future__ import annotations

import re
import tarfile
from typing import Any

from ._refusals import ArchiveRefused

#: The largest payload of a pax or GNU long-name/long-link header, bytes.
MAX_EXTENDED_HEADER = 4096
#: The most records in one pax header, and in all the archive's global pax headers together.
MAX_PAX_RECORDS = 64
#: The longest run of digits in a pax header: a number a pax record holds (a size, a time, an
#: id) is at most 20 digits; a longer run is only ever a name, and the quadratic search in
#: CPython before 3.11.10 costs the square of each run.
MAX_DIGIT_RUN = 64

_KINDS = {
    tarfile.XHDTYPE: "pax extended header",
    tarfile.SOLARIS_XHDTYPE: "pax extended header",
    tarfile.XGLTYPE: "pax global header",
    tarfile.GNUTYPE_LONGNAME: "GNU long-name header",
    tarfile.GNUTYPE_LONGLINK: "GNU long-link header",
}
_DIGITS = re.compile(rb"[0-9]+")
#: What a header's kinds met so far are kept in, on the TarFile: the current member's, and
#: the number of global records in the archive.
_SEEN = "_bisca_extended_seen"
_GLOBAL_RECORDS = "_bisca_global_records"


class WaryTarInfo(tarfile.TarInfo):
    """A TarInfo that refuses an extended header tarfile would spend unbounded time or memory
    on, before tarfile reads it (see the module)."""

    def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        kind = _KINDS.get(self.type)
        if kind is None:
            setattr(tar, _SEEN, frozenset())
            if self.type == tarfile.GNUTYPE_SPARSE:
                raise ArchiveRefused(f"the archive holds a GNU sparse file: {self.name[:100]!r}")
        else:
            if not 0 <= self.size <= MAX_EXTENDED_HEADER:
                raise ArchiveRefused(
                    f"the archive holds a {kind} of {self.size} bytes "
                    f"(the limit is {MAX_EXTENDED_HEADER} bytes)"
                )
            seen: frozenset[str] = getattr(tar, _SEEN, frozenset())
            if kind in seen:
                raise ArchiveRefused(f"the archive holds two {kind}s before one member")
            setattr(tar, _SEEN, seen | {kind})
        return super()._proc_member(tar)  # type: ignore[misc, no-any-return]

    def _proc_pax(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        stream = tar.fileobj
        assert stream is not None  # a TarFile being read has its stream
        padded = -(-self.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
        payload = stream.read(padded)[: self.size]
        records = _pax_records(payload, _KINDS[self.type])
        if self.type == tarfile.XGLTYPE:
            records += getattr(tar, _GLOBAL_RECORDS, 0)
            if records > MAX_PAX_RECORDS:
                raise ArchiveRefused(
                    f"the archive's pax global headers hold more than {MAX_PAX_RECORDS} records"
                )
            setattr(tar, _GLOBAL_RECORDS, records)
        # tarfile reads the payload again: it gets what was checked, its padding zeros.
        tar.fileobj = _Replay(stream, payload + bytes(padded - len(payload)))  # type: ignore[assignment]
        try:
            return super()._proc_pax(tar)  # type: ignore[misc, no-any-return]
        finally:
            tar.fileobj = stream


def _pax_records(payload: bytes, kind: str) -> int:
    """How many ``"LEN key=value\\n"`` records ``payload`` is, or :class:`ArchiveRefused`
    unless it is that exactly (see the module)."""

    def refused(why: str) -> ArchiveRefused:
        return ArchiveRefused(f"the archive holds a {kind} that is not plain pax records: {why}")

    longest = max(map(len, _DIGITS.findall(payload)), default=0)
    if longest > MAX_DIGIT_RUN:
        raise refused(f"a run of {longest} digits (the limit is {MAX_DIGIT_RUN})")
    count = 0
    start = 0
    while start < len(payload):
        count += 1
        if count > MAX_PAX_RECORDS:
            raise refused(f"more than {MAX_PAX_RECORDS} records")
        space = payload.find(b" ", start, start + 8)
        digits = payload[start:space]
        if space < 0 or not digits.isdigit():
            raise refused(f"record {count} does not start with its length")
        end = start + int(digits)
        record = payload[space + 1 : end]
        equals = record.find(b"=")
        if end > len(payload) or not record.endswith(b"\n") or equals <= 0:
            raise refused(f"record {count} is not 'LENGTH keyword=value' and a newline")
        if record.startswith(b"GNU.sparse."):
            raise refused(f"record {count} describes a GNU sparse file")
        start = end
    return count


class _Replay:
    """A stream that gives ``head`` before what is left of ``inner`` (tarfile reads a pax
    payload, and tells where it is, through this)."""

    def __init__(self, inner: Any, head: bytes) -> None:
        self._inner = inner
        self._head = head

    def read(self, size: int) -> bytes:
        head, self._head = self._head[:size], self._head[size:]
        if len(head) < size:
            head += self._inner.read(size - len(head))
        return head

    def tell(self) -> int:
        return int(self._inner.tell()) - len(self._head)
