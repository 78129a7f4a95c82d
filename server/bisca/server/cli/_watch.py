"""``bisca watch MATCH_ID``: print a live (or finished) match as it is played."""

from __future__ import annotations

import argparse
import sys

import grpc

from bisca import wire
from bisca.server.logs import CARD_LEGENDS, event_text, fields_text, status_text
from bisca.server.records import game_places
from bisca.v1 import arena_pb2 as pb

from ._args import Commands, handle, whole
from ._remote import Role, add_server_options, arena_stub, bearer, read_token


def add_commands(commands: Commands) -> None:
    watch = commands.add_parser("watch", help="print a live match as it is played")
    watch.add_argument("match_id", metavar="MATCH_ID")
    add_server_options(watch, Role.SPECTATOR)
    watch.add_argument("--omniscient", action="store_true", help="every event (admin token)")
    watch.add_argument(
        "--delay",
        type=whole(0),
        default=0,
        metavar="STEPS",
        help="omniscient view: stay this many steps behind",
    )
    handle(watch, run_watch)


def run_watch(args: argparse.Namespace) -> int:
    role = Role.ADMIN if args.omniscient or args.delay else Role.SPECTATOR
    try:
        token = read_token(args, role)
        stub = arena_stub(args)
    except ValueError as problem:
        print(f"bisca watch: {problem}", file=sys.stderr)
        return 2
    request = pb.WatchMatchRequest(
        match_id=args.match_id, omniscient=args.omniscient, delay_steps=args.delay
    )
    game = ""
    try:
        for update in stub.WatchMatch(request, metadata=bearer(token)):
            kind = update.WhichOneof("kind")
            if kind == "start":
                start = update.start
                game = wire.game_name(start.game)
                view = "omniscient" if start.omniscient else "public"
                state = "live" if start.live else "finished, from its log"
                print(f"match {start.match_id}: {game} ({view} view, {state})")
                print(f"settings: {fields_text(wire.decode_game_settings(game, start.settings))}")
                print("seats: " + ", ".join(f"{s.seat}={s.bot_name}" for s in start.seats))
                if game in CARD_LEGENDS:
                    print(CARD_LEGENDS[game])
            elif kind == "events":
                for watched in update.events.events:
                    _, event = wire.decode_game_event(watched.event)
                    print(f"[step {update.events.after_step}] {event_text(event)}", flush=True)
            elif kind == "end":
                end = update.end
                print(f"end: {status_text(end.status)} after {end.steps} steps")
                shown = game_places(game, end.seats)
                for seat, place in zip(end.seats, shown, strict=True):
                    print(f"  seat {seat.seat} {seat.bot_name}: score {seat.score}, place {place}")
                if end.reason:
                    print(f"  reason: {end.reason}")
    except grpc.RpcError as error:
        print(f"bisca watch: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1
    return 0
