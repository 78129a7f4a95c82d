"""Engine values -> protobuf bytes without message objects: a serializer compiled per type.

The reflective converters of ``_codec.py`` build a protobuf message per engine value, field by
field, and protobuf then serializes it; on the referee's hot path (an observation, its legal
actions and the events, every decision) that costs more than the game itself.  Here the same
mapping (the rules of ``_codec.py``: the dataclass ``X`` is the message ``X``, a tuple a
repeated field, ``T | None`` an absent field...) is compiled once per message type into the
Python source of a function that writes the message's bytes directly: every field's key is a
precomputed constant, every card and enum member maps to the finished bytes of its field, and
the fields come in field-number order, as protobuf writes them.  ``tests/wire`` holds the bytes
equal to ``SerializeToString`` of the message ``_codec.py`` builds, for whole random matches of
every game.

Only the field types the games' ``.proto`` files use compile (unsigned, signed and zigzag
integers, bools, enums, strings, messages, and repeated — packed — fields of them); any other
is refused when the serializer is compiled, never when a value is written.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from enum import Enum
from typing import get_type_hints

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from bisca.engine import Card, MalformedActionError

from ._fields import SMALL_VARINTS, VARINTS, varint
from ._hints import item_type, snake_case

#: An engine value to the bytes of its message (the serializer's type says which value).
Serializer = Callable[[object], bytes]

#: Serialized nested values kept per game before the memo starts afresh.  Each entry keeps its
#: value alive, so the cap bounds what finished matches leave behind: at 8,192 a server's memory
#: levels off after about a hundred matches of a game (at 50,000 it grew for ~580, measured by
#: the soak), and 64 concurrent matches (~86 entries each) still fit in it.
_MEMO_LIMIT = 8_192

_LENGTH_DELIMITED = 2
_VARINT = 0
_UNSIGNED = frozenset({FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64})
# int32 and int64 write a negative value as its 64-bit two's complement (ten bytes).
_SIGNED = frozenset({FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64})
_ZIGZAG = frozenset({FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64})
_INTEGERS = _UNSIGNED | _SIGNED | _ZIGZAG


def _key(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def _signed(value: int) -> int:
    return value & 0xFFFF_FFFF_FFFF_FFFF


def _zigzag(value: int) -> int:
    return value << 1 if value >= 0 else (-value << 1) - 1


def _packed_varints(values: list[int]) -> bytes:
    if max(values) < 0x80:
        return bytes(values)  # one byte each (a negative raises, as varint does)
    return b"".join([varint(value) for value in values])


class SerializerCompiler:
    """The serializers of one game's engine values: :meth:`message` for a dataclass (its
    message's bytes), :meth:`union` for a union of dataclasses (the bytes of its wrapper
    message with one ``oneof``).  Nested values are serialized once and kept, keyed by
    identity (engine values are frozen and shared between observations), with their length:
    a field of one is its key and those bytes."""

    def __init__(
        self,
        *,
        module: types.ModuleType,
        message_names: Mapping[type, str],
        enum_numbers: Callable[[type[Enum]], Mapping[Enum, int]],
    ) -> None:
        self._module = module
        self._message_names = message_names
        self._enum_numbers = enum_numbers
        self._bodies: dict[type, Serializer] = {}
        self._nested: dict[type, Serializer] = {}
        self._memo: dict[int, tuple[object, bytes]] = {}

    def union(self, arms: tuple[object, ...], wrapper_name: str) -> Serializer:
        """The bytes of the wrapper message ``wrapper_name`` holding one of ``arms``."""
        descriptor: Descriptor = getattr(self._module, wrapper_name).DESCRIPTOR
        fields: dict[type, tuple[bytes, Serializer]] = {}
        for arm in arms:
            if not isinstance(arm, type):
                raise TypeError(f"no protobuf mapping for the {wrapper_name} arm {arm!r}")
            field = descriptor.fields_by_name[snake_case(arm.__name__)]
            fields[arm] = (_key(field.number, _LENGTH_DELIMITED), self._delimited(arm))

        def serialize(value: object) -> bytes:
            try:
                key, arm = fields[type(value)]
            except KeyError:
                raise MalformedActionError(
                    f"{type(value).__name__} is not a {descriptor.full_name}"
                ) from None
            return key + arm(value)

        return serialize

    def message(self, kind: type) -> Serializer:
        """The bytes of the message of the dataclass ``kind`` (compiled once, not memoized:
        the observation is a new value every time)."""
        known = self._bodies.get(kind)
        if known is None:
            known = self._bodies[kind] = self._build(kind)
        return known

    # ---- compiling --------------------------------------------------------------------------

    def _delimited(self, kind: type) -> Serializer:
        """The length and bytes of a nested ``kind`` (what follows its field's key), kept
        per value: engine values are frozen and mostly shared between observations (past
        tricks, bids, results), so each is serialized once."""
        known = self._nested.get(kind)
        if known is not None:
            return known
        build = self.message(kind)
        memo = self._memo

        def serialize(value: object) -> bytes:
            # The memo holds the value too, so an id is never reused while its entry lives.
            known = memo.get(id(value))
            if known is not None and known[0] is value:
                return known[1]
            body = build(value)
            data = varint(len(body)) + body
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[id(value)] = (value, data)
            return data

        self._nested[kind] = serialize
        return serialize

    def _build(self, kind: type) -> Serializer:
        name = self._message_names.get(kind, kind.__name__)
        descriptor: Descriptor = getattr(self._module, name).DESCRIPTOR
        hints = get_type_hints(kind)
        names = {field.name for field in dataclasses.fields(kind)}
        for field_name in names:
            if field_name not in descriptor.fields_by_name:
                raise TypeError(f"{descriptor.full_name} has no field {field_name}")
        constants: dict[str, object] = {
            "varint": varint,
            "packed": _packed_varints,
            "V": VARINTS,
            "SMALL": SMALL_VARINTS,
        }
        lines = [f"def serialize_{name}(value):", "    out = bytearray()"]
        for field in sorted(descriptor.fields, key=lambda field: field.number):
            if field.name in names:
                lines += self._field_lines(field, hints[field.name], constants)
        lines.append("    return bytes(out)")
        source = "\n".join(lines)
        namespace: dict[str, object] = {}
        exec(
            compile(source, f"<bisca.wire serializer of {descriptor.full_name}>", "exec"),
            {**constants},
            namespace,
        )
        serializer = namespace[f"serialize_{name}"]
        assert callable(serializer)
        setattr(serializer, "source", source)  # noqa: B010 - kept for debugging and the tests
        return serializer

    def _field_lines(
        self, field: FieldDescriptor, annotation: object, constants: dict[str, object]
    ) -> list[str]:
        """The lines writing ``field`` from ``value.<name>``, its constants added."""
        tag = f"F{field.number}"
        read = f"value.{field.name}"
        repeated = field.is_repeated
        present = "is not None" if field.has_presence else ""
        item = item_type(annotation)
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            key = _key(field.number, _LENGTH_DELIMITED)
            if isinstance(item, type) and issubclass(item, Card):
                # Each card's whole field (key, length, suit and rank), once per field.
                constants[tag] = self._card_fields(item, field, key)
                if repeated:
                    return [f"    for x in {read}:", f"        out += {tag}[x]"]
                return [f"    x = {read}", "    if x is not None:", f"        out += {tag}[x]"]
            if not (isinstance(item, type) and dataclasses.is_dataclass(item)):
                raise TypeError(f"no serializer for {field.full_name} from {annotation!r}")
            constants[tag], constants[f"S{field.number}"] = key, self._delimited(item)
            write = [f"        out += {tag}", f"        out += S{field.number}(x)"]
            if repeated:
                return [f"    for x in {read}:", *write]
            return [f"    x = {read}", "    if x is not None:", *write]
        if repeated:
            return self._packed_lines(field, item, read, constants)
        key = _key(
            field.number,
            _VARINT if field.type != FieldDescriptor.TYPE_STRING else _LENGTH_DELIMITED,
        )
        constants[tag] = key
        check = f"    if x {present}:" if present else "    if x:"
        if field.type == FieldDescriptor.TYPE_ENUM:
            # Each member's whole field; 0 (unspecified, never an engine value) writes nothing.
            constants[tag] = {
                member: (key + varint(number) if number or field.has_presence else b"")
                for member, number in self._enum_numbers(_enum_type(item, field)).items()
            }
            return [f"    x = {read}", "    if x is not None:", f"        out += {tag}[x]"]
        if field.type == FieldDescriptor.TYPE_BOOL:
            constants[f"{tag}T"], constants[f"{tag}F"] = key + b"\x01", key + b"\x00"
            if field.has_presence:
                return [f"    x = {read}", check, f"        out += {tag}T if x else {tag}F"]
            return [f"    if {read}:", f"        out += {tag}T"]
        if field.type == FieldDescriptor.TYPE_STRING:
            return [
                f"    x = {read}",
                check,
                "        data = x.encode()",
                f"        out += {tag}",
                *_write_varint("len(data)"),
                "        out += data",
            ]
        if field.type in _INTEGERS:
            number = _integer_expression(field, "x", constants)
            return [f"    x = {read}", check, f"        out += {tag}", *_write_varint(number)]
        raise TypeError(f"no serializer for the field type of {field.full_name}")

    def _packed_lines(
        self, field: FieldDescriptor, item: object, read: str, constants: dict[str, object]
    ) -> list[str]:
        """A repeated scalar field: proto3 packs it, one key and length for all its values."""
        if not field.is_packed:
            raise TypeError(f"no serializer for the unpacked repeated field {field.full_name}")
        tag = f"F{field.number}"
        constants[tag] = _key(field.number, _LENGTH_DELIMITED)
        if field.type == FieldDescriptor.TYPE_BOOL:
            body = "bytes(xs)"  # True and False are the one-byte varints 1 and 0
        elif field.type == FieldDescriptor.TYPE_ENUM:
            constants[f"E{field.number}"] = dict(self._enum_numbers(_enum_type(item, field)))
            body = f"packed([E{field.number}[x] for x in xs])"
        elif field.type in _UNSIGNED:
            body = "packed(xs)"
        elif field.type in _INTEGERS:
            body = f"packed([{_integer_expression(field, 'x', constants)} for x in xs])"
        else:
            raise TypeError(f"no serializer for the repeated field {field.full_name}")
        return [
            f"    xs = {read}",
            "    if xs:",
            f"        body = {body}",
            f"        out += {tag}",
            *_write_varint("len(body)"),
            "        out += body",
        ]

    def _card_fields(
        self, card: type[Card], field: FieldDescriptor, key: bytes
    ) -> dict[Card, bytes]:
        message = field.message_type
        assert message is not None  # a message field's
        hints = get_type_hints(card)
        suits = self._enum_numbers(_enum_type(hints["suit"], field))
        ranks = self._enum_numbers(_enum_type(hints["rank"], field))
        suit_key = _key(message.fields_by_name["suit"].number, _VARINT)
        rank_key = _key(message.fields_by_name["rank"].number, _VARINT)
        fields = {}
        for each in card.DECK:
            body = suit_key + varint(suits[each.suit]) + rank_key + varint(ranks[each.rank])
            fields[each] = key + varint(len(body)) + body
        return fields


def _enum_type(annotation: object, field: FieldDescriptor) -> type[Enum]:
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return annotation
    raise TypeError(f"no serializer for {field.full_name} from {annotation!r}")


def _write_varint(expression: str) -> list[str]:
    """The lines appending the varint of a non-negative ``expression`` (a length, an unsigned
    or zigzagged integer): most are small, and their bytes are written once, in ``V``."""
    return [f"        n = {expression}", "        out += V[n] if 0 <= n < SMALL else varint(n)"]


def _integer_expression(field: FieldDescriptor, name: str, constants: dict[str, object]) -> str:
    """The expression of the varint ``field`` writes for the integer ``name``."""
    if field.type in _UNSIGNED:
        return name
    if field.type in _SIGNED:
        constants["signed"] = _signed
        return f"signed({name})"
    constants["zigzag"] = _zigzag
    return f"zigzag({name})"
