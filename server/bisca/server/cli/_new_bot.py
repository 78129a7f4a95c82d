"""``bisca new-bot python|node|cpp DIR``: a starter bot that passes ``bisca check-bot`` as it is.

The templates ship in this package (``templates/LANGUAGE/*.in``).  ``@NAME@`` becomes the
bot's name (``--name``, else the folder's name), escaped for the string literals it stands in
(:data:`NAME_ESCAPES`); the Node starter ``require``s the package ``bisca-client``,
which is the clone's ``clients/node`` through ``node_modules/bisca-client``, the link ``npm
install`` would make for its ``package.json``'s ``file:`` dependency (which the sandbox binds
wherever the arena runs): a league server gives it its own SDK under the same name; and
the C++ starter links against the clone's SDK build (the clone is the current folder, or
``--clone DIR``: never derived from where this module is installed) (``build/cpp``, from ``cmake -S
clients/cpp -B build/cpp``), both by absolute path, so the folder may be anywhere.  A Python
starter needs the SDK in the Python that runs it: the commands printed name the interpreter
running ``bisca`` (which has it) by its absolute path, not the ``python`` on ``PATH`` (which
may lack it); another Python gets it with ``PYTHON -m pip install CLONE/clients/python``.
Every path printed is shell-quoted, so each line can be pasted as it is (a folder ``my bot``).

The folder is made readable by others (0755): the arena runs a bot as a uid of its own, which
must read its files.  A file already there is never overwritten: the command stops, naming it.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import unicodedata
from dataclasses import dataclass
from enum import Enum
from importlib import resources
from pathlib import Path

from ._args import Commands, bisca_command, folder_path, handle


class Language(Enum):
    PYTHON = "python"
    NODE = "node"
    CPP = "cpp"


@dataclass(frozen=True)
class Clone:
    """The clone of Bisca whose SDKs a starter is written against: named by the user
    (``--clone DIR``, by default the current folder), never guessed from where this module is
    installed (an installed ``bisca`` need not come from a clone at all)."""

    root: Path

    @property
    def node_sdk(self) -> Path:
        return self.root / "clients" / "node"

    @property
    def cpp_sdk(self) -> Path:
        return self.root / "clients" / "cpp"

    @property
    def cpp_build(self) -> Path:
        return self.root / "build" / "cpp"

    def sdk_of(self, language: Language) -> Path | None:
        """The SDK folder ``language``'s starter needs from the clone (None: none needed)."""
        return {Language.NODE: self.node_sdk, Language.CPP: self.cpp_sdk}.get(language)


@dataclass(frozen=True)
class Starter:
    """What one language's starter is: its template files, and the commands that run it."""

    files: tuple[str, ...]
    #: The bot command, ``{dir}`` standing for the folder.
    command: str
    #: What to run before the bot can start (build, install), ``{dir}`` as above.
    before: tuple[str, ...]
    #: The command of its manifest (``bisca-bot.toml``), run in its folder on a league server.
    league_command: str


STARTERS = {
    Language.PYTHON: Starter(
        ("my_bot.py",),
        "{python} {dir}/my_bot.py",
        ("# {python} has the SDK; another Python gets it with PYTHON -m pip install {python_sdk}",),
        "python my_bot.py",
    ),
    Language.NODE: Starter(
        ("my_bot.js", "package.json"),
        "node {dir}/my_bot.js",
        ("(cd {node_sdk} && npm ci)   # the SDK's packages, once",),
        "node my_bot.js",
    ),
    Language.CPP: Starter(
        ("my_bot.cpp", "CMakeLists.txt"),
        "{build}/my_bot",
        (
            "cmake -S {cpp_sdk} -B {cpp_build} && cmake --build {cpp_build} -j2   # the SDK, once",
            "cmake -S {dir} -B {build} && cmake --build {build}",
        ),
        "build/my_bot",
    ),
}


#: The manifest a league server reads when the folder is submitted (``bisca submit DIR``).
MANIFEST = "bisca-bot.toml"

#: What each language's templates need escaped in the name: every ``@NAME@`` in them is in a
#: string literal (``"..."`` in Python, its docstring included, and C++; ``'...'`` and a
#: template literal in JavaScript) or in a comment, where the escapes read harmlessly.  Put in
#: raw, ``a b "c`` made a ``my_bot.py`` that was a SyntaxError.
NAME_ESCAPES = {
    Language.PYTHON: {"\\": "\\\\", '"': '\\"'},
    Language.NODE: {"\\": "\\\\", "'": "\\'", "`": "\\`", "$": "\\$"},
    Language.CPP: {"\\": "\\\\", '"': '\\"'},
}
#: The Unicode categories no escape carries through every template: control characters
#: (a line break ends a comment early), line and paragraph separators (which end a
#: JavaScript comment), and the lone surrogates of a name that was not UTF-8.
UNCARRIED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def manifest_text(language: Language, name: str) -> str:
    """``bisca-bot.toml`` for a starter: its name made a league bot's name (letters, digits,
    ``-`` and ``_``), both games, its language and its command."""
    league_name = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "-" for c in name)
    return (
        f"# What a league server needs to build and run this bot (docs/league-server.md).\n"
        f"name = {json.dumps(league_name[:40] or 'my-bot')}\n"
        f'games = ["belote", "bestia"]\n'
        f"language = {json.dumps(language.value)}\n"
        f"command = {json.dumps(STARTERS[language].league_command)}\n"
    )


class NewBotError(Exception):
    """A starter that cannot be written (the folder holds a file of the same name, ...)."""


def escaped_name(language: Language, name: str) -> str:
    """``name`` as ``language``'s templates carry it (:data:`NAME_ESCAPES`)."""
    escapes = NAME_ESCAPES[language]
    return "".join(escapes.get(character, character) for character in name)


def bot_name(args: argparse.Namespace) -> str:
    """The name the bot announces: ``--name``, else the folder's name; :class:`NewBotError`
    for one that is empty (``--name ''`` once fell back to the folder's name unsaid) or holds
    a character a starter's source cannot carry, naming where it came from."""
    folder: Path = args.dir
    given: str | None = args.name
    name = folder.resolve().name if given is None else given
    origin = f"DIR's name {name!r}" if given is None else f"--name {name!r}"
    if not name:
        raise NewBotError(f"{origin} is empty: give the bot a name with --name NAME")
    if any(unicodedata.category(character) in UNCARRIED_CATEGORIES for character in name):
        raise NewBotError(
            f"{origin} holds a control character, a line break or a byte that is not UTF-8, "
            "which a starter's source cannot carry: give the bot a name with --name NAME"
        )
    return name


def add_commands(commands: Commands) -> None:
    new_bot = commands.add_parser(
        "new-bot",
        help="write a starter bot (Python, Node.js or C++) that passes check-bot as it is",
        description="Write a starter bot for Belote and Bestia into DIR (made if missing; "
        "its files are never overwritten), then print how to build, check and play it.",
    )
    new_bot.add_argument(
        "language", choices=[language.value for language in Language], help="the bot's language"
    )
    new_bot.add_argument("dir", type=folder_path, metavar="DIR", help="the folder to write it in")
    new_bot.add_argument("--name", help="the name the bot announces (default: DIR's name)")
    new_bot.add_argument(
        "--clone",
        type=folder_path,
        default=Path("."),
        metavar="CLONE",
        help="the clone of Bisca whose Node.js or C++ SDK the starter uses "
        "(default: the current folder)",
    )
    handle(new_bot, run_new_bot)


def write_starter(language: Language, folder: Path, name: str, clone: Clone) -> list[Path]:
    """Write ``language``'s starter into ``folder``; the files written."""
    starter = STARTERS[language]
    sdk = clone.sdk_of(language)
    if sdk is not None and not sdk.is_dir():
        raise NewBotError(
            f"no {language.value} SDK at {sdk}: run this in a clone of Bisca, "
            "or name one with --clone DIR"
        )
    targets = [folder / file for file in starter.files]
    manifest = folder / MANIFEST
    # A symbolic link counts, a dangling one too (``exists()`` follows it, and is False):
    # written through, it would put the file wherever it points.
    existing = [target for target in (*targets, manifest) if target.is_symlink() or target.exists()]
    if existing:
        raise NewBotError(f"{existing[0]} exists already; choose another folder")
    values = {
        "@NAME@": escaped_name(language, name),
        # npm's package names: lower case, no spaces.
        "@NAME_PACKAGE@": "".join(c if c.isalnum() or c in "-_." else "-" for c in name.lower()),
        "@NODE_SDK_FILE_JSON@": json.dumps(f"file:{clone.node_sdk}"),
        "@NODE_SDK@": str(clone.node_sdk),
        "@CPP_BUILD@": str(clone.cpp_build),
    }
    templates = resources.files(__package__).joinpath("templates", language.value)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    # One pass over each template: a value is never searched again for placeholders (a name
    # ``@CPP_BUILD@`` stays that name).
    placeholders = re.compile("|".join(re.escape(placeholder) for placeholder in values))
    for file, target in zip(starter.files, targets, strict=True):
        template = templates.joinpath(file + ".in").read_text(encoding="utf-8")
        text = placeholders.sub(lambda found: values[found.group()], template)
        _write_new(target, text)
    _write_new(manifest, manifest_text(language, name))
    if language is Language.NODE:
        _link_node_sdk(folder, clone)
    return [*targets, manifest]


def _write_new(target: Path, text: str) -> None:
    """Write a file that must not be there yet: ``x`` refuses one made since the check, or a
    link (dangling too), rather than write through it.  UTF-8, whatever the locale: a name
    outside ASCII is source text every compiler here reads as UTF-8."""
    with target.open("x", encoding="utf-8") as written:
        written.write(text)
    target.chmod(0o644)


def _link_node_sdk(folder: Path, clone: Clone) -> None:
    """``node_modules/bisca-client``, a link to the clone's Node SDK (what ``npm install``
    makes of a ``file:`` dependency, without npm); one already there is left as it is."""
    modules = folder / "node_modules"
    modules.mkdir(mode=0o755, exist_ok=True)
    link = modules / "bisca-client"
    if not link.is_symlink() and not link.exists():
        link.symlink_to(clone.node_sdk, target_is_directory=True)


def run_new_bot(args: argparse.Namespace) -> int:
    language = Language(args.language)
    folder: Path = args.dir
    clone = Clone(args.clone.resolve())
    try:
        name = bot_name(args)
        written = write_starter(language, folder, name, clone)
    except (NewBotError, OSError) as problem:
        print(f"bisca new-bot: {problem}", file=sys.stderr)
        return 1
    starter = STARTERS[language]
    # Every path shell-quoted: the lines are meant to be pasted (a folder "my bot" too).
    words = {
        "dir": str(folder),
        "build": str(folder / "build"),
        "python": sys.executable,
        "python_sdk": str(clone.root / "clients" / "python"),
        "node_sdk": str(clone.node_sdk),
        "cpp_sdk": str(clone.cpp_sdk),
        "cpp_build": str(clone.cpp_build),
    }
    quoted = {key: shlex.quote(value) for key, value in words.items()}
    if not (clone.root / "clients" / "python").is_dir():
        # Not run in a clone (an installed bisca): no path of the SDK to give, only where it is.
        quoted["python_sdk"] = "CLONE/clients/python, CLONE a clone of Bisca"
    command = starter.command.format(**quoted)
    files = [path for path in written if path.name != MANIFEST]
    print(f"wrote {', '.join(str(path) for path in files)}: {name}, for Belote and Bestia")
    bisca = bisca_command()
    submit = f"{bisca} submit {quoted['dir']} --server URL"
    print(f"and {folder / MANIFEST}, its manifest for a league (`{submit}`)")
    print("next:")
    for line in starter.before:
        print("  " + line.format(**quoted))
    print(f"  {bisca} check-bot -- {command}")
    print(
        f"  {bisca} match --game belote --bot {shlex.quote(command)} --bot greedy --bot random "
        "--bot random"
    )
    return 0
