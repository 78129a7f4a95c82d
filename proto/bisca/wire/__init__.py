"""The wire codec: engine values <-> the ``bisca.v1`` protobuf messages, for every game.

Both sides of the protocol use it: the referee encodes observations, actions and events with
it, the Python SDK decodes them with it, so a bot sees exactly the engine values the referee
meant.  It lives beside the generated ``bisca.v1`` code, not in the server, because the SDK
must not depend on the server.
"""

from ._codec import (
    GameCodec,
    codec,
    deal_commitment,
    decode_game_action,
    decode_game_event,
    decode_game_observation,
    decode_game_settings,
    encode_game_action,
    encode_game_event,
    encode_game_observation,
    encode_game_settings,
    game_enum,
    game_name,
)
from ._fields import field_number, length_field, repeated_field, varint, varint_field
from ._hints import snake_case
from ._log import LOG_FORMAT_VERSION, LOG_GENESIS, log_chain, log_record
from ._text import printable

__all__ = [
    "LOG_FORMAT_VERSION",
    "LOG_GENESIS",
    "GameCodec",
    "codec",
    "deal_commitment",
    "decode_game_action",
    "decode_game_event",
    "decode_game_observation",
    "decode_game_settings",
    "encode_game_action",
    "encode_game_event",
    "encode_game_observation",
    "encode_game_settings",
    "field_number",
    "game_enum",
    "game_name",
    "length_field",
    "log_chain",
    "log_record",
    "printable",
    "repeated_field",
    "snake_case",
    "varint",
    "varint_field",
]
