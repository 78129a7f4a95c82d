"""Every command the README and the docs show is run by a test.

The commands are read from the shell blocks of the documentation (:data:`DOC_FILES`).  Each
must be claimed by a rule of :data:`RULES`:

* :class:`Run`: this file runs it, as written, in a copy of the project's layout (its
  ``.venv/bin/bisca``, ``clients/``, ``examples/``, ...) on a data directory with a finished
  match in it; a placeholder the docs use (``MATCH_ID``, ``LOG``, ``DIR``, a token
  ``bisca_...``, an optional ``[--flag ...]``) is replaced by a real value;
* :class:`Serve`: a server command, started here, stopped once it says where it listens;
* :class:`Elsewhere`: a named test runs that command (a C++ build, ``make test``, ...); this
  file checks that the test exists.

A documented command that no rule claims fails :func:`test_every_documented_command_is_covered`,
naming the file and line: document a command, and say here how it is tested.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.commands import BISCA

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = sorted(
    [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("clients/*/README.md")]
)
_SHELL_BLOCK = re.compile(r"^```(?:sh|bash|shell|console)\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class DocCommand:
    file: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


def documented_commands() -> list[DocCommand]:
    """Every command of every shell block: continuation lines joined, comments dropped."""
    found = []
    for path in DOC_FILES:
        text = path.read_text()
        name = str(path.relative_to(ROOT))
        for block in _SHELL_BLOCK.finditer(text):
            first_line = text.count("\n", 0, block.start(1)) + 1
            pending, start = "", 0
            for offset, raw in enumerate(block.group(1).splitlines()):
                if not pending:
                    start = first_line + offset
                line = raw.rstrip()
                if line.endswith("\\"):
                    pending += line[:-1].strip() + " "
                    continue
                command = _without_comment(pending + line.strip()).strip()
                pending = ""
                if command and not command.startswith("#"):
                    found.append(DocCommand(name, start, command))
    return found


def _without_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` outside quotes, after a space)."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] == " "):
            return line[:index]
    return line


# --------------------------------------------------------------------------------------------
# How each command is tested


@dataclass(frozen=True)
class Run:
    """Run here; ``code`` is the exit code the command must end with."""

    code: int = 0


@dataclass(frozen=True)
class Serve:
    """A server: started here and stopped once its first line says it serves."""


@dataclass(frozen=True)
class Elsewhere:
    """Run by the test ``target`` (``path::name``), or by CI itself (``target`` = ``CI``)."""

    target: str


Rule = Run | Serve | Elsewhere

#: The first rule whose pattern matches a command (``re.search``) claims it.
RULES: list[tuple[str, Rule]] = [
    (r"^make (run|test)$", Elsewhere("CI")),  # .ci/run is `make test`; CI runs both
    (r"^(\.venv/bin/)?bisca serve ", Serve()),
    (r"^(\.venv/bin/)?bisca (replay verify --key|tournament|leaderboard|key|bots add)", Run()),
    (r"^(\.venv/bin/)?bisca replay (verify|show|export) ", Run()),
    (r"^(\.venv/bin/)?bisca match --game \w+ (--rounds 1 )?--bot (greedy|random) ", Run()),
]


def rule_for(command: DocCommand) -> Rule | None:
    for pattern, rule in RULES:
        if re.search(pattern, command.text):
            return rule
    return None


def test_every_documented_command_is_covered() -> None:
    commands = documented_commands()
    assert len(commands) > 20, "the shell blocks of the docs were not found"
    unclaimed = [str(command) for command in commands if rule_for(command) is None]
    assert unclaimed == [], "documented commands no test runs (add a rule):\n" + "\n".join(
        unclaimed
    )


def test_the_tests_named_for_commands_exist() -> None:
    for _, rule in RULES:
        if isinstance(rule, Elsewhere) and rule.target != "CI":
            path, name = rule.target.split("::")
            assert re.search(rf"^def {name}\(", (ROOT / path).read_text(), re.MULTILINE), rule


# --------------------------------------------------------------------------------------------
# Running them


@dataclass
class DocRoot:
    """A folder laid out like the project for the docs' commands, and what fills their
    placeholders."""

    path: Path
    values: dict[str, str]

    def expand(self, text: str) -> str:
        text = re.sub(r"\s*\[[^\]]*\]", "", text)  # optional parts of a synopsis
        for placeholder, value in self.values.items():
            text = re.sub(rf"(?<![\w/.-]){re.escape(placeholder)}(?![\w-])", value, text)
        return text

    def environment(self) -> dict[str, str]:
        path = f"{self.path / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        return {**os.environ, "PATH": path, "PYTHONUNBUFFERED": "1"}


@pytest.fixture(scope="module")
def doc_root() -> Iterator[DocRoot]:
    # Not under pytest's 0700 temporary folder: sandboxed bots run as other users and must be
    # able to enter the folders of their commands.
    path = Path(tempfile.mkdtemp(prefix="bisca-docs-"))
    path.chmod(0o755)
    (path / ".venv").symlink_to(Path(sys.prefix))
    for folder in ("clients", "examples", "proto", "docs"):
        (path / folder).symlink_to(ROOT / folder)
    data = path / "bisca-data"
    played = subprocess.run(
        [*BISCA, "match", "--game", "belote", *["--bot", "random"] * 4, "--seed", "3"],
        cwd=path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert played.returncode == 0, played.stdout + played.stderr
    match_id = re.search(r"match (m-[0-9a-f]+)", played.stdout)
    assert match_id, played.stdout
    log = data / "local" / "matches" / match_id.group(1) / f"{match_id.group(1)}.binlog"
    key = subprocess.run(
        [*BISCA, "key", "--data", str(data / "local")], capture_output=True, text=True, cwd=path
    )
    assert key.returncode == 0, key.stderr
    values = {
        "MATCH_ID": match_id.group(1),
        "LOG": str(log),
        "DIR": str(data / "local"),
        "ed25519:...": re.search(r"ed25519:\S+", key.stdout).group(0),  # type: ignore[union-attr]
    }
    yield DocRoot(path, values)
    shutil.rmtree(path, ignore_errors=True)


def _claimed(kind: type) -> list[DocCommand]:
    return [command for command in documented_commands() if isinstance(rule_for(command), kind)]


@pytest.mark.parametrize("command", _claimed(Run), ids=str)
def test_a_documented_command_runs(doc_root: DocRoot, command: DocCommand) -> None:
    rule = rule_for(command)
    assert isinstance(rule, Run)
    line = doc_root.expand(command.text)
    done = subprocess.run(
        line,
        shell=True,
        cwd=doc_root.path,
        env=doc_root.environment(),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == rule.code, f"{command}\nran: {line}\n{done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("command", _claimed(Serve), ids=str)
def test_a_documented_server_starts(doc_root: DocRoot, command: DocCommand) -> None:
    line = doc_root.expand(command.text)
    # Its own port, so that servers of several documented commands never meet.
    line = re.sub(r"(--listen \S+?):\d+", r"\1:0", line)
    line = re.sub(r"--unix \S+", f"--unix {doc_root.path / 'bisca.sock'}", line)
    if "--listen" not in line:
        line += " --listen 127.0.0.1:0"
    server = subprocess.Popen(
        shlex.split(line),
        cwd=doc_root.path,
        env=doc_root.environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert "serving on" in first, f"{command}\nran: {line}\n{first}{server.stderr}"
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
