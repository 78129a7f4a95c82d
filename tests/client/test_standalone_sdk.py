"""The Python SDK on its own: ``clients/python`` is the ``bisca-client`` distribution, and a
bot on *another* Python (a fresh virtual environment, no ``--system-site-packages``, no
project) plays a real match as ``python my_bot.py``, the README's command.

The wheel is built with the project's own build tools (``--no-build-isolation``: the
project's virtualenv has setuptools and grpcio-tools), and installed offline into a fresh
environment (``tests/support/sdk.py``), which keeps the whole setup to a few seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sdk import RUNTIME, fresh_environment, pip, wheelhouse

ROOT = Path(__file__).resolve().parents[2]

BOT = '''\
"""A first bot, as the README writes one, telling where its Python is."""

import sys

from bisca.client import MatchEnd, run


def report(end: MatchEnd) -> None:
    print(f"ended {end.status} on {sys.prefix}", flush=True)


run(lambda request: request.legal_actions[0], name="first", games=["belote"], on_match_end=report)
'''


@pytest.fixture(scope="module")
def sdk_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment's ``bin`` folder, with ``bisca-client`` installed."""
    wheels = wheelhouse(*RUNTIME)
    tmp = tmp_path_factory.mktemp("sdk")
    pip(
        "wheel",
        "--no-build-isolation",
        "--no-deps",
        "--wheel-dir",
        str(tmp),
        str(ROOT / "clients" / "python"),
    )
    (wheel,) = tmp.glob("bisca_client-*.whl")
    venv = tmp / "venv"
    python = fresh_environment(venv)
    pip(
        "--python",
        str(python),
        "install",
        "--no-index",
        "--find-links",
        str(wheels),
        str(wheel),
    )
    return venv / "bin"


def run_in(bin_folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_folder / "python"), "-c", code], capture_output=True, text=True, timeout=60
    )


def test_the_distribution_carries_what_a_bot_imports_and_nothing_else(sdk_python: Path) -> None:
    done = run_in(
        sdk_python,
        "import bisca, bisca.client, bisca.client.bots, bisca.engine.belote, bisca.wire;"
        " from bisca.v1 import arena_pb2, arena_pb2_grpc;"
        " print(bisca.__file__, bisca.client.__file__)",
    )
    assert done.returncode == 0, done.stderr
    namespace, client = done.stdout.split()
    assert namespace == "None"  # ``bisca`` is a namespace, shared with the project's parts
    assert client.startswith(str(sdk_python.parent))
    server = run_in(sdk_python, "import bisca.server")
    assert "No module named 'bisca.server'" in server.stderr


def test_a_bot_on_its_own_python_plays_a_sandboxed_match(sdk_python: Path, tmp_path: Path) -> None:
    """``python my_bot.py`` names the author's ``python`` (found on their PATH, here the
    fresh environment's), and the sandbox lets that interpreter and its packages in."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "my_bot.py").write_text(BOT)
    folder.chmod(0o755)  # the sandboxed bot runs as a uid of its own (the guide says so)
    data = tmp_path / "data"
    path = f"{sdk_python}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bisca.server.cli", "match", "--game", "belote"),
            *("--deals", "1", "--data", str(data), "--bot", "python my_bot.py"),
            *("--bot", "random") * 3,
        ],
        cwd=folder,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "belote, finished" in done.stdout
    (stdout,) = data.glob("matches/*/seat0.stdout.log")
    assert stdout.read_text() == f"ended finished on {sdk_python.parent}\n"
