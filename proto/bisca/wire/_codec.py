"""Engine values <-> protobuf messages: one reflective mechanism for every game.

Each game's ``.proto`` mirrors its engine module: a dataclass ``X`` is the message ``X`` with the
same field names (the observation is the message ``Observation``); an enum ``E`` is the
proto enum ``E`` whose values are ``E_MEMBER`` (0 is
``E_UNSPECIFIED`` and never used); a card is the message ``Card {suit, rank}``; ``T | None``
is an ``optional`` field; a tuple is a ``repeated`` field; a union of dataclasses (the actions,
the events) is a wrapper message with one ``oneof`` whose fields are the snake_case class
names.  The converters are compiled once per type from the dataclasses' type hints, so adding a
field to the engine and to the ``.proto`` is all a change takes — and ``tests/wire/test_codec.py``
fails when the two disagree.

Decoding is where untrusted input enters: anything that does not map back onto an engine
value raises :class:`bisca.engine.MalformedActionError` with what was wrong.
"""

from __future__ import annotations

import dataclasses
import hashlib
import types
from collections.abc import Callable, Sequence
from enum import Enum
from functools import cache
from typing import (
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from google.protobuf.message import Message

from bisca.engine import (
    GAMES,
    Action,
    Card,
    Event,
    MalformedActionError,
    Observation,
    Settings,
    settings_from_mapping,
)
from bisca.engine import belote as belote_engine
from bisca.engine import bestia as bestia_engine
from bisca.v1 import arena_pb2, belote_pb2, bestia_pb2

from ._compiled import SerializerCompiler
from ._hints import Annotation, snake_case
from ._hints import union_arms as _union_arms

#: A protobuf field's value as Python writes and reads it: a scalar, a message, or a repeated
#: field of them.
FieldValue: TypeAlias = "int | str | bool | Message | Sequence[FieldValue]"
#: An engine value (a dataclass, an enum member, a card, a scalar) to the field value of it.
#: Each converter is compiled for one annotation, so it is handed only values of that type.
Encoder = Callable[[object], FieldValue]
#: A field value back to the engine value of it (the converter's annotation says which).
Decoder = Callable[[FieldValue], object]
#: Encoded engine values kept per codec before the memo starts afresh.
_MEMO_LIMIT = 50_000

#: A message class called with fields named at run time (from the engine's type hints, or
#: the game), which its generated signature cannot check.
MessageT = TypeVar("MessageT", bound=Message)
Construct = Callable[..., MessageT]

# Every converter is compiled for one annotation and only ever handed values of it, so each
# is written with its own precise parameter type and typed as an Encoder or a Decoder once,
# when it is compiled (a ``cast`` there costs nothing per value).


class _CardMessage(Protocol):
    """A game's ``Card`` message."""

    suit: int
    rank: int


class GameCodec:
    """The converters of one game, between its engine values and its protobuf module:
    ``encode_action`` / ``decode_action``, ``encode_event`` / ``decode_event``,
    ``encode_observation`` / ``decode_observation`` (compiled once, in ``__init__``) and
    ``encode_settings`` / ``decode_settings``; and ``serialize_action``, ``serialize_event``,
    ``serialize_observation``: the bytes of the messages the ``encode_`` ones build, written
    directly by serializers compiled once per type (``_compiled.py``)."""

    def __init__(
        self,
        *,
        game: str,
        module: types.ModuleType,
        card_type: type[Card],
        action_type: Annotation,
        event_type: Annotation,
        observation_type: type,
        settings_type: type[Settings],
    ) -> None:
        self.game = game
        self.module = module
        self.settings_type = settings_type
        self._cards_by_key: dict[tuple[object, object], Card] = {
            (card.suit, card.rank): card for card in card_type.DECK
        }
        self._card_type = card_type
        self._memo: dict[int, tuple[object, FieldValue]] = {}
        # The observation is the message ``Observation`` whatever the engine calls it.
        self._message_names: dict[type, str] = {observation_type: "Observation"}
        # The converters of the wrapper messages, typed as what their annotations say.
        encode, decode = self._union_codec(action_type, "Action")
        self.encode_action = cast(Callable[[Action], Message], encode)
        self.decode_action = cast(Callable[[Message], Action], decode)
        encode, decode = self._union_codec(event_type, "Event")
        self.encode_event = cast(Callable[[Event], Message], encode)
        self.decode_event = cast(Callable[[Message], Event], decode)
        encode = self._message_encoder(observation_type)
        decode = self._message_decoder(observation_type)
        self.encode_observation = cast(Callable[[Observation], Message], encode)
        self.decode_observation = cast(Callable[[Message], Observation], decode)
        # The same values as bytes, without message objects (the referee's hot path).
        compiler = SerializerCompiler(
            module=module, message_names=self._message_names, enum_numbers=self._enum_numbers
        )
        serialize = compiler.union(_union_arms(action_type) or (action_type,), "Action")
        self.serialize_action = cast(Callable[[Action], bytes], serialize)
        serialize = compiler.union(_union_arms(event_type) or (event_type,), "Event")
        self.serialize_event = cast(Callable[[Event], bytes], serialize)
        serialize = compiler.message(observation_type)
        self.serialize_observation = cast(Callable[[Observation], bytes], serialize)

    # ---- public ---------------------------------------------------------------------------

    def encode_settings(self, settings: Settings) -> Message:
        values: dict[str, FieldValue] = {
            field.name: getattr(settings, field.name)
            for field in dataclasses.fields(settings)
            if getattr(settings, field.name) is not None
        }
        construct: Construct[Message] = self.module.Settings
        return construct(**values)

    def decode_settings(self, message: Message) -> Settings:
        """Settings from a message; absent fields take the engine's defaults."""
        present = {field.name: value for field, value in message.ListFields()}
        return settings_from_mapping(self.settings_type, present)

    # ---- compiling converters -------------------------------------------------------------

    def _union_codec(self, union: Annotation, wrapper_name: str) -> tuple[Encoder, Decoder]:
        wrapper: type[Message] = getattr(self.module, wrapper_name)
        construct: Construct[Message] = wrapper
        oneof = wrapper_name.lower()
        arms = _union_arms(union) or (union,)
        encoders: dict[type, tuple[str, Encoder]] = {}
        decoders: dict[str, Decoder] = {}
        for arm in arms:
            if not isinstance(arm, type):
                raise TypeError(f"no protobuf mapping for the {wrapper_name} arm {arm!r}")
            field = snake_case(arm.__name__)
            if field not in wrapper.DESCRIPTOR.fields_by_name:
                raise TypeError(f"{wrapper.DESCRIPTOR.full_name} has no field {field}")
            encoders[arm] = (field, self._message_encoder(arm))
            decoders[field] = self._message_decoder(arm)

        def encode(value: object) -> FieldValue:
            try:
                field, encoder = encoders[type(value)]
            except KeyError:
                raise MalformedActionError(
                    f"{type(value).__name__} is not a {self.game} {wrapper_name.lower()}"
                ) from None
            return construct(**{field: encoder(value)})

        def decode(message: Message) -> object:
            if not isinstance(message, wrapper):
                raise MalformedActionError(
                    f"expected a {wrapper.DESCRIPTOR.full_name}, got {type(message).__name__}"
                )
            which = message.WhichOneof(oneof)
            if which is None:
                raise MalformedActionError(f"empty {wrapper.DESCRIPTOR.full_name}")
            return decoders[which](getattr(message, which))

        return encode, cast(Decoder, decode)

    def _message_encoder(self, kind: type) -> Encoder:
        message_type: type[Message] = getattr(
            self.module, self._message_names.get(kind, kind.__name__)
        )
        construct: Construct[Message] = message_type
        hints = get_type_hints(kind)
        fields = [
            (field.name, self._encoder(hints[field.name])) for field in dataclasses.fields(kind)
        ]
        for name, _ in fields:
            if name not in message_type.DESCRIPTOR.fields_by_name:
                raise TypeError(f"{message_type.DESCRIPTOR.full_name} has no field {name}")

        def build(value: object) -> FieldValue:
            values: dict[str, FieldValue] = {}
            for name, encoder in fields:
                item = getattr(value, name)
                if item is not None:
                    values[name] = encoder(item)
            return construct(**values)

        if kind in self._message_names:  # the observation: a new value every time
            return build
        memo = self._memo

        def encode(value: object) -> FieldValue:
            # Engine values are frozen and mostly shared between observations (past tricks,
            # bids, results), so their messages are kept, keyed by identity.  The memo holds
            # the value too, so an id is never reused while its entry lives.
            known = memo.get(id(value))
            if known is not None and known[0] is value:
                return known[1]
            message = build(value)
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[id(value)] = (value, message)
            return message

        return encode

    def _message_decoder(self, kind: type) -> Decoder:
        hints = get_type_hints(kind)
        fields = []
        for field in dataclasses.fields(kind):
            annotation = hints[field.name]
            arms = _union_arms(annotation)
            optional = arms is not None and type(None) in arms
            fields.append((field.name, optional, self._decoder(annotation)))

        def decode(message: Message) -> object:
            values: dict[str, object] = {}
            for name, optional, decoder in fields:
                if optional and not message.HasField(name):
                    values[name] = None
                else:
                    values[name] = decoder(getattr(message, name))
            return kind(**values)

        return cast(Decoder, decode)

    def _encoder(self, annotation: Annotation) -> Encoder:
        arms = _union_arms(annotation)
        if arms is not None:
            present = [arm for arm in arms if arm is not type(None)]
            if len(present) != 1:
                raise TypeError(f"no protobuf mapping for the field type {annotation!r}")
            return self._encoder(present[0])
        if get_origin(annotation) is tuple:
            item = self._encoder(get_args(annotation)[0])

            def encode_items(values: tuple[object, ...]) -> FieldValue:
                return [item(value) for value in values]

            return cast(Encoder, encode_items)
        if isinstance(annotation, type) and issubclass(annotation, Card):
            card_message: Construct[Message] = self.module.Card
            suit = self._enum_encoder(get_type_hints(annotation)["suit"])
            rank = self._enum_encoder(get_type_hints(annotation)["rank"])
            messages: dict[object, FieldValue] = {
                card: card_message(suit=suit(card.suit), rank=rank(card.rank))
                for card in annotation.DECK
            }
            return messages.__getitem__
        if isinstance(annotation, type) and issubclass(annotation, Enum):
            return self._enum_encoder(annotation)
        if dataclasses.is_dataclass(annotation):
            return self._message_encoder(annotation)  # type: ignore[arg-type]
        if annotation in (int, bool, str) or get_origin(annotation) is Literal:
            return cast(Encoder, _identity)
        raise TypeError(f"no protobuf mapping for {annotation!r}")

    def _decoder(self, annotation: Annotation) -> Decoder:
        arms = _union_arms(annotation)
        if arms is not None:
            present = [arm for arm in arms if arm is not type(None)]
            if len(present) != 1:
                raise TypeError(f"no protobuf mapping for the field type {annotation!r}")
            return self._decoder(present[0])
        if get_origin(annotation) is tuple:
            item = self._decoder(get_args(annotation)[0])

            def decode_items(values: Sequence[FieldValue]) -> object:
                return tuple(item(value) for value in values)

            return cast(Decoder, decode_items)
        if isinstance(annotation, type) and issubclass(annotation, Card):
            suit = self._enum_decoder(get_type_hints(annotation)["suit"])
            rank = self._enum_decoder(get_type_hints(annotation)["rank"])
            cards = self._cards_by_key

            def decode_card(message: _CardMessage) -> object:
                key = (suit(message.suit), rank(message.rank))
                try:
                    return cards[key]
                except KeyError:  # pragma: no cover - every suit and rank pair is a card
                    raise MalformedActionError(f"no such {self.game} card {key}") from None

            return cast(Decoder, decode_card)
        if isinstance(annotation, type) and issubclass(annotation, Enum):
            return self._enum_decoder(annotation)
        if dataclasses.is_dataclass(annotation):
            return self._message_decoder(annotation)  # type: ignore[arg-type]
        if annotation in (int, bool, str) or get_origin(annotation) is Literal:
            return cast(Decoder, _identity)
        raise TypeError(f"no protobuf mapping for {annotation!r}")

    def _enum_numbers(self, kind: type[Enum]) -> dict[Enum, int]:
        descriptor = self.module.DESCRIPTOR.enum_types_by_name.get(kind.__name__)
        if descriptor is None:
            raise TypeError(f"{self.module.DESCRIPTOR.package} has no enum {kind.__name__}")
        prefix = snake_case(kind.__name__).upper()
        numbers = {}
        for member in kind:
            value = descriptor.values_by_name.get(f"{prefix}_{member.name}")
            if value is None:
                raise TypeError(f"enum {kind.__name__} has no value {prefix}_{member.name}")
            numbers[member] = value.number
        return numbers

    def _enum_encoder(self, kind: type[Enum]) -> Encoder:
        numbers: dict[object, FieldValue] = {
            member: number for member, number in self._enum_numbers(kind).items()
        }
        return numbers.__getitem__

    def _enum_decoder(self, kind: type[Enum]) -> Decoder:
        members = {number: member for member, number in self._enum_numbers(kind).items()}
        name = kind.__name__

        def decode(number: int) -> object:
            try:
                return members[number]
            except KeyError:
                raise MalformedActionError(
                    f"{number} is not a {self.game} {name} (expected one of "
                    f"{', '.join(str(n) for n in sorted(members))})"
                ) from None

        return cast(Decoder, decode)


def _identity(value: int | str | bool) -> int | str | bool:
    """An int, bool or str field's converter both ways: its engine value is its value."""
    return value


# --------------------------------------------------------------------------------------------
# Every game, and the arena-level wrappers


#: Each game's protobuf module and engine package (whose names the codec follows).
_GAME_MODULES: dict[str, tuple[types.ModuleType, types.ModuleType]] = {
    "belote": (belote_pb2, belote_engine),
    "bestia": (bestia_pb2, bestia_engine),
}


# The arena's wrappers, whose one field per game is named by the game at run time.
_GAME_ACTION: Construct[arena_pb2.GameAction] = arena_pb2.GameAction
_GAME_EVENT: Construct[arena_pb2.GameEvent] = arena_pb2.GameEvent
_GAME_OBSERVATION: Construct[arena_pb2.GameObservation] = arena_pb2.GameObservation
_GAME_SETTINGS: Construct[arena_pb2.GameSettings] = arena_pb2.GameSettings


@cache
def codec(game: str) -> GameCodec:
    """The codec of the game named ``game``."""
    try:
        module, engine = _GAME_MODULES[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(GAMES))}") from None
    prefix = game.capitalize()
    return GameCodec(
        game=game,
        module=module,
        card_type=getattr(engine, f"{prefix}Card"),
        action_type=getattr(engine, f"{prefix}Action"),
        event_type=getattr(engine, f"{prefix}Event"),
        observation_type=getattr(engine, f"{prefix}Observation"),
        settings_type=getattr(engine, f"{prefix}Settings"),
    )


def game_enum(game: str) -> arena_pb2.Game:
    """The ``bisca.v1.Game`` number of a game name."""
    number: arena_pb2.Game = arena_pb2.Game.Value(f"GAME_{game.upper()}")  # type: ignore[assignment]
    return number


def game_name(number: int) -> str:
    """The game name of a ``bisca.v1.Game`` number (``ValueError`` for unknown ones)."""
    try:
        name: str = arena_pb2.Game.Name(number)
    except ValueError:
        raise ValueError(f"unknown game number {number}") from None
    game = name.removeprefix("GAME_").lower()
    if game not in GAMES:
        raise ValueError(f"unknown game {name}")
    return game


def deal_commitment(salt: bytes, seed: int, match_id: str) -> bytes:
    """SHA-256(salt || seed as 8 bytes big-endian || match id in UTF-8): what ``MatchStarted``
    commits the deal to before the first card, and what ``MatchEnded``'s salt and seed must
    hash to."""
    return hashlib.sha256(salt + seed.to_bytes(8, "big") + match_id.encode()).digest()


def encode_game_action(game: str, action: Action) -> arena_pb2.GameAction:
    return _GAME_ACTION(**{game: codec(game).encode_action(action)})


def decode_game_action(game: str, message: arena_pb2.GameAction) -> Action:
    """The engine action in a ``GameAction`` of ``game`` (``MalformedActionError`` if none)."""
    which = message.WhichOneof("game")
    if which is None:
        raise MalformedActionError("the reply carries no action")
    if which != game:
        raise MalformedActionError(f"a {which} action was sent to a {game} match")
    return codec(game).decode_action(getattr(message, which))


def encode_game_event(game: str, index: int, event: Event) -> arena_pb2.GameEvent:
    return _GAME_EVENT(index=index, **{game: codec(game).encode_event(event)})


def decode_game_event(message: arena_pb2.GameEvent) -> tuple[str, Event]:
    which = message.WhichOneof("game")
    if which is None:
        raise MalformedActionError("empty GameEvent")
    return which, codec(which).decode_event(getattr(message, which))


def encode_game_observation(game: str, observation: Observation) -> arena_pb2.GameObservation:
    encoded = codec(game).encode_observation(observation)
    return _GAME_OBSERVATION(**{game: encoded})


def decode_game_observation(message: arena_pb2.GameObservation) -> tuple[str, Observation]:
    which = message.WhichOneof("game")
    if which is None:
        raise MalformedActionError("empty GameObservation")
    return which, codec(which).decode_observation(getattr(message, which))


def encode_game_settings(game: str, settings: Settings) -> arena_pb2.GameSettings:
    return _GAME_SETTINGS(**{game: codec(game).encode_settings(settings)})


def decode_game_settings(game: str, message: arena_pb2.GameSettings | None) -> Settings:
    """Settings of ``game`` from a ``GameSettings`` (absent: the defaults)."""
    if message is None or message.WhichOneof("game") is None:
        defaults: Settings = GAMES[game].settings({})
        return defaults
    which = message.WhichOneof("game")
    if which != game:
        raise ValueError(f"{which} settings were given for a {game} match")
    return codec(game).decode_settings(getattr(message, which))
