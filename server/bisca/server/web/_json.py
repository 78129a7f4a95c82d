"""JSON at the web's edges: protobuf's canonical JSON mapping of the ``bisca.v1`` messages, and
the one error shape every bad request gets.

There is no second schema: a message goes out as ``json_format``'s mapping of it (field names
in lowerCamelCase, enums by name, 64-bit integers as strings), with the fields at their default
values written out too, so a page never has to know a default; a request body is parsed with
the same mapping and refused, naming the field, when it is not the message it should be.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import TypeVar

from aiohttp import web
from google.protobuf import json_format
from google.protobuf.message import Message

from bisca.server.edge import operator
from bisca.server.errors import OperatorError

M = TypeVar("M", bound=Message)

JsonObject = dict[str, object]


class Problem(Exception):
    """A request the web cannot serve, with its HTTP status (4xx, or 503 while what it needs
    is not there: ``retry_after_s`` says how soon to ask again) and a sentence for people."""

    def __init__(self, status: int, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after_s = retry_after_s


#: The HTTP status of each gRPC status an operator or spectator call may be refused with.
_HTTP_STATUS_OF = {
    "INVALID_ARGUMENT": 400,
    "NOT_FOUND": 404,
    "FAILED_PRECONDITION": 409,
    "PERMISSION_DENIED": 403,
    "UNAUTHENTICATED": 401,
    "UNAVAILABLE": 503,
    # Too many watchers at once (``edge/_spectator.py``): to be asked again later.
    "RESOURCE_EXHAUSTED": 429,
}


def problem_of(refused: OperatorError) -> Problem:
    """An operator or spectator call's refusal, as the web answers it (UNAVAILABLE: the store
    is lost, with the wait before trying again)."""
    status = _HTTP_STATUS_OF.get(refused.status, 400)
    retry_after_s = operator.STORE_RETRY_S if refused.status == "UNAVAILABLE" else None
    return Problem(status, refused.message, retry_after_s)


def body_cut_short() -> Problem:
    """What a request whose sender went away before its body's end is answered (nobody reads
    it; raised, it ends the request quietly instead of with a logged traceback)."""
    return Problem(400, "the request's body ended before its length: its sender went away")


def to_json(message: Message) -> JsonObject:
    """``message`` in protobuf's canonical JSON mapping, default values included."""
    return json_format.MessageToDict(message, always_print_fields_with_no_presence=True)


def from_json(value: object, message_type: type[M], what: str) -> M:
    """Parse canonical JSON into a ``message_type``; :class:`Problem` 400 naming ``what`` and
    the field when it is not one."""
    if not isinstance(value, Mapping):
        raise Problem(400, f"{what}: expected a JSON object ({message_type.DESCRIPTOR.full_name})")
    message = message_type()
    try:
        json_format.ParseDict(dict(value), message)
    except json_format.ParseError as problem:
        raise Problem(
            400, f"{what}: not a {message_type.DESCRIPTOR.full_name}: {problem}"
        ) from None
    return message


async def request_json(request: web.Request, what: str) -> JsonObject:
    """A request's body as a JSON object (:func:`parse_body`).  JSON is UTF-8 (RFC 8259):
    bytes that are not, or a charset that is not, are the sender's error, named (400, 415),
    never a decoding error of the server's (review 38: ``charset=nope`` and a ``\\xff``
    body were 500s)."""
    charset = request.charset
    if charset is not None and charset.lower() not in ("utf-8", "utf8"):
        raise Problem(415, f"{what}: JSON is UTF-8, not charset={charset[:40]!r}")
    try:
        body = await request.read()
    except ConnectionError:
        raise body_cut_short() from None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise Problem(400, f"{what}: not UTF-8 (byte {problem.start} of the body)") from None
    return parse_body(text, what)


def parse_body(text: str, what: str) -> JsonObject:
    """A request's JSON text as an object (:class:`Problem` 400 when it is not one, is
    nested deeper than the parser goes: a stranger's kilobytes of ``[``, holds an integer
    longer than Python converts, or a string that is not text)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as problem:
        raise Problem(400, f"{what}: not JSON: {problem.msg} at character {problem.pos}") from None
    except RecursionError:
        raise Problem(400, f"{what}: JSON nested too deeply") from None
    except ValueError:  # not a JSONDecodeError: an integer past Python's conversion limit
        digits = sys.get_int_max_str_digits()
        raise Problem(400, f"{what}: a number of more than {digits} digits") from None
    if not isinstance(value, dict):
        raise Problem(400, f"{what}: expected a JSON object")
    _check_text(value, what)
    return value


def _check_text(value: object, what: str) -> None:
    """Every string of ``value``, its keys too, is text: ``"\\ud800"`` is valid JSON but
    half of a UTF-16 surrogate pair, no character, which nothing downstream can encode (a
    password's hash, the store).  Walked without recursion: ``value`` may be as deep as the
    parser went."""
    left = [value]
    while left:
        item = left.pop()
        if isinstance(item, dict):
            left.extend(item)
            left.extend(item.values())
        elif isinstance(item, list):
            left.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as problem:
                lone = f"\\u{ord(item[problem.start]):04x}"
                raise Problem(
                    400,
                    f"{what}: a string holds {lone}, half of a UTF-16 surrogate pair: not a "
                    "character",
                ) from None
