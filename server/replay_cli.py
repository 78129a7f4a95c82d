"""``bisca replay verify | show | export``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from bisca.engine import EngineError
from bisca.v1 import log_pb2

from .matchlog import LogFormatError, read_log
from .render import Frame, log_frames
from .replay import export_json, verify

#: Exit codes of ``verify``: every log complete and agreeing, a divergence, an unreadable
#: file, or only incomplete (``.partial`` / no footer) logs that agree as far as they go.
EXIT_OK, EXIT_DIVERGES, EXIT_UNREADABLE, EXIT_INCOMPLETE = 0, 1, 2, 3


def run_replay_command(args: argparse.Namespace) -> int:
    if args.replay_command == "verify":
        return verify_logs(args.logs)
    try:
        log = read_log(args.log)
    except (OSError, LogFormatError) as problem:
        print(f"bisca replay: {problem}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.replay_command == "export":
        print(export_json(args.log))
        return EXIT_OK
    header = log.header
    if header is None:
        print(f"bisca replay: {args.log} has no header", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.seat is not None and args.seat >= len(header.seats):
        print(
            f"bisca replay: --seat {args.seat}: the match has seats 0..{len(header.seats) - 1}",
            file=sys.stderr,
        )
        return EXIT_UNREADABLE
    shown = 0  # records rendered so far: on an error, the index of the one at fault

    def entries() -> Iterator[log_pb2.LogEntry]:
        nonlocal shown
        for entry in log.entries():
            yield entry
            shown += 1

    try:
        frames = list(log_frames(entries(), args.seat))
    except (EngineError, ValueError) as problem:  # parses, but is not a move of the game
        print(
            f"bisca replay: {args.log}: record {shown} cannot be shown: {problem} "
            f"(`bisca replay verify {args.log}` checks the whole log)",
            file=sys.stderr,
        )
        return EXIT_UNREADABLE
    if not log.complete:
        frames[-1].lines.append("(the log is incomplete: the match did not finish writing it)")
    if args.interactive:
        step_through(frames, input, print)
        return EXIT_OK
    for frame in frames:
        if args.step is not None and frame.step is not None and frame.step > args.step:
            break
        for line in frame.lines:
            print(line)
    return EXIT_OK


#: Several logs exit with the code of the worst: unreadable, then a divergence, then incomplete.
_SEVERITY = {EXIT_OK: 0, EXIT_INCOMPLETE: 1, EXIT_DIVERGES: 2, EXIT_UNREADABLE: 3}


def verify_logs(paths: list[Path]) -> int:
    worst = EXIT_OK
    for path in paths:
        verdict = verify(path)
        for line in verdict.lines():
            print(line)
        if verdict.unreadable:
            code = EXIT_UNREADABLE
        elif not verdict.ok:
            code = EXIT_DIVERGES
        else:
            code = EXIT_OK if verdict.complete else EXIT_INCOMPLETE
        worst = max(worst, code, key=_SEVERITY.__getitem__)
    return worst


def step_through(
    frames: list[Frame], read: Callable[[str], str], write: Callable[[str], None]
) -> None:
    """Show one frame at a time: Enter or n for the next, p for the previous, a number to
    jump to that step, q to quit."""
    position = 0
    while True:
        frame = frames[position]
        title = (
            "start"
            if frame.step is None and position == 0
            else (f"step {frame.step}" if frame.step is not None else "end")
        )
        write(f"[{position + 1}/{len(frames)}] {title}")
        for line in frame.lines:
            write(line)
        try:
            command = read("(n)ext, (p)revious, step number, (q)uit> ").strip().lower()
        except EOFError:
            return
        if command in ("q", "quit"):
            return
        if command in ("", "n", "next"):
            position = min(position + 1, len(frames) - 1)
        elif command in ("p", "prev", "previous"):
            position = max(position - 1, 0)
        elif command.isdigit():
            wanted = int(command)
            matches = [i for i, f in enumerate(frames) if f.step == wanted]
            if matches:
                position = matches[0]
            else:
                write(f"no step {wanted} in this view")
        else:
            write(f"unknown command {command!r}")
