"""A submission's manifest, ``bisca-bot.toml`` at the top of its folder::

    name = "mybot"            # the bot; each submission is its next version
    games = ["belote"]        # the games it plays (a league game each)
    language = "python"       # python, node or cpp: how the arena builds it
    command = "python my_bot.py"

Every key is required and no other is allowed.  The manifest is checked against the files it
came with: a Python or Node command names a script of the folder, a C++ bot has its
``CMakeLists.txt``; a manifest that claims what the files do not hold is refused, naming the
claim.
"""

from __future__ import annotations

import shlex
import sys
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from bisca.engine import GAMES
from bisca.server.store import VersionError, check_hosted_bot_name
from bisca.server.textfiles import read_regular_file

from ._refusals import ManifestError

MANIFEST = "bisca-bot.toml"
MAX_MANIFEST_BYTES = 16 * 1024
MAX_COMMAND = 400


class BotLanguage(StrEnum):
    PYTHON = "python"
    NODE = "node"
    CPP = "cpp"

    @property
    def interpreters(self) -> tuple[str, ...]:
        """The programs a command of this language starts with (C++: its own binary)."""
        return {
            BotLanguage.PYTHON: ("python", "python3"),
            BotLanguage.NODE: ("node",),
            BotLanguage.CPP: (),
        }[self]


@dataclass(frozen=True)
class Manifest:
    name: str
    games: tuple[str, ...]
    language: BotLanguage
    command: tuple[str, ...]
    text: str


def _refuse(what: str) -> ManifestError:
    return ManifestError(f"{MANIFEST}: {what}")


def parse_manifest(text: str) -> Manifest:
    """A manifest from its text, or :class:`ManifestError` naming the key that is wrong."""
    if len(text.encode()) > MAX_MANIFEST_BYTES:
        raise _refuse(f"more than {MAX_MANIFEST_BYTES} bytes")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        raise _refuse(f"not TOML: {problem}") from None
    except RecursionError:  # a few hundred nested arrays or tables
        raise _refuse("nested too deeply") from None
    except ValueError:  # not a TOMLDecodeError: an integer past Python's conversion limit
        raise _refuse(f"a number of more than {sys.get_int_max_str_digits()} digits") from None
    unknown = sorted(set(table) - {"name", "games", "language", "command"})
    if unknown:
        raise _refuse(f"unknown key {unknown[0]!r} (the keys are name, games, language, command)")
    for key in ("name", "games", "language", "command"):
        if key not in table:
            raise _refuse(f"the key {key!r} is missing")
    name, games, language, command = (table[k] for k in ("name", "games", "language", "command"))
    if not isinstance(name, str):
        raise _refuse("'name' must be a string")
    try:
        check_hosted_bot_name(name)
    except VersionError as problem:
        raise _refuse(str(problem)) from None
    if not isinstance(games, list) or not games or not all(isinstance(g, str) for g in games):
        raise _refuse("'games' must be a list of game names, e.g. [\"belote\"]")
    for game in games:
        if game not in GAMES:
            raise _refuse(f"unknown game {game!r} in 'games' (known: {', '.join(sorted(GAMES))})")
    if not isinstance(language, str) or language not in set(BotLanguage):
        raise _refuse(f"'language' must be one of {', '.join(BotLanguage)}")
    if not isinstance(command, str) or not command.strip() or len(command) > MAX_COMMAND:
        raise _refuse(f"'command' must be a command line of 1 to {MAX_COMMAND} characters")
    try:
        words = tuple(shlex.split(command))
    except ValueError as problem:
        raise _refuse(f"'command' cannot be read: {problem}") from None
    return Manifest(name, tuple(dict.fromkeys(games)), BotLanguage(language), words, text)


def _inside(word: str) -> PurePosixPath:
    path = PurePosixPath(word)
    if path.is_absolute() or ".." in path.parts:
        raise _refuse(f"'command' names {word!r}, outside the bot's folder")
    return path


def check_against_files(manifest: Manifest, root: Path) -> None:
    """Refuse a manifest whose command the folder ``root`` cannot run."""
    language = manifest.language
    first = manifest.command[0]
    if language is BotLanguage.CPP:
        if not (root / "CMakeLists.txt").is_file():
            raise _refuse("a C++ bot needs a CMakeLists.txt at the top of its folder")
        _inside(first)  # the program it builds, inside its folder
        return
    if first not in language.interpreters:
        raise _refuse(
            f"a {language} bot's command starts with {' or '.join(language.interpreters)}, "
            f"not {first!r}"
        )
    scripts = [word for word in manifest.command[1:] if not word.startswith("-")]
    if not scripts:
        raise _refuse(f"'command' names no script for {first} to run")
    script = _inside(scripts[0])
    found = root.joinpath(*script.parts)
    if not found.is_file() or found.is_symlink():
        raise _refuse(f"'command' runs {scripts[0]!r}, which is not a file of the archive")


def read_manifest(root: Path) -> Manifest:
    """The manifest of the bot folder ``root``, checked against its files: what the league
    does with an upload, and ``bisca submit`` before it sends one (a refused upload counts
    against the account's day: review s59b, M10).  UTF-8 text, a byte-order mark allowed as
    in every other file Bisca reads."""
    path = root / MANIFEST
    if path.is_symlink() or not path.is_file():
        raise ManifestError(f"{MANIFEST} is not a file")
    try:
        text = read_regular_file(path, MAX_MANIFEST_BYTES).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ManifestError(f"{MANIFEST} is not UTF-8 text") from None
    except OSError as problem:
        raise _refuse(f"cannot read it: {problem.strerror or problem}") from None
    manifest = parse_manifest(text)
    check_against_files(manifest, root)
    return manifest
