"""Which engine runs: the hot modules compiled with mypyc, or the plain Python they come from.

The plain-Python engine is the reference: it is what the sources say, it runs everywhere, and
the compiled engine is the same modules translated by mypyc (``MODULES``), so both give the same
cards, legal actions, observations and outcomes (``tests/engine`` runs every engine test on the
engine chosen, and the golden digests on the other one too).

**Where the compiled modules live.**  ``clients/python/setup.py`` compiles them at install
(``make install``) into ``_compiled/`` beside this file, never beside the sources: Python
prefers a ``_state.cpython-311-*.so`` to the ``_state.py`` next to it, so in the editable
install an edited ``.py`` would silently run the old compiled code.  ``_compiled/`` holds the
extension modules and ``manifest.json``: the interpreter they were built for and the SHA-256
of every ``.py`` of the engine at build time.

**When they are used** (:func:`activate`, at the import of :mod:`bisca.engine`): only if

* the environment variable ``BISCA_PURE`` is unset (or ``0``); ``BISCA_PURE=1`` always runs
  the plain engine;
* the manifest was built for this interpreter; and
* every ``.py`` of the engine hashes as it did at build: one edited file (a compiled module or
  one it imports, whose constants mypyc may have inlined) and none of the build is used.

Otherwise the plain engine runs and, when a build exists but cannot be used, one line on
standard error says why (``make install`` builds it again).  :data:`COMPILED` and
:data:`REASON` say what happened; ``python engine/bisca/engine/_native.py status`` prints it.

**Building** (:func:`build`): mypyc (part of mypy, a build requirement) translates ``MODULES``
to C and the C compiler builds them, in a child process so that a failure leaves the install
working on the plain engine.  A build is kept in a cache keyed by the sources' digest and the
interpreter (``$XDG_CACHE_HOME/bisca/engine``), so building a wheel of unchanged sources again
copies it instead of compiling.

This module is never compiled itself, and imports nothing of the engine: ``setup.py`` runs it
by path.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ENGINE_ROOT = Path(__file__).resolve().parent
COMPILED_DIR = ENGINE_ROOT / "_compiled"
MANIFEST = "manifest.json"
#: Written instead of a build when compiling failed at install: why.
FAILED = "build-failed.txt"
#: The modules mypyc compiles (paths inside the engine, without ``.py``): the hot path of a
#: match, the game interface (``_game``) included.  The rest (types, cards, errors, settings, the
#: registry) stays interpreted in both engines.
MODULES = ("_game", "_rng", "_tricks", "bestia/_settle", "bestia/_state", "belote/_state")
#: mypyc's group: one shared library ``bisca_engine__mypyc`` holds the code of every module.
GROUP = "bisca_engine"
PURE_SWITCH = "BISCA_PURE"

#: Whether the compiled modules are the ones imported, and why (set by :func:`activate`).
COMPILED = False
REASON = "not activated"


def build_tag() -> str:
    """The interpreter a build serves (its ABI and extension suffix)."""
    return f"{sys.implementation.cache_tag}{importlib.machinery.EXTENSION_SUFFIXES[0]}"


def source_digests(root: Path = ENGINE_ROOT) -> dict[str, str]:
    """The SHA-256 of every ``.py`` of the engine under ``root``, by path inside it."""
    digests = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == COMPILED_DIR.name or "__pycache__" in relative.parts:
            continue
        digests[relative.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules of a build, by full name, in its folder."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(file))
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def _stale_because(manifest: dict[str, object]) -> str | None:
    if manifest.get("tag") != build_tag():
        return f"it was built for {manifest.get('tag')}, this is {build_tag()}"
    built = manifest.get("sources")
    now = source_digests()
    if not isinstance(built, dict) or built != now:
        built = built if isinstance(built, dict) else {}
        changed = sorted(
            name for name in built.keys() | now.keys() if built.get(name) != now.get(name)
        )
        shown = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
        return f"the sources changed since it was built ({shown})"
    return None


def _warn(message: str) -> None:
    sys.stderr.write(f"bisca.engine: {message}; running the plain-Python engine\n")


def activate() -> None:
    """Import the compiled modules from now on when a usable build exists (see the module's
    docstring); else leave the plain engine in place.  Called once, by ``bisca.engine``."""
    global COMPILED, REASON
    if os.environ.get(PURE_SWITCH, "") not in ("", "0"):
        REASON = f"{PURE_SWITCH} is set"
        return
    manifest_path = COMPILED_DIR / MANIFEST
    if not manifest_path.is_file():
        try:
            why = (COMPILED_DIR / FAILED).read_text().strip()
            REASON = f"not compiled at install: {why}"
        except OSError:
            REASON = "no compiled build (the install compiles one with mypyc and a C compiler)"
        return
    try:
        manifest = json.loads(manifest_path.read_text())
        files = {name: COMPILED_DIR / file for name, file in manifest["files"].items()}
    except (OSError, ValueError, KeyError, AttributeError) as error:
        REASON = f"the compiled build's manifest is unreadable ({error})"
        _warn(REASON)
        return
    stale = _stale_because(manifest)
    if stale is not None:
        REASON = f"the compiled build is not used: {stale} (make install rebuilds it)"
        _warn(REASON)
        return
    finder = _CompiledFinder(files)
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module(f"{GROUP}__mypyc")
    except ImportError as error:
        sys.meta_path.remove(finder)
        REASON = f"the compiled build does not load ({error})"
        _warn(REASON)
        return
    COMPILED = True
    REASON = f"compiled with mypyc {manifest.get('mypy', '?')}"


def describe() -> str:
    """One line: which engine runs, and why."""
    return f"{'compiled' if COMPILED else 'pure'} ({REASON})"


# ---- building ---------------------------------------------------------------------------------

#: Run in a child process from the folder that holds ``bisca/engine``: mypyc, then the C build.
_COMPILE = """
import sys
from mypyc.build import mypycify
from setuptools import setup
modules, group, lib, temp = sys.argv[1].split(","), sys.argv[2], sys.argv[3], sys.argv[4]
extensions = mypycify(["--explicit-package-bases", *modules], opt_level="3",
                      target_dir=temp + "/c", group_name=group)
setup(name=group, ext_modules=extensions,
      script_args=["-q", "build_ext", "--build-lib", lib, "--build-temp", temp + "/o"])
"""


def _cache_folder(key: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bisca" / "engine" / key


def build(out: Path, root: Path = ENGINE_ROOT) -> str:
    """Compile the engine under ``root`` into ``out`` (which is replaced); what was done.

    Raises :class:`RuntimeError` (with mypyc's or the compiler's last words) when it cannot.
    """
    try:
        import mypy.version
    except ImportError as error:
        raise RuntimeError("mypyc is not installed (it comes with mypy)") from error
    sources = source_digests(root)
    tag = build_tag()
    key_text = json.dumps([sources, tag, mypy.version.__version__, MODULES, GROUP])
    cache = _cache_folder(hashlib.sha256(key_text.encode()).hexdigest()[:32])
    done = "copied from the cache"
    if not (cache / MANIFEST).is_file():
        done = "compiled"
        with tempfile.TemporaryDirectory(prefix="bisca-mypyc-") as temp:
            lib = Path(temp) / "lib"
            modules = ",".join(f"bisca/engine/{module}.py" for module in MODULES)
            result = subprocess.run(
                [sys.executable, "-c", _COMPILE, modules, GROUP, str(lib), temp],
                cwd=root.parent.parent,
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                last = (result.stderr.strip() or result.stdout.strip()).splitlines()[-3:]
                raise RuntimeError("mypyc failed: " + " / ".join(last))
            files = {}
            for library in lib.rglob("*.so"):
                relative = library.relative_to(lib)
                name = ".".join((*relative.parent.parts, library.name.split(".")[0]))
                files[name] = relative.as_posix()
            manifest = {"tag": tag, "mypy": mypy.version.__version__, "sources": sources}
            manifest["files"] = files
            (lib / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
            cache.parent.mkdir(parents=True, exist_ok=True)
            try:
                lib.rename(cache)
            except OSError:  # a build beside this one got there first: the same build
                if not (cache / MANIFEST).is_file():
                    raise
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(cache, out)
    (out / MANIFEST).touch()  # built now, for make (the copy keeps the cache's times)
    return done


def main(arguments: list[str]) -> int:
    """``build [OUT]``: compile (a failure is a warning: the plain engine stays); ``status``."""
    if arguments[:1] == ["build"]:
        out = Path(arguments[1]) if len(arguments) > 1 else COMPILED_DIR
        try:
            print(f"bisca.engine: {build(out)} into {out}")
        except (RuntimeError, OSError) as error:
            shutil.rmtree(out, ignore_errors=True)
            _warn(f"not compiled: {error}")
        return 0
    if arguments[:1] == ["status"]:
        activate()
        print(describe())
        return 0
    print("usage: _native.py build [OUT] | status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
