"""The headers a tar member carries before its own (pax, GNU long name and link) are hostile
too: one tarfile would spend unbounded time or memory on is refused, naming it, before tarfile
reads or parses it; the ones real tools write still unpack."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bisca.server.accounts import ArchiveRefused, SubmissionLimits, unpack
from bisca.server.accounts._tar_headers import MAX_EXTENDED_HEADER

PARSERS = ("_proc_pax", "_proc_gnulong", "_proc_sparse")


class Zeros(io.RawIOBase):
    """``size`` bytes of ``fill``, made as they are read."""

    def __init__(self, size: int, fill: bytes = b"\0") -> None:
        self.left = size
        self.fill = fill

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = min(len(buffer), self.left)
        buffer[:size] = (self.fill * size)[:size]
        self.left -= size
        return size


def raw_member(kind: bytes, payload: bytes | int, fill: bytes = b"1") -> bytes:
    """A header of ``kind`` and its payload (bytes, or that many ``fill`` bytes), padded."""
    size = payload if isinstance(payload, int) else len(payload)
    header = tarfile.TarInfo("././@LongLink" if kind in b"LK" else "././@PaxHeader")
    header.type = kind
    header.size = size
    data = fill * size if isinstance(payload, int) else payload
    return header.tobuf(format=tarfile.USTAR_FORMAT) + data + b"\0" * (-size % 512)


def scrambled(size: int, alphabet: bytes) -> bytes:
    """``size`` random bytes of ``alphabet``: they hardly compress, so the upload is as long as
    what it unpacks to and its bytes read count how far the unpacking got."""
    table = bytes(alphabet[n % len(alphabet)] for n in range(256))
    return os.urandom(size).translate(table)


def plain_file(name: str, data: bytes = b"x") -> bytes:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info.tobuf(format=tarfile.USTAR_FORMAT) + data + b"\0" * (-len(data) % 512)


def pax(*records: tuple[str, str]) -> bytes:
    """Pax records as tarfile writes them: each ``"LEN key=value\\n"``, LEN counting itself."""
    out = b""
    for key, value in records:
        body = b" %s=%s\n" % (key.encode(), value.encode())
        length = len(body) + 1
        while len(body) + len(str(length)) != length:
            length = len(body) + len(str(length))
        out += b"%d" % length + body
    return out


def gz(*members: bytes) -> bytes:
    return gzip.compress(b"".join(members) + b"\0" * 1024, compresslevel=9)


class CountedInput(io.BytesIO):
    """The upload, counting the bytes the unpacking took of it."""

    taken = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.taken += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        size = super().readinto(buffer)
        self.taken += size
        return size


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of tarfile's own header parsers as they run."""
    ran: list[str] = []
    for name in PARSERS:
        original = getattr(tarfile.TarInfo, name)

        def spy(self: tarfile.TarInfo, tar: Any, _name: str = name, _f: Any = original) -> Any:
            ran.append(_name)
            return _f(self, tar)

        monkeypatch.setattr(tarfile.TarInfo, name, spy)
    yield ran


def refuse(data: bytes, tmp_path: Path, match: str) -> CountedInput:
    tmp_path.mkdir(parents=True, exist_ok=True)
    upload = CountedInput(data)
    with pytest.raises(ArchiveRefused, match=match):
        unpack(upload, tmp_path / "bot", SubmissionLimits())
    return upload


def test_a_pax_header_of_digits_is_refused_before_tarfile_parses_it(
    tmp_path: Path, parsed: list[str]
) -> None:
    # The tester's 162-byte upload (CVE-2024-6232: 2 s of a held GIL on CPython 3.11.7).
    bomb = gz(raw_member(tarfile.XHDTYPE, 60_000), plain_file("my_bot.py"))
    assert len(bomb) < 300
    refuse(bomb, tmp_path, r"a pax extended header of 60000 bytes \(the limit is 4096 bytes\)")
    # 4 MiB of digits that do not compress: refused at its header's block, not at its end.
    digits = scrambled(4 * 1024 * 1024, b"0123456789")
    huge = gz(raw_member(tarfile.XHDTYPE, digits), plain_file("my_bot.py"))
    upload = refuse(huge, tmp_path / "again", "a pax extended header of 4194304 bytes")
    assert upload.taken <= 256 * 1024 < len(huge) // 4
    for global_header in (tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE):
        refuse(
            gz(raw_member(global_header, 5000)),
            tmp_path / str(global_header),
            "pax .* of 5000 bytes",
        )
    assert parsed == []  # tarfile never read nor parsed a refused header


def test_a_gnu_long_name_with_a_huge_payload_is_refused_before_it_is_read(
    tmp_path: Path, parsed: list[str]
) -> None:
    name = scrambled(4 * 1024 * 1024, b"abcdefghijklmnopqrstuvwxyz")
    huge = gz(raw_member(tarfile.GNUTYPE_LONGNAME, name), plain_file("my_bot.py"))
    upload = refuse(huge, tmp_path, "a GNU long-name header of 4194304 bytes")
    assert upload.taken <= 256 * 1024 < len(huge) // 4
    # 64 MiB of one letter (a 65 KiB upload): refused before tarfile reads a byte of it.
    payload = 64 * 1024 * 1024
    bomb = gz(raw_member(tarfile.GNUTYPE_LONGNAME, payload, b"a"), plain_file("my_bot.py"))
    refuse(bomb, tmp_path / "bomb", "a GNU long-name header of 67108864 bytes")
    link = gz(raw_member(tarfile.GNUTYPE_LONGLINK, MAX_EXTENDED_HEADER + 1), plain_file("x"))
    refuse(link, tmp_path / "link", "a GNU long-link header of 4097 bytes")
    assert parsed == []


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        # Records that overlap: tarfile takes each as a key of the payload's length (quadratic).
        (b"2 " * 1000 + b"=\n", "not plain pax records: record 1 is not"),
        (pax(("path", "1" * 80)), "a run of 80 digits"),
        (pax(("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0")), "record 1 describes a GNU"),
        (pax(("a", "b")) * 65, "more than 64 records"),
        (b"11 path=x\n", "record 1 is not 'LENGTH keyword=value'"),
        (b"no length\n", "record 1 does not start with its length"),
        (b"0 a=b\n", "record 1 is not"),
    ],
    ids=["overlapping", "digits", "sparse", "records", "short", "no-length", "zero"],
)
def test_a_pax_header_that_is_not_plain_records_is_refused_before_tarfile_parses_it(
    tmp_path: Path, parsed: list[str], payload: bytes, match: str
) -> None:
    assert len(payload) <= MAX_EXTENDED_HEADER
    refuse(gz(raw_member(tarfile.XHDTYPE, payload), plain_file("my_bot.py")), tmp_path, match)
    assert "_proc_pax" not in parsed


def test_extended_headers_are_one_of_a_kind_a_member_and_sparse_files_are_refused(
    tmp_path: Path, parsed: list[str]
) -> None:
    record = pax(("path", "a.py"))
    twice = gz(*[raw_member(tarfile.XHDTYPE, record)] * 2, plain_file("my_bot.py"))
    refuse(twice, tmp_path / "1", "two pax extended headers before one member")
    names = gz(*[raw_member(tarfile.GNUTYPE_LONGNAME, b"a.py\0")] * 2, plain_file("x"))
    refuse(names, tmp_path / "2", "two GNU long-name headers before one member")
    globals_ = [
        raw_member(tarfile.XGLTYPE, pax((f"c{n}", "x"))) + plain_file(f"f{n}") for n in range(65)
    ]
    refuse(gz(*globals_), tmp_path / "3", "global headers hold more than 64 records")
    holes = tarfile.TarInfo("holes")
    holes.type = tarfile.GNUTYPE_SPARSE
    refuse(gz(holes.tobuf(format=tarfile.GNU_FORMAT)), tmp_path / "4", "a GNU sparse file: 'holes'")
    assert "_proc_sparse" not in parsed


def test_the_headers_real_tools_write_still_unpack(tmp_path: Path) -> None:
    long_name = "src/" + "a_rather_long_folder_name/" * 6 + "module_with_a_long_name.py"
    assert 100 < len(long_name) < 240
    files = {long_name: b"x = 1\n", "données/é.txt": b"e\n", "bisca-bot.toml": b"name = 1\n"}
    for fmt, globals_ in [(tarfile.PAX_FORMAT, {"comment": "f" * 40}), (tarfile.GNU_FORMAT, {})]:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz", format=fmt, pax_headers=globals_) as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = 1_700_000_000.123456789  # a pax header of its own, as GNU tar's
                info.pax_headers = {"SCHILY.xattr.user.note": "an attribute"}
                tar.addfile(info, io.BytesIO(data))
        folder = tmp_path / f"bot-{fmt}"
        unpacked = unpack(io.BytesIO(buffer.getvalue()), folder, SubmissionLimits())
        assert sorted(unpacked.files) == sorted(files)
        for name, data in files.items():
            assert (folder / name).read_bytes() == data
