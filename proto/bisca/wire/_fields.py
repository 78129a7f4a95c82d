"""Protobuf's wire format at the level of single fields, for messages put together from parts
that were serialized once.

A serialized message is its fields one after another, in any order, and a repeated field is
its values one after another; so the bytes of an observation or an event, serialized once, can
be wrapped into every message that carries them (a request, a log record, an event batch)
without building and serializing a message object again.  Parsers read such bytes exactly as
they read the bytes protobuf itself writes (``tests/wire/test_fields.py``).
"""

from __future__ import annotations

from functools import cache

from google.protobuf.message import Message

_LENGTH_DELIMITED = 2
_VARINT = 0


def varint(value: int) -> bytes:
    """``value`` (0 or more) as a base-128 varint."""
    if value < 0:
        raise ValueError(f"a varint cannot hold {value}")
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [bytes([n]) for n in range(0x80)]


@cache
def _key(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def length_field(number: int, payload: bytes) -> bytes:
    """Field ``number`` holding a message (or bytes, or a string) serialized as ``payload``."""
    return _key(number, _LENGTH_DELIMITED) + varint(len(payload)) + payload


def repeated_field(number: int, payloads: list[bytes]) -> bytes:
    """A repeated message field ``number``: each of ``payloads`` as one value."""
    key = _key(number, _LENGTH_DELIMITED)
    return b"".join(key + varint(len(payload)) + payload for payload in payloads)


def varint_field(number: int, value: int) -> bytes:
    """Field ``number`` holding an unsigned integer, bool or enum; nothing for 0 (proto3's
    default is never written)."""
    if not value:
        return b""
    return _key(number, _VARINT) + varint(value)


def field_number(message_type: type[Message], name: str) -> int:
    """The number of ``message_type``'s field ``name`` (so callers never hard-code one)."""
    number: int = message_type.DESCRIPTOR.fields_by_name[name].number
    return number
