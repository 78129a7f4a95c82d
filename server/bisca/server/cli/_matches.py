"""``bisca matches list|show|create``: the operator's view of a running server's matches.

Each is one call of the Arena service with the admin token (``ListMatches``, ``GetMatch``,
``CreateMatch``), so anything these commands do, a script may do with grpcurl or the stubs.
``--json`` prints the reply in protobuf's canonical JSON, the same mapping the browser API
uses.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from rich import box
from rich.table import Table

from bisca import wire
from bisca.engine import GAMES, EngineError
from bisca.server.league import merged_settings
from bisca.server.logs import fields_text, status_text
from bisca.server.records import MAX_SEED, game_places
from bisca.server.referee import MAX_JOIN_TIMEOUT_S, clock_message, clock_settings
from bisca.server.store import text_lines
from bisca.v1 import arena_pb2 as pb

from ._arena_args import set_settings, setting
from ._args import Commands, bisca_command, handle, whole
from ._remote import Role, add_server_options, arena_stub, bearer, read_token

#: How often ``create --wait`` asks how the match is going.
POLL_S = 0.5
_FINAL = frozenset({pb.MATCH_STATUS_FINISHED, pb.MATCH_STATUS_FAILED})


def add_commands(commands: Commands) -> None:
    matches = commands.add_parser("matches", help="list, show or create a server's matches")
    actions = matches.add_subparsers(dest="matches_command", required=True, metavar="ACTION")

    listing = actions.add_parser("list", help="the newest matches (and the league's queue)")
    listing.add_argument(
        "--status",
        choices=[status_text(number) for number in pb.MatchStatus.values() if number],
        help="only matches in this state",
    )
    listing.add_argument("--limit", type=whole(1), default=20, help="at most this many (20)")

    show = actions.add_parser("show", help="one match, with its result")
    show.add_argument("match_id", metavar="MATCH_ID")

    create = actions.add_parser("create", help="start a match between registered bots")
    create.add_argument("--game", required=True, choices=sorted(GAMES))
    create.add_argument(
        "--bot",
        action="append",
        required=True,
        metavar="NAME",
        help="a registered bot, one per seat in seat order",
    )
    create.add_argument(
        "--seed", type=whole(0, MAX_SEED), help="the deal's seed (random when absent)"
    )
    create.add_argument(
        "--set",
        type=setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game setting (repeatable); Bestia's seats default to the number of --bot",
    )
    create.add_argument("--move-ms", type=whole(1), help="time per move (server's default)")
    create.add_argument("--bank-ms", type=whole(0), help="time bank per seat (server's default)")
    create.add_argument("--timeout-policy", metavar="POLICY", help="default | forfeit | strikes:N")
    create.add_argument(
        "--join-timeout-s",
        type=whole(1, MAX_JOIN_TIMEOUT_S),
        help="time for the bots to connect (server's default)",
    )
    create.add_argument("--wait", action="store_true", help="wait for the match to end")

    for parser in (listing, show, create):
        add_server_options(parser, Role.ADMIN)
        parser.add_argument("--json", action="store_true", help="protobuf's canonical JSON")
        handle(parser, run_matches)


def run_matches(args: argparse.Namespace) -> int:
    try:
        request = _create_request(args) if args.matches_command == "create" else None
        token = read_token(args, Role.ADMIN)
        stub = arena_stub(args)
    except (ValueError, EngineError) as problem:
        print(f"bisca matches: {problem}", file=sys.stderr)
        return 2
    metadata = bearer(token)
    try:
        if args.matches_command == "list":
            listed = pb.ListMatchesRequest(limit=args.limit)
            if args.status:
                listed.status = pb.MatchStatus.Value(f"MATCH_STATUS_{args.status.upper()}")  # type: ignore[assignment]
            reply = stub.ListMatches(listed, metadata=metadata)
            _print(args, reply, _list_lines(reply))
            return 0
        if args.matches_command == "show":
            info = stub.GetMatch(pb.GetMatchRequest(match_id=args.match_id), metadata=metadata)
            _print(args, info, match_lines(info))
            return 0
        info = stub.CreateMatch(request, metadata=metadata)
        if args.wait:
            info = _wait(stub, info.match_id, metadata)
        lines = [f"created match {info.match_id}", *match_lines(info)]
        if not args.wait:
            lines.append(
                f"watch it: {bisca_command()} watch {info.match_id} --address {args.address}"
            )
        _print(args, info, lines)
        return 0 if not args.wait or info.status == pb.MATCH_STATUS_FINISHED else 1
    except grpc.RpcError as error:
        print(f"bisca matches: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1


def _create_request(args: argparse.Namespace) -> pb.CreateMatchRequest:
    """The request the options ask for; ``ValueError``/``EngineError`` for a bad setting or
    clock, before anything is sent."""
    values = merged_settings(set_settings(args.set))
    if args.game == "bestia" and "seats" not in values:
        values["seats"] = len(args.bot)
    settings = GAMES[args.game].settings(values)
    request = pb.CreateMatchRequest(
        game=wire.game_enum(args.game),
        settings=wire.encode_game_settings(args.game, settings),
        bots=args.bot,
    )
    if args.seed is not None:
        request.seed = args.seed
    if args.timeout_policy is not None:
        request.clock.CopyFrom(clock_message(clock_settings(1, 0, args.timeout_policy)))
        request.clock.ClearField("move_ms")
        request.clock.ClearField("bank_ms")
    if args.move_ms is not None:
        request.clock.move_ms = args.move_ms
    if args.bank_ms is not None:
        request.clock.bank_ms = args.bank_ms
    if args.join_timeout_s is not None:
        request.join_timeout_ms = args.join_timeout_s * 1000
    return request


def _wait(stub: Any, match_id: str, metadata: list[tuple[str, str]]) -> pb.MatchInfo:
    while True:
        info: pb.MatchInfo = stub.GetMatch(pb.GetMatchRequest(match_id=match_id), metadata=metadata)
        if info.status in _FINAL:
            return info
        time.sleep(POLL_S)


def _print(args: argparse.Namespace, message: Message, lines: Sequence[str]) -> None:
    if args.json:
        print(json_format.MessageToJson(message))
        return
    for line in lines:
        print(line)


def _result(info: pb.MatchInfo) -> str:
    if not info.results:
        return info.reason
    shown = game_places(wire.game_name(info.game), info.results)
    return ", ".join(
        f"{r.bot_name} {r.score} (place {place})"
        for r, place in zip(info.results, shown, strict=True)
    )


def _list_lines(reply: pb.ListMatchesResponse) -> list[str]:
    table = Table(box=box.SIMPLE_HEAD)
    for name in ("match", "game", "status", "steps", "created", "bots", "result"):
        table.add_column(name, justify="right" if name == "steps" else "left")
    for info in reply.matches:
        table.add_row(
            info.match_id,
            wire.game_name(info.game),
            status_text(info.status),
            str(info.steps),
            info.created_at,
            " ".join(info.bots),
            _result(info),
        )
    lines = text_lines(table) if reply.matches else ["no matches"]
    if reply.queue:
        lines.append("waiting for a match (league queue):")
        for queued in reply.queue:
            games = ", ".join(wire.game_name(game) for game in queued.games)
            lines.append(f"  {queued.bot_name} ({games}) since {queued.waiting_since}")
    return lines


def _seed_text(info: pb.MatchInfo) -> str:
    if info.seed_sealed:
        return "seed sealed (a match dealt from it is not over)"
    return f"seed {info.seed}"


def match_lines(info: pb.MatchInfo) -> list[str]:
    game = wire.game_name(info.game)
    settings = wire.decode_game_settings(game, info.settings)
    lines = [
        f"match {info.match_id}: {game}, {status_text(info.status)}, {info.steps} steps, "
        f"{_seed_text(info)}",
        f"settings: {fields_text(settings)}",
        f"clock: move {info.clock.move_ms} ms, bank {info.clock.bank_ms} ms, "
        f"{pb.TimeoutPolicy.Name(info.clock.policy).removeprefix('TIMEOUT_POLICY_').lower()}",
        "seats: " + ", ".join(f"{seat}={bot}" for seat, bot in enumerate(info.bots)),
    ]
    # (A match still under way is answered from the referee, which has no creation time.)
    times = [f"created {info.created_at}"] if info.created_at else []
    times += [f"finished {info.finished_at}"] if info.finished_at else []
    if times:
        lines.append(", ".join(times))
    for result, place in zip(info.results, game_places(game, info.results), strict=True):
        lines.append(
            f"  seat {result.seat} {result.bot_name}: score {result.score}, place {place}"
            + (f", forfeited: {result.forfeit_reason}" if result.forfeit_reason else "")
        )
    if info.reason:
        lines.append(f"  reason: {info.reason}")
    return lines
