"""``bisca submit DIR --server URL``: send a bot folder to a league as its next version,
``bisca submission`` to follow one (its state and, for its owner, each step's output), and
``bisca retire BOT VERSION`` to take one off the ladder.

The folder goes as a ``.tar.gz`` of its regular files (:func:`bisca.server.accounts.pack_folder`:
``.git``, caches and builds left out, since the league builds it again); a symbolic link in it
is refused here, as the league would refuse it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from bisca.server.accounts import (
    LEFT_OUT,
    MANIFEST,
    ManifestError,
    SubmissionRefused,
    pack_folder,
    read_manifest,
)

from ._args import Commands, folder_path, handle, version_number
from ._league_client import (
    LeagueCallFailed,
    account_token,
    add_server_options,
    call,
    check_server,
    checked_token,
    next_command,
    optional_token,
)


def add_commands(commands: Commands) -> None:
    submit = commands.add_parser(
        "submit", help="send a bot folder (with its bisca-bot.toml) to a league as a new version"
    )
    submit.add_argument("dir", type=folder_path, metavar="DIR", help="the bot's folder")
    add_server_options(submit, token=True)
    handle(submit, run_submit)
    show = commands.add_parser(
        "submission", help="a bot's versions on a league, or one version with its steps' output"
    )
    show.add_argument("bot")
    show.add_argument(
        "version", nargs="?", type=version_number, help="2 or v2 (default: all, in short)"
    )
    add_server_options(show, token=True)
    handle(show, run_show)
    retire = commands.add_parser(
        "retire", help="retire a version of your bot on a league: it plays no more, results stay"
    )
    retire.add_argument("bot")
    retire.add_argument("version", type=version_number, help="2 or v2")
    add_server_options(retire, token=True)
    handle(retire, run_retire)


def _bot_path(bot: str) -> str:
    """``/api/bots/BOT``, the name quoted as one part of the path: a space would make the URL
    one http.client refuses, a ``/`` one that names another route (``nb/versions/1``)."""
    return f"/api/bots/{quote(bot, safe='')}"


def run_retire(args: argparse.Namespace) -> int:
    try:
        path = f"{_bot_path(args.bot)}/versions/{args.version}/retire"
        answer = call(args, "POST", path, {}, token=account_token(args))
    except LeagueCallFailed as problem:
        print(f"bisca retire: {problem}", file=sys.stderr)
        return 1
    version = answer.get("version")
    print(f"{version['label'] if isinstance(version, dict) else args.bot}: retired")
    return 0


def pack(folder: Path) -> bytes:
    """The folder as the league takes it, its manifest checked as the league checks it (a
    refused upload counts against the account's day); :class:`LeagueCallFailed` saying why
    not."""
    if not folder.is_dir():  # (each was "has no bisca-bot.toml": review s59b, L8)
        raise LeagueCallFailed(
            f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}"
        )
    if not (folder / MANIFEST).exists():
        raise LeagueCallFailed(f"{folder} has no {MANIFEST} (`bisca new-bot` writes one)")
    try:
        manifest = read_manifest(folder)
        # What the folder sends leaves these out: a command that runs a script among them
        # passed here and was refused by the league (review s59d, F7).
        for word in manifest.command[1:]:
            if LEFT_OUT & set(PurePosixPath(word).parts):
                raise ManifestError(
                    f"{MANIFEST}: 'command' runs {word!r}, in a folder a submission leaves out "
                    f"({', '.join(sorted(LEFT_OUT))})"
                )
        return pack_folder(folder)
    except ManifestError as problem:
        raise LeagueCallFailed(f"{folder}: {problem} (checked here; nothing was sent)") from None
    except SubmissionRefused as problem:
        raise LeagueCallFailed(str(problem)) from None


def run_submit(args: argparse.Namespace) -> int:
    try:
        # What the call needs, checked before the folder is (the cheaper mistakes first).
        token = checked_token(args, account_token(args))
        check_server(args)
        data = pack(args.dir)
        answer = call(
            args, "POST", "/api/submissions", data, token=token, content_type="application/gzip"
        )
    except (LeagueCallFailed, OSError) as problem:
        print(f"bisca submit: {problem}", file=sys.stderr)
        return 1
    version = answer.get("version")
    if not isinstance(version, dict):
        print(f"bisca submit: the server answered {answer}", file=sys.stderr)
        return 1
    print(f"submitted {version['label']} ({len(data)} bytes): {version['state']}")
    print(f"follow it: {next_command(args, 'submission', version['bot'], str(version['version']))}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    try:
        if args.version is None:  # the versions side by side: public (review s58e)
            answer = call(args, "GET", _bot_path(args.bot), token=optional_token(args))
            versions = answer.get("versions")
            for version in versions if isinstance(versions, list) else []:
                reason = f"  {version['reason']}" if version.get("reason") else ""
                print(
                    f"{version['label']:<24} {version['state']:<11} {version['created_at']}{reason}"
                )
            return 0
        path = f"{_bot_path(args.bot)}/versions/{args.version}"
        answer = call(args, "GET", path, token=account_token(args))
    except LeagueCallFailed as problem:
        print(f"bisca submission: {problem}", file=sys.stderr)
        return 1
    version = answer.get("version")
    steps = answer.get("steps")
    if isinstance(version, dict):
        print(f"{version['label']}: {version['state']} {version.get('reason', '')}".rstrip())
    for step in steps if isinstance(steps, list) else []:
        verdict = "passed" if step.get("passed") else "FAILED"
        print(f"--- {step['step']}: {verdict} ({step['started_at']} .. {step['finished_at']})")
        print(str(step.get("output", "")).rstrip())
    return 0
