"""Protobuf's wire format at the level of single fields, for messages put together from parts
that were serialized once.

A serialized message is its fields one after another, in any order, and a repeated field is
its values one after another; so the bytes of an observation or an event, serialized once, can
be wrapped into every message that carries them (a request, a log record, an event batch)
without building and serializing a message object again.  Parsers read such bytes exactly as
they read the bytes protobuf itself writes (``tests/wire/test_fields.py``).
"""

from __future__ import annotations

from google.protobuf.message import Message

_LENGTH_DELIMITED = 2
_VARINT = 0


def _slow_varint(value: int) -> bytes:
    if value < 0:
        raise ValueError(f"a varint cannot hold {value}")
    if value < 0x80:
        return bytes((value,))
    if value < 1 << 14:  # two bytes: clocks in milliseconds, most scores
        return bytes((value & 0x7F | 0x80, value >> 7))
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


#: The varints of 0..SMALL_VARINTS - 1, written once: most numbers a match sends (seats,
#: lengths, scores, indices) are among them.
SMALL_VARINTS = 1 << 12
VARINTS: tuple[bytes, ...] = tuple(_slow_varint(n) for n in range(SMALL_VARINTS))


def varint(value: int) -> bytes:
    """``value`` (0 or more) as a base-128 varint."""
    if 0 <= value < SMALL_VARINTS:
        return VARINTS[value]
    return _slow_varint(value)


class _Keys(dict[int, bytes]):
    """The key of each field number for one wire type, made when first asked for."""

    def __init__(self, wire_type: int) -> None:
        super().__init__()
        self.wire_type = wire_type

    def __missing__(self, number: int) -> bytes:
        key = self[number] = varint(number << 3 | self.wire_type)
        return key


_LENGTH_KEYS = _Keys(_LENGTH_DELIMITED)
_VARINT_KEYS = _Keys(_VARINT)


def length_field(number: int, payload: bytes) -> bytes:
    """Field ``number`` holding a message (or bytes, or a string) serialized as ``payload``."""
    size = len(payload)
    return (
        _LENGTH_KEYS[number]
        + (VARINTS[size] if size < SMALL_VARINTS else _slow_varint(size))
        + payload
    )


def repeated_field(number: int, payloads: list[bytes]) -> bytes:
    """A repeated message field ``number``: each of ``payloads`` as one value."""
    key = _LENGTH_KEYS[number]
    return b"".join([key + _length_prefix(payload) + payload for payload in payloads])


def _length_prefix(payload: bytes) -> bytes:
    size = len(payload)
    return VARINTS[size] if size < SMALL_VARINTS else _slow_varint(size)


def varint_field(number: int, value: int) -> bytes:
    """Field ``number`` holding an unsigned integer, bool or enum; nothing for 0 (proto3's
    default is never written)."""
    if not value:
        return b""
    if 0 < value < SMALL_VARINTS:
        return _VARINT_KEYS[number] + VARINTS[value]
    return _VARINT_KEYS[number] + _slow_varint(value)


def field_number(message_type: type[Message], name: str) -> int:
    """The number of ``message_type``'s field ``name`` (so callers never hard-code one)."""
    number: int = message_type.DESCRIPTOR.fields_by_name[name].number
    return number
