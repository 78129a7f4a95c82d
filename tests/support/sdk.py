"""Fresh Python environments for the SDK on its own (``clients/python``, ``bisca-client``).

The wheels come from a wheelhouse in ``build/wheelhouse``, downloaded once at the versions this
project runs on (the SDK's runtime dependencies and what building it needs) and reused offline
afterwards.  An environment gets no pip of its own (``venv --without-pip``): the project's pip
installs into it with ``--python``, which keeps a fresh environment to a few seconds.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

from tests.support.shared_build import shared_build

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / "build" / "wheelhouse"
#: The SDK's runtime dependencies, pinned to what the project's environment runs.
RUNTIME = [f"{name}=={importlib.metadata.version(name)}" for name in ("grpcio", "protobuf")]
#: What building ``clients/python`` in an isolated environment needs (its pyproject's
#: ``build-system.requires``), pinned the same way.
BUILD = [
    *(
        f"{name}=={importlib.metadata.version(name)}"
        # mypy: its mypyc compiles the engine; the same version as the project's finds the
        # project's own build in the compiled engine's cache instead of compiling again.
        for name in ("setuptools", "grpcio-tools", "mypy")
    ),
    "wheel",
]


def pip(*arguments: str) -> None:
    """The project's pip, which must succeed; it builds in the checkout's folders (in-tree
    builds of ``clients/python``, the wheelhouse), so it holds the shared build lock."""
    with shared_build():
        done = subprocess.run(
            [sys.executable, "-m", "pip", "--disable-pip-version-check", *arguments],
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def wheelhouse(*requirements: str) -> Path:
    """:data:`WHEELHOUSE`, holding ``requirements`` (downloaded the first time only)."""
    stamp = WHEELHOUSE / (".have-" + "-".join(sorted(requirements)))
    with shared_build():
        if not stamp.exists():
            pip("download", "--only-binary=:all:", "--dest", str(WHEELHOUSE), *requirements)
            stamp.touch()
    return WHEELHOUSE


def fresh_environment(folder: Path) -> Path:
    """A new virtual environment in ``folder`` on the base Python, without pip; its ``python``."""
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    return folder / "bin" / "python"
