"""How each language of hosted bot is built, and what the arena gives it: its own copy of each
SDK, never fetched (the sandbox has no network).

* **Python**: every ``.py`` file compiled (``compile()``, which runs none of the author's
  code); the bot runs on the arena's own Python, which has the SDK.
* **Node**: every ``.js``/``.cjs``/``.mjs`` file checked by ``node --check`` (which runs none
  of it).  The SDK is the arena's ``clients/node`` with the ``node_modules`` its lock file
  installed at install time (``npm ci``), bound read-only: the arena links it as the bot's
  ``node_modules/bisca-client`` and names it in the bot's ``package.json`` (of the arena's
  copy of the files; the submission stays as it was sent).  A bot may depend on
  ``bisca-client`` alone: nothing is installed for it, and a ``file:`` path of the author's
  never reaches the sandbox.
* **C++**: ``cmake`` configures and builds the bot's ``CMakeLists.txt`` against the arena's
  build of the C++ SDK (``-DBISCA_CPP_BUILD=...``, the variable ``bisca new-bot cpp`` writes),
  in a build folder on the sandbox's private ``/tmp`` (``build_disk_mb``: a build that fills
  it gets "No space left on device"); the bot's folder stays read-only.  The program its
  command names (under ``build/``) is handed out as a tar on the build's standard output
  (at most the sandbox's file size limit) and kept beside the submission
  (``DATA/builds/BOT/vN``).
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bisca.server.accounts import BotLanguage, Manifest
from bisca.server.sandbox import NODE_SDK_PACKAGE, PACKAGE_JSON_BYTES, bot_folders

log = logging.getLogger("bisca.gate")

#: Compiles every Python file of the folder it runs in, executing none of them.
COMPILE_PYTHON = (
    "import pathlib, sys\n"
    "files = sorted(pathlib.Path('.').rglob('*.py'))\n"
    "for path in files:\n"
    "    compile(path.read_bytes(), str(path), 'exec')\n"
    "print(f'compiled {len(files)} Python files')\n"
)
#: Checks the syntax of every JavaScript file of the folder it runs in (its node_modules
#: aside), running none of them: ``node --check`` on each, the first failure ends it.
CHECK_NODE = r"""
const fs = require('fs'), path = require('path'), { spawnSync } = require('child_process');
const files = [];
(function walk(folder) {
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const where = path.join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') walk(where);
    else if (entry.isFile() && /\.(c|m)?js$/.test(entry.name)) files.push(where);
  }
})('.');
for (const file of files.sort()) {
  const done = spawnSync(process.execPath, ['--check', file], { stdio: 'inherit' });
  if (done.status !== 0) { console.error(`${file} does not parse`); process.exit(1); }
}
console.log(`checked ${files.length} JavaScript files`);
"""
#: Builds a C++ bot: ``$1`` the SDK's build folder, ``$2`` the program under ``build/``.  The
#: tools' output goes to stderr (the build log); stdout carries the program out as a tar.
BUILD_CPP = (
    "set -e\n"
    'cmake -S . -B /tmp/build -DBISCA_CPP_BUILD="$1" >&2\n'
    "cmake --build /tmp/build -j2 >&2\n"
    'if [ ! -x "/tmp/$2" ]; then echo "the build made no $2" >&2; exit 1; fi\n'
    'tar -C /tmp -czf - -- "$2"\n'
)
#: Where a C++ bot's program must be: what its build makes (``bisca new-bot cpp`` writes
#: ``build/my_bot``).
CPP_OUTPUT = "build"


_NO_SDK = (
    "this league has no {language} SDK installed, so it builds no {language} bot yet; its "
    "operator is told how to install it"
)


class BuildRefused(Exception):
    """What a version's files ask of its build that the arena does not do: its message is
    the build step's last line, the owner's to read; ``public``, the version's public reason,
    says the same without a word of the version's files, which are its owner's alone
    (review 41: a package.json's dependency was quoted on the bot's public page)."""

    def __init__(self, message: str, public: str | None = None) -> None:
        super().__init__(message)
        self.public = message if public is None else public


@dataclass(frozen=True)
class Toolchains:
    """The arena's own SDKs, from the clone the league server runs in (its current folder,
    as for ``bisca new-bot``): the operator installs them once (``make install`` and the two
    commands below), and every hosted build uses them read-only."""

    node_sdk: Path
    cpp_sdk: Path
    cpp_build: Path

    @classmethod
    def of_clone(cls, root: Path) -> Toolchains:
        root = root.resolve()
        return cls(root / "clients" / "node", root / "clients" / "cpp", root / "build" / "cpp")

    def check(self, language: BotLanguage) -> None:
        """:class:`BuildRefused` when this arena lacks ``language``'s SDK; how the operator
        installs it goes to the server's log (the refusal is the version's owner's, and its
        reason public: no folder of the server's in it)."""
        if language is BotLanguage.NODE and not (self.node_sdk / "node_modules").is_dir():
            log.warning(
                "a Node bot was refused: no Node SDK at %s with its packages; install them "
                "once with (cd %s && npm ci)",
                self.node_sdk,
                self.node_sdk,
            )
            raise BuildRefused(_NO_SDK.format(language="Node"))
        if language is BotLanguage.CPP and not (self.cpp_build / "bisca-config.cmake").is_file():
            log.warning(
                "a C++ bot was refused: no build of the C++ SDK at %s; make it once with "
                "cmake -S %s -B %s && cmake --build %s -j2",
                self.cpp_build,
                self.cpp_sdk,
                self.cpp_build,
                self.cpp_build,
            )
            raise BuildRefused(_NO_SDK.format(language="C++"))

    def cpp_folders(self) -> list[Path]:
        """What a C++ build sees of the SDK: its sources (headers, CMake files) and build."""
        return [self.cpp_sdk, self.cpp_build]


def cpp_program(manifest: Manifest) -> str:
    """The program a C++ bot's build must make (its command's first word, under ``build/``),
    or :class:`BuildRefused`."""
    program = PurePosixPath(manifest.command[0])
    if program.parts[:1] != (CPP_OUTPUT,) or len(program.parts) < 2:
        rule = (
            f"a C++ bot's command runs the program its build makes, under {CPP_OUTPUT}/ "
            f"(e.g. {CPP_OUTPUT}/my_bot)"
        )
        raise BuildRefused(
            f"{rule}, not {manifest.command[0]!r}", f"{rule}; its build log shows the command"
        )
    return program.as_posix()


def give_node_sdk(folder: Path, toolchains: Toolchains) -> None:
    """Make the arena's Node SDK the bot's ``bisca-client`` in ``folder`` (the arena's copy of
    its files), or :class:`BuildRefused` naming a dependency the arena does not provide."""
    package_json = folder / "package.json"
    package: dict[str, object] = {"private": True}
    if package_json.is_file():
        with open(package_json, "rb") as file:
            text = file.read(PACKAGE_JSON_BYTES + 1)
        if len(text) > PACKAGE_JSON_BYTES:
            raise BuildRefused(f"package.json is over {PACKAGE_JSON_BYTES} bytes")
        try:
            read = json.loads(text)
        except ValueError as problem:
            raise BuildRefused(f"package.json is not JSON: {problem}") from None
        except RecursionError:  # (review s58f: it stopped the gate for every account)
            raise BuildRefused("package.json is nested too deep to read") from None
        if not isinstance(read, dict):
            raise BuildRefused("package.json is not a JSON object")
        package = read
    dependencies = package.get("dependencies") or {}
    if not isinstance(dependencies, dict):
        raise BuildRefused("package.json: 'dependencies' is not an object")
    others = sorted(set(dependencies) - {NODE_SDK_PACKAGE})
    if others:
        rule = (
            "this league installs no packages (its builds have no network); a Node bot may "
            f"depend on {NODE_SDK_PACKAGE} only, which the league provides"
        )
        raise BuildRefused(
            f"package.json depends on {others[0]!r}: {rule}",
            f"package.json depends on another package (its build log names it): {rule}",
        )
    package["dependencies"] = {NODE_SDK_PACKAGE: f"file:{toolchains.node_sdk}"}
    package_json.unlink(missing_ok=True)
    package_json.write_text(json.dumps(package, indent=2) + "\n")
    package_json.chmod(0o644)
    modules = folder / "node_modules"
    modules.mkdir(mode=0o755, exist_ok=True)
    link = modules / NODE_SDK_PACKAGE
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.exists():
        shutil.rmtree(link)
    link.symlink_to(toolchains.node_sdk, target_is_directory=True)


def bot_command(manifest: Manifest, folder: Path) -> list[str]:
    """The manifest's command as the arena runs it from ``folder``: a Python bot on the
    arena's own Python (which has the SDK), a Node bot on the arena's ``node``, a C++ bot's
    program by its path in the folder; the files it names by absolute path.

    :class:`BuildRefused` naming a word that names a file outside ``folder``: the sandbox
    binds the folder of every file a bot's command names (:func:`bot_folders`, an absolute
    path, a path from the server's current folder, a word of an argument with spaces), so
    such a word would show the bot a folder of the machine.  Checked at every call, just
    before the command runs, as a file may appear later where a word points."""
    words = list(manifest.command)
    if manifest.language is BotLanguage.PYTHON:
        words[0] = sys.executable
    elif manifest.language is BotLanguage.NODE:
        words[0] = shutil.which("node") or "node"
    else:
        words[0] = str(folder / words[0])
    command = [
        words[0],
        *(str(folder / word) if (folder / word).is_file() else word for word in words[1:]),
    ]
    # The arena's own interpreter is bound as the interpreter it is, whatever its folder.
    program = set(bot_folders(command[:1]))
    for shown, word in zip(manifest.command[1:], command[1:], strict=True):
        outside = [
            bound
            for bound in bot_folders([command[0], word])
            if bound not in program and not bound.is_relative_to(folder.resolve())
        ]
        if outside:
            rule = "a hosted bot's command may name its own files only"
            raise BuildRefused(
                f"the command's word {shown!r} names a file outside the bot's folder: {rule}",
                f"a word of the command names a file outside the bot's folder (its build log "
                f"says which): {rule}",
            )
    return command
