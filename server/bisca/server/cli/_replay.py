"""``bisca replay verify | show | export``."""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bisca.engine import EngineError
from bisca.server.datadir import DataDir, log_file
from bisca.server.errors import KeyFileError, LogFormatError, StoreError
from bisca.server.logs import (
    Frame,
    LogFile,
    ServerKey,
    Verdict,
    export_json,
    log_frames,
    parse_public_key,
    read_log,
    verify,
)
from bisca.server.records import RecordedMatch
from bisca.server.store import open_store, recorded_results, refuse_a_store_used_elsewhere
from bisca.server.text import printable
from bisca.v1 import log_pb2

from ._args import Commands, folder_path, handle, whole
from ._exits import EXIT_DIVERGES, EXIT_INCOMPLETE, EXIT_OK, EXIT_UNREADABLE, EXIT_UNTRUSTED


def add_log_store_option(parser: argparse.ArgumentParser) -> None:
    """``--store``: read the logs from a shared store; each LOG is then a match id."""
    parser.add_argument(
        "--store",
        metavar="URL",
        help="read the logs kept in a shared store (postgresql://...): each LOG is then a "
        "match id, and the key and final hash the store recorded are checked",
    )


def add_commands(commands: Commands) -> None:
    replay = commands.add_parser("replay", help="verify, show or export match logs")
    actions = replay.add_subparsers(dest="replay_command", required=True, metavar="ACTION")
    check = actions.add_parser(
        "verify", help="re-run the engine on logs and check every step (exit 0: all agree)"
    )
    check.add_argument("logs", nargs="*", type=log_argument, metavar="LOG")
    check.add_argument(
        "--all",
        action="store_true",
        help="with --data: every finished match its store records, each log verified and a "
        "missing one named (an audit of the data directory)",
    )
    add_trust_options(check)
    add_log_store_option(check)
    handle(check, run_verify)
    show = actions.add_parser("show", help="print a match from its log")
    show.add_argument("log", type=log_argument, metavar="LOG")
    show.add_argument("--seat", type=whole(0), help="show only what this seat saw")
    show.add_argument("--step", type=whole(0), help="stop after this step")
    show.add_argument(
        "--interactive",
        "-i",
        action="store_true",
        help="step through: Enter/n next, p previous, a number jumps, q quits",
    )
    add_trust_options(show)
    add_log_store_option(show)
    handle(show, run_show)
    export = actions.add_parser("export", help="write a log as JSON")
    export.add_argument("log", type=log_argument, metavar="LOG")
    export.add_argument(
        "--json", action="store_true", help="JSON (the only format, and the default)"
    )
    add_trust_options(export)  # the JSON carries the verdict, as show prints it first
    add_log_store_option(export)
    handle(export, run_show)


def log_argument(text: str) -> Path:
    """A LOG argument: a log file, or a match's folder (``DATA/matches/M``), which stands for
    the one log in it (``M.binlog``, or ``M.binlog.partial`` while it is written)."""
    path = Path(text)
    try:
        if not path.is_dir():
            return path
    except OSError as problem:  # (a folder on its way it may not read: review s57c)
        raise argparse.ArgumentTypeError(f"cannot read {text}: {problem.strerror}") from None
    found = sorted(path.glob("*.binlog")) or sorted(path.glob("*.binlog.partial"))
    if len(found) == 1:
        return found[0]
    what = "no match log" if not found else f"{len(found)} match logs"
    raise argparse.ArgumentTypeError(
        f"{text} is a folder with {what} in it: give a log file (DATA/matches/M/M.binlog) or "
        "a match's folder"
    )


def add_trust_options(parser: argparse.ArgumentParser) -> None:
    """``--key`` and ``--data``: the only sources of a key a log's signature is trusted by
    (besides the store's, with ``--store``)."""
    parser.add_argument(
        "--key",
        metavar="PUBLIC_KEY",
        help="the public key the logs must be signed by (ed25519:HEX, as `bisca key` prints it, "
        "or a file holding it); default: the key of the data directory given with --data "
        "(never one found beside the log)",
    )
    parser.add_argument(
        "--data",
        type=folder_path,
        help="the data directory of the server that played the logs: its key is trusted and "
        "its store's records are checked (a data directory a log merely lies in is never "
        "trusted, only its store's records are checked)",
    )


def _given_key(args: argparse.Namespace) -> bytes | None:
    """The key named with ``--key`` (a bad one is a usage error)."""
    if not getattr(args, "key", None):
        return None
    try:
        return _public_key_argument(args.key)
    except KeyFileError as problem:
        parser: argparse.ArgumentParser = args.parser
        parser.error(f"--key: {problem}")


def _from_store(url: str, match_ids: list[str], folder: Path) -> tuple[list[Path], StoredKeys]:
    """The logs of matches kept in a shared store, written into ``folder`` as
    ``M/M.binlog``, with the key that signed each and what the store records of every match
    (final hashes, results)."""
    with open_store(url, folder, upgrade=False) as store:
        records = store.logs.recorded()
        paths, keys = [], {}
        for match_id in match_ids:
            if not _A_MATCH_ID.fullmatch(match_id):
                # The id names the folder the log is written in: never a path out of it.
                raise StoreError(f"{match_id!r} is not a match id (letters, digits, '.', '_', '-')")
            stored = store.logs.get(match_id)
            if stored is None:
                state = "no record of that match" if match_id not in records else "no complete log"
                raise StoreError(f"{store.describe()} has {state} for match {match_id!r}")
            path = log_file(folder / match_id, match_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(stored.data)
            paths.append(path)
            keys[path] = parse_public_key(stored.public_key) if stored.public_key else None
    return paths, StoredKeys(keys, records)


#: What a match id may be: the referee's (``m-...``), a tournament's (``t-0-r2``), a ladder's.
_A_MATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class StoredKeys:
    keys: dict[Path, bytes | None]
    records: dict[str, RecordedMatch]


def run_show(args: argparse.Namespace) -> int:
    """``replay show`` and ``replay export``: one log, read whole first (from the store with
    ``--store``: then the LOG is a match id)."""
    given = _given_key(args)
    if args.store is None:
        data = getattr(args, "data", None)
        return _show(args, lambda log: _verify_one(args.log, given, data, log))
    with tempfile.TemporaryDirectory(prefix="bisca-replay-") as folder:
        try:
            paths, stored = _from_store(args.store, [str(args.log)], Path(folder))
        except (StoreError, KeyFileError) as problem:
            print(f"bisca replay: {problem}", file=sys.stderr)
            return EXIT_UNREADABLE
        args.log = paths[0]
        return _show(args, lambda log: _verify_stored(args.log, given, stored, log))


def _show(args: argparse.Namespace, judge: Callable[[LogFile], Verdict]) -> int:
    """Show (or export) one log; ``show`` first prints ``judge``'s verdict on it, so nobody
    reads a forged match before being told it is one.  The file is read once: what is judged
    is what is shown (review 48: a file changed between two readings, a pipe handing out a
    genuine log and then a forged one, showed the forgery under the genuine log's verdict)."""
    try:
        log = read_log(args.log)
    except LogFormatError as problem:  # (it names the file)
        print(f"bisca replay: {problem}", file=sys.stderr)
        return EXIT_UNREADABLE
    except OSError as problem:
        print(f"bisca replay: {args.log}: {problem.strerror or problem}", file=sys.stderr)
        return EXIT_UNREADABLE
    verdict = judge(log)
    if args.replay_command == "export":
        # The verdict goes with the records (a script that reads the JSON of a forged log
        # must be told: review 53), and a log that diverges exits as verify says.
        print(export_json(log, verdict))
        return _shown_exit_code(verdict)
    for line in verdict.lines():
        print(line)
    if not verdict.trusted:  # beside the match it is about, not apart on stderr
        print(
            "WARNING: this log is not trusted (see the line above): what follows may "
            "not be what was played"
        )
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
        step_through(frames, input, lambda line: print(printable(line)))
        return _shown_exit_code(verdict)
    for frame in frames:
        if args.step is not None and frame.step is not None and frame.step > args.step:
            break
        for line in frame.lines:
            print(printable(line))  # bot names and versions, the footer's reason
    return _shown_exit_code(verdict)


#: Several logs exit with the code of the worst: unreadable, then untrusted, then a
#: divergence, then incomplete.
_SEVERITY = {
    EXIT_OK: 0,
    EXIT_INCOMPLETE: 1,
    EXIT_DIVERGES: 2,
    EXIT_UNTRUSTED: 3,
    EXIT_UNREADABLE: 4,
}


def run_verify(args: argparse.Namespace) -> int:
    if args.all and (args.logs or args.store is not None or args.data is None):
        args.parser.error("--all takes --data DIR alone: it verifies that folder's matches")
    if not args.all and not args.logs:
        args.parser.error("give a LOG (or a match id with --store), or --all with --data DIR")
    given = _given_key(args)
    if args.all:
        return _verify_all(args.data, given)
    if args.store is None:
        return verify_logs(args.logs, given, args.data)
    with tempfile.TemporaryDirectory(prefix="bisca-replay-") as folder:
        try:
            paths, stored = _from_store(args.store, [str(p) for p in args.logs], Path(folder))
        except (StoreError, KeyFileError) as problem:
            print(f"bisca replay: {problem}", file=sys.stderr)
            return EXIT_UNREADABLE
        worst = EXIT_OK
        for path in paths:
            verdict = _verify_stored(path, given, stored)
            for line in verdict.lines():
                print(line)
            worst = max(worst, _exit_code(verdict), key=_SEVERITY.__getitem__)
        return worst


def _verify_all(data: Path, key: bytes | None) -> int:
    """Every finished match the data directory's store records: its log verified, and one
    that is not there named (a deleted log of a recorded result was flagged by nothing that
    was not asked for that match: review s59a, F5)."""
    layout = DataDir(data)
    try:
        refuse_a_store_used_elsewhere(layout.root)
        records = recorded_results(layout.store) if layout.store.exists() else {}
    except StoreError as problem:
        print(f"bisca replay: {problem}", file=sys.stderr)
        return EXIT_UNREADABLE
    finished = sorted(match_id for match_id, record in records.items() if record.seats)
    if not finished:
        print(f"no finished match recorded in {data}")
        return EXIT_OK
    worst = EXIT_OK
    for match_id in finished:
        path = layout.match_log(match_id)
        if not path.exists():
            print(f"{path}: MISSING: the store records match {match_id} finished, its log is gone")
            worst = max(worst, EXIT_UNREADABLE, key=_SEVERITY.__getitem__)
            continue
        verdict = _verify_one(path, key, data)
        for line in verdict.lines():
            print(line)
        worst = max(worst, _exit_code(verdict), key=_SEVERITY.__getitem__)
    return worst


def _public_key_argument(text: str) -> bytes:
    """``--key``: a public key as ``bisca key`` prints it, or a file holding one as it prints
    it (``ed25519:`` and the digits).  A file without the prefix is refused unread: a server's
    ``server.key`` is 64 hex digits too, its private key, which was read as a public one and
    printed back in the verdict (review 53)."""
    candidate = Path(text)
    if not text.startswith("ed25519:") and candidate.is_file():
        try:
            text = candidate.read_text()
        except (OSError, UnicodeDecodeError):
            text = ""
        if not text.strip().startswith("ed25519:"):
            raise KeyFileError(
                f"{candidate} holds no public key as `bisca key` prints it (ed25519:<64 hex "
                "digits>); a data directory's server.key is its private key: give `bisca key "
                "--data DIR`'s output, or --data DIR"
            )
    return parse_public_key(text)


def verify_logs(paths: list[Path], key: bytes | None = None, data: Path | None = None) -> int:
    """Verify each log; its key comes from ``key`` or ``data`` only, its recorded hash from
    ``data`` or else the data directory it lies in (``DATA/matches/M/M.binlog``)."""
    worst = EXIT_OK
    for path in paths:
        verdict = _verify_one(path, key, data)
        for line in verdict.lines():
            print(line)
        worst = max(worst, _exit_code(verdict), key=_SEVERITY.__getitem__)
    return worst


def _shown_exit_code(verdict: Verdict) -> int:
    """How ``show`` and ``export`` exit: as verify does for a log that diverges from the
    engine or is damaged (what they printed is not what was played: review 53 found a forged
    score shown with 0), else 0: a log that agrees so far but is incomplete or not signed by a
    key the user named is shown with the verdict's warning, for reading."""
    code = _exit_code(verdict)
    return code if code in (EXIT_DIVERGES, EXIT_UNREADABLE) else EXIT_OK


def _exit_code(verdict: Verdict) -> int:
    if verdict.unreadable:
        return EXIT_UNREADABLE
    if not verdict.ok:
        return EXIT_DIVERGES
    if verdict.untrusted:  # (a cut log is untrusted where its match's whole log is on record)
        return EXIT_UNTRUSTED
    return EXIT_OK if verdict.complete else EXIT_INCOMPLETE


def _verify_one(
    path: Path, key: bytes | None, data: Path | None, log: LogFile | None = None
) -> Verdict:
    """Verify one log (``log``, when it was read already from ``path``).  Its signature is
    trusted only by ``key`` or the key of the data directory the user named (``data``):
    never by a key found beside the log, which whoever handed over the log could have put
    there with it.  The data directory the log lies in still counts against it (its store's
    record of the match, its folder's name): a log only ever loses trust by where it lies."""
    source = path if log is None else log
    named = DataDir(data) if data is not None else None
    trusted = key
    if trusted is None and named is not None:
        try:
            trusted = ServerKey.load(named.server_key).public
        except KeyFileError as problem:
            # ``--data`` was given: say why its key is not one (review 53: a folder without a
            # key read "no key to trust was given").
            verdict = verify(source)
            if verdict.ok and verdict.complete:
                verdict.untrusted = f"--data {data}: {problem}"
            return verdict
    layout = named if named is not None else DataDir.of_log(path)
    records = None
    if layout is not None:
        try:
            # A folder whose server keeps its store elsewhere (PostgreSQL, another file): its
            # own SQLite file, if any, is not the league's, and a log of a match recorded failed
            # read OK (review s59a, F4).  Untrusted, naming the store to verify against.
            refuse_a_store_used_elsewhere(layout.root)
            if layout.store.exists():
                records = recorded_results(layout.store)
        except StoreError as problem:
            verdict = verify(source, trusted)
            if verdict.trusted:
                verdict.untrusted = str(problem)
            return verdict
    verdict = verify(source, trusted, records)
    in_place = DataDir.of_log(path)
    if (
        trusted is None
        and named is None
        and in_place is not None
        and verdict.untrusted
        and verdict.complete
    ):
        verdict.untrusted += (
            f"; the log lies in the data directory {in_place}: its key is not trusted for "
            f"being beside the log (name it with --data {in_place} if it is your server's)"
        )
    if in_place is not None:
        _check_its_place(verdict, path.resolve().parent.name)
    return verdict


def _check_its_place(verdict: Verdict, match_id: str) -> None:
    """A trusted log is untrusted when it is another match's than ``match_id``, the one it
    was read as (its folder's, or the one asked of the store): a real log, on record for its
    own match, must not vouch for another."""
    if verdict.trusted and verdict.match_id != match_id:
        verdict.untrusted = (
            f"this is the log of match {verdict.match_id}, put in the place of match {match_id}'s"
        )


def _verify_stored(
    path: Path, given: bytes | None, stored: StoredKeys, log: LogFile | None = None
) -> Verdict:
    """Verify a log read from the store (``_from_store`` wrote it as ``M/M.binlog``; ``log``,
    when it was read already) by the key given, else the key the store recorded for it,
    against the store's records."""
    source = path if log is None else log
    verdict = verify(source, given or stored.keys[path], stored.records)
    _check_its_place(verdict, path.parent.name)
    return verdict


def step_through(
    frames: list[Frame], read: Callable[[str], str], write: Callable[[str], None]
) -> None:
    """Show one frame at a time: Enter or n for the next, p for the previous, a number to
    jump to that step, q to quit."""
    position = 0
    steps = [frame.step for frame in frames if frame.step is not None]
    span = f"steps {steps[0]} to {steps[-1]}" if steps else "no steps"
    while True:
        frame = frames[position]
        if frame.step is not None:
            title = f"step {frame.step} ({span})"
        else:
            title = "start, before the first step" if position == 0 else "end"
        write(f"— {title} —")
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
