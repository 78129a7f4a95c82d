"""Capture real protocol messages for ``docs/bot-guide.md``.

    .venv/bin/python docs/capture_messages.py [--seed 7] > /tmp/messages.txt

Plays two local matches with ``bisca match`` (a real in-process server, bots as processes):
Belote (1 deal) and Bestia (4 seats, 1 round).  Seat 0 is this script in recording mode, the
other seats are the sample ``greedy`` bots.  The recording bot speaks raw protobuf through the
generated stubs, answers with random legal actions and, on purpose, in the Belote match:

* first tries a wrong token on another connection (a fatal ``Error``);
* answers its first card-play request with a card it does not hold (``ActionRejected``, then
  the same request again with ``attempt`` 2);
* answers a request that is already closed (a non-fatal ``Error``);
* after 6 answers, drops its connection instead of answering and connects again with its
  token (``MatchStarted`` with ``resumed``, the seat's whole event history, the open request
  again).

Every message, both ways, is recorded; this script then prints a selection as JSON
(protobuf's JSON mapping with the ``.proto`` field names; fields at their default value are
printed too, as ``docs/bot-guide.md`` shows them).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc, belote_pb2

RECONNECT_AFTER = 6
Record = dict[str, Any]


# ---- recording mode: the bot ---------------------------------------------------------------


class Recorder:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, connection: str, direction: str, message: Message) -> None:
        line = {
            "connection": connection,
            "direction": direction,
            "message": as_dict(message),
        }
        with self.path.open("a") as file:
            file.write(json.dumps(line) + "\n")


def as_dict(message: Message) -> dict[str, Any]:
    """protobuf's JSON mapping with the .proto field names, every field that has no presence
    shown (0, "", [] included), 64-bit numbers unquoted, keys in field order."""
    value = json_format.MessageToDict(
        message,
        always_print_fields_with_no_presence=True,
        preserving_proto_field_name=True,
        unquote_int64_if_possible=True,
    )
    return _in_field_order(message.DESCRIPTOR, value)


def _in_field_order(descriptor: Any, value: dict[str, Any]) -> dict[str, Any]:
    ordered = {}
    for field in descriptor.fields:
        if field.name not in value:
            continue
        item = value[field.name]
        if field.message_type is not None:
            if field.is_repeated:
                item = [_in_field_order(field.message_type, element) for element in item]
            else:
                item = _in_field_order(field.message_type, item)
        ordered[field.name] = item
    return ordered


def _hello(token: str) -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(
            token=token,
            bot_name="recorder",
            bot_version="1",
            protocol_version=pb.PROTOCOL_VERSION_CURRENT,
            games=[pb.GAME_BELOTE, pb.GAME_BESTIA],
            # The guide shows the EventBatch messages of live events; by default the same
            # events are the `events` of the requests and of the end.
            live_events=True,
        )
    )


def _reply(request_id: str, action: pb.GameAction) -> pb.BotMessage:
    return pb.BotMessage(action=pb.ActionReply(request_id=request_id, action=action))


def _illegal(request: pb.ActionRequest) -> pb.GameAction:
    """Playing a card the seat does not hold: well formed, not legal."""
    game = request.observation.WhichOneof("game")
    module = __import__(f"bisca.v1.{game}_pb2", fromlist=["Card"])
    hand = {card.SerializeToString() for card in getattr(request.observation, game).hand}
    for suit in range(1, 5):
        for rank in range(1, 9):
            card = module.Card(suit=suit, rank=rank)
            if card.SerializeToString() not in hand:
                action = module.Action(play_card=module.PlayCard(card=card))
                return pb.GameAction(**{game: action})
    raise AssertionError("the seat holds every card")


class _Outbox:
    def __init__(self, connection: str, record: Recorder) -> None:
        self.connection = connection
        self.record = record
        self.queue: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()

    def put(self, message: pb.BotMessage) -> None:
        self.record(self.connection, "sent", message)
        self.queue.put(message)

    def close(self) -> None:
        self.queue.put(None)

    def __iter__(self) -> Iterator[pb.BotMessage]:
        while (message := self.queue.get()) is not None:
            yield message


def _stream(address: str, outbox: _Outbox) -> tuple[grpc.Channel, Iterator[pb.ServerMessage]]:
    channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
    stub_type: Any = arena_pb2_grpc.ArenaStub  # generated code carries no annotations
    return channel, stub_type(channel).Play(iter(outbox))


def record_bot(path: Path, game: str, seed: int) -> None:
    address, token = os.environ["BISCA_ADDRESS"], os.environ["BISCA_TOKEN"]
    record = Recorder(path)
    rng = random.Random(seed)
    tricky = game == "belote"
    if tricky:  # a wrong token on a connection of its own: a fatal error, then the end
        outbox = _Outbox("wrong-token", record)
        outbox.put(_hello("bisca_not-a-token"))
        channel, responses = _stream(address, outbox)
        for message in responses:
            record("wrong-token", "received", message)
        outbox.close()
        channel.close()
    answers = 0
    illegal_sent = stale_sent = False
    previous: pb.ActionRequest | None = None
    for connection in ("first", "second"):
        outbox = _Outbox(connection, record)
        outbox.put(_hello(token))
        channel, responses = _stream(address, outbox)
        reconnect = False
        for message in responses:
            record(connection, "received", message)
            if message.WhichOneof("kind") != "action_request":
                continue
            request = message.action_request
            if tricky and connection == "first" and answers == RECONNECT_AFTER:
                reconnect = True  # leave this request open: the server sends it again
                break
            playing = tricky and request.observation.belote.phase == belote_pb2.PHASE_PLAYING
            if playing and not illegal_sent:
                illegal_sent = True
                outbox.put(_reply(request.request_id, _illegal(request)))
                continue  # the rejection is followed by the same request, attempt 2
            if tricky and illegal_sent and not stale_sent and previous is not None:
                stale_sent = True  # the previous request is closed by now
                outbox.put(_reply(previous.request_id, previous.legal_actions[0]))
            outbox.put(_reply(request.request_id, rng.choice(request.legal_actions)))
            previous = request
            answers += 1
        outbox.close()
        channel.close()
        if not reconnect:
            return


# ---- driver mode: play the matches, print a selection ---------------------------------------


def play_match(game: str, seed: int, tmp: Path) -> list[Record]:
    path = tmp / f"{game}.jsonl"
    me = f"{sys.executable} {Path(__file__).resolve()} --record {path} --game {game}"
    others = 3
    settings = ["--deals", "1"] if game == "belote" else ["--rounds", "1"]
    command = [sys.executable, "-m", "bisca.server.cli", "match", "--game", game, *settings]
    # Unsandboxed: the recording bot is this script, trusted, and it writes its records into
    # ``tmp``, a folder of the host that a sandboxed bot (with a /tmp of its own) cannot see.
    command += ["--seed", str(seed), "--data", str(tmp / "data"), "--no-sandbox", "--bot", me]
    for _ in range(others):
        command += ["--bot", "greedy"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    print(f"# bisca match --game {game} ... (exit {done.returncode})", file=sys.stderr)
    print(done.stdout, file=sys.stderr)
    if done.returncode != 0:
        for log in sorted((tmp / "data" / "matches").glob("*/seat*.stderr.log")):
            print(f"--- {log.name}\n{log.read_text()[-2000:]}", file=sys.stderr)
        raise SystemExit(done.stderr)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _show(title: str, record: Record | None) -> None:
    print(f"### {title}")
    if record is None:
        print("(none captured)\n")
        return
    print(f"({record['direction']} on connection {record['connection']})")
    print(compact_json(record["message"]))
    print()


def compact_json(value: Any, indent: str = "", width: int = 96) -> str:
    """JSON indented by 2, with every object or list that fits in ``width`` on one line."""
    flat = json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
    if len(indent) + len(flat) <= width or not isinstance(value, dict | list) or not value:
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(k)}: {compact_json(v, inner, width)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [inner + compact_json(v, inner, width) for v in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


def _first(records: list[Record], kind: str, **where: Any) -> Record | None:
    for record in records:
        body = record["message"].get(kind)
        if body is None:
            continue
        if all(_get(record, key) == value for key, value in where.items()):
            return record
    return None


def _get(record: Record, key: str) -> Any:
    value: Any = record
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def print_belote(records: list[Record]) -> None:
    first = [r for r in records if r["connection"] == "first"]
    second = [r for r in records if r["connection"] == "second"]
    _show("Hello", _first(first, "hello"))
    _show("Welcome", _first(first, "welcome"))
    _show("Error: wrong token", _first(records, "error", connection="wrong-token"))
    _show("MatchStarted", _first(first, "match_started"))
    _show("EventBatch (the first)", _first(first, "events"))
    request = _first(
        first,
        "action_request",
        **{"message.action_request.observation.belote.phase": "PHASE_BIDDING_ROUND_1"},
    )
    _show("ActionRequest (bidding)", request)
    if request is not None:
        request_id = request["message"]["action_request"]["request_id"]
        _show("ActionReply", _first(first, "action", **{"message.action.request_id": request_id}))
    rejected = _first(first, "action_rejected")
    if rejected is not None:
        request_id = rejected["message"]["action_rejected"]["request_id"]
        tried = [
            r
            for r in first
            if r["direction"] == "sent" and _get(r, "message.action.request_id") == request_id
        ]
        asked = [r for r in first if _get(r, "message.action_request.request_id") == request_id]
        _show("ActionRequest (card play, attempt 1)", asked[0] if asked else None)
        _show("ActionReply (a card it does not hold)", tried[0] if tried else None)
        _show("ActionRejected", rejected)
        _show("ActionRequest again (attempt 2)", asked[1] if len(asked) > 1 else None)
        _show("ActionReply (corrected)", tried[1] if len(tried) > 1 else None)
    _show("Error: a reply to a closed request", _first(first, "error"))
    _show("MatchStarted after reconnecting", _first(second, "match_started"))
    _show("EventBatch after reconnecting (the history)", _first(second, "events"))
    _show("ActionRequest after reconnecting", _first(second, "action_request"))
    _show("MatchEnded", _first(records, "match_ended"))


def print_bestia(records: list[Record]) -> None:
    _show("Bestia MatchStarted", _first(records, "match_started"))
    _show("Bestia EventBatch (the first)", _first(records, "events"))
    _show("Bestia ActionRequest (first)", _first(records, "action_request"))
    exchange = _first(
        records,
        "action_request",
        **{"message.action_request.observation.bestia.phase": "PHASE_EXCHANGE"},
    )
    _show("Bestia ActionRequest (exchange)", exchange)
    _show("Bestia MatchEnded", _first(records, "match_ended"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7, help="seed of both matches")
    parser.add_argument("--record", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--game", default="belote", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.record is not None:
        record_bot(args.record, args.game, args.seed)
        return
    with tempfile.TemporaryDirectory(prefix="bisca-capture-") as tmp:
        print_belote(play_match("belote", args.seed, Path(tmp)))
        print_bestia(play_match("bestia", args.seed, Path(tmp)))


if __name__ == "__main__":
    main()
