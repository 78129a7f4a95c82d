"""Archives a test uploads: a bot folder as a ``.tar.gz`` (with odd members added at will),
and a gzip bomb."""

from __future__ import annotations

import io
import tarfile

MANIFEST = """\
name = "mybot"
games = ["belote"]
language = "python"
command = "python my_bot.py"
"""
BOT = b"print('hello')\n"


def manifest_of(bot: str) -> str:
    """:data:`MANIFEST` naming the bot ``bot``."""
    return MANIFEST.replace('"mybot"', f'"{bot}"')


def archive(
    files: dict[str, bytes] | None = None,
    extra: list[tarfile.TarInfo] | None = None,
    manifest: str = MANIFEST,
) -> bytes:
    """A .tar.gz of ``files`` (a manifest and a bot by default) and ``extra`` raw members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        contents = {"bisca-bot.toml": manifest.encode(), "my_bot.py": BOT, **(files or {})}
        for name, data in contents.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for member in extra or []:
            tar.addfile(member)
    return buffer.getvalue()


def member(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, made as they are read (a bomb's member is never held whole)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = min(len(buffer), self.left)
        buffer[:size] = bytes(size)
        self.left -= size
        return size


def bomb(unpacked_bytes: int) -> bytes:
    """A .tar.gz of one file of ``unpacked_bytes`` zeros and no manifest: about a thousandth
    of its size, refused only once it is unpacked."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("zeros")
        info.size = unpacked_bytes
        tar.addfile(info, io.BufferedReader(_Zeros(unpacked_bytes)))
    return buffer.getvalue()
