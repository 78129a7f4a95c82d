"""A real ``bisca serve`` process on loopback, with a real SQLite file, and bots as separate OS
processes (the ``arena`` fixture of ``tests/conftest.py`` is one per test module)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc

from .commands import BISCA, rogue, sample_bot
from .waiting import poll, poll_until


@dataclass
class Arena:
    """A running server and what the tests need to drive it."""

    process: subprocess.Popen[str]
    address: str
    data_dir: Path
    admin_token: str
    tmp: Path
    bots: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _names: int = 0

    @property
    def stub(self) -> arena_pb2_grpc.ArenaStub:
        return arena_pb2_grpc.ArenaStub(grpc.insecure_channel(self.address))

    @property
    def auth(self) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {self.admin_token}")]

    def register(self, prefix: str = "bot") -> tuple[str, str]:
        """A new bot name and its token, registered in the server's store as ``bisca bots
        add`` registers one (``tests/cli/test_cli.py`` runs that command itself: a process of
        it per bot, 0.4 s of CPU each, was 5% of the suite's CPU)."""
        self._names += 1
        name = f"{prefix}{self._names}"
        with Store.in_directory(self.data_dir) as store:
            return name, store.bots.add(name)

    def launch(self, token: str, *argv: str) -> subprocess.Popen[bytes]:
        """A bot process with ``BISCA_ADDRESS`` and ``BISCA_TOKEN`` set; its stderr goes to a
        file of the arena's (a pipe nobody reads could fill up and stall it)."""
        env = {**os.environ, "BISCA_ADDRESS": self.address, "BISCA_TOKEN": token}
        with open(self.tmp / f"bot-{len(self.bots)}.stderr.log", "wb") as stderr:
            process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        self.bots.append(process)
        return process

    def sample_bot(self, token: str, name: str, *games: str) -> subprocess.Popen[bytes]:
        return self.launch(token, *sample_bot(name, *games, log_level="WARNING"))

    def rogue(self, token: str, *behaviour: str) -> Path:
        """Launch a scripted bot; returns the file it records what it receives in."""
        record = self.tmp / f"rogue-{token[-8:]}.jsonl"
        self.launch(token, *rogue(record, *behaviour))
        return record

    def create(self, game: str, bots: list[str], **fields: Any) -> str:
        request = pb.CreateMatchRequest(
            game=pb.Game.Value(f"GAME_{game.upper()}"), bots=bots, **fields
        )
        info = self.stub.CreateMatch(request, metadata=self.auth, timeout=10)
        return str(info.match_id)

    def info(self, match_id: str) -> pb.MatchInfo:
        return self.stub.GetMatch(
            pb.GetMatchRequest(match_id=match_id), metadata=self.auth, timeout=10
        )

    def wait(self, match_id: str, timeout: float = 120) -> pb.MatchInfo:
        """The match's info once it has ended (finished or failed)."""

        def ended() -> pb.MatchInfo | None:
            info = self.info(match_id)
            over = info.status in (pb.MATCH_STATUS_FINISHED, pb.MATCH_STATUS_FAILED)
            return info if over else None

        return poll_until(f"match {match_id} ended", ended, timeout, interval=0.1)


def read_record(path: Path, timeout: float = 10, until: str | None = None) -> list[dict[str, Any]]:
    """What a rogue bot received; with ``until``, once a message of that kind has arrived (an
    ``AssertionError`` if none does within ``timeout`` seconds)."""

    def messages() -> list[dict[str, Any]]:
        lines = path.read_text().splitlines() if path.exists() else []
        return [json.loads(line) for line in lines]

    if until is None:
        return messages()

    def arrived() -> list[dict[str, Any]] | None:
        received = messages()
        return received if any(until in message for message in received) else None

    found = poll(arrived, timeout)
    if found is None:
        raise AssertionError(f"{path}: no {until} message within {timeout:g} s: {messages()}")
    return found


def clock(
    move_ms: int, bank_ms: int, policy: str = "default", strikes: int = 0
) -> pb.ClockSettings:
    return pb.ClockSettings(
        move_ms=move_ms,
        bank_ms=bank_ms,
        policy=pb.TimeoutPolicy.Value(f"TIMEOUT_POLICY_{policy.upper()}"),
        **({"strikes": strikes} if strikes else {}),
    )


def start_server(
    tmp: Path, data_dir: Path, *argv: str, under: Sequence[str] = ()
) -> tuple[Arena, list[str]]:
    """``bisca ARGV`` (a ``serve`` command) as a process on ``data_dir`` (run by the command
    ``under``, if any, which execs it), its stderr in ``tmp/server.log``; returns the arena (on
    its first address) and every address it listens on, as its first line says."""
    process = subprocess.Popen(
        [*under, *BISCA, *argv],
        stdout=subprocess.PIPE,
        stderr=open(tmp / "server.log", "w"),  # noqa: SIM115 (kept open for the server's life)
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"serving on (.+?); data in", line)
    assert found, f"the server said {line!r}; {(tmp / 'server.log').read_text()[-3000:]}"
    addresses = found.group(1).split(", ")
    arena = Arena(
        process=process,
        address=addresses[0],
        data_dir=data_dir,
        admin_token=(data_dir / "admin.token").read_text().strip(),
        tmp=tmp,
    )
    return arena, addresses


def start_arena(tmp: Path, *options: str, under: Sequence[str] = ()) -> tuple[Arena, list[str]]:
    """A ``bisca serve`` process on loopback and on the data directory ``tmp/data`` (created
    if need be); ``options`` are more ``serve`` options (``--unix P``, ``--league ...``);
    ``under`` is a command that runs it (``prlimit --nofile=N --``)."""
    data_dir = tmp / "data"
    Store.in_directory(data_dir).close()
    return start_server(
        tmp,
        data_dir,
        *["-v", "serve", "--listen", "127.0.0.1:0", *options, "--data", str(data_dir)],
        under=under,
    )


def stop_arena(arena: Arena) -> None:
    """Stop the bots (thawing frozen ones) and the server, which must exit cleanly."""
    stop_server(arena.process, arena.bots, arena.tmp)


def stop_server(
    process: subprocess.Popen[str], bots: Sequence[subprocess.Popen[bytes]], tmp: Path
) -> None:
    """Stop ``bots`` (thawing frozen ones) and the server ``process``, which must exit
    cleanly (its log, ``tmp/server.log``, says why not)."""
    for bot in bots:
        if bot.poll() is None:
            bot.send_signal(signal.SIGCONT)
            bot.kill()
        bot.wait()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    log = (tmp / "server.log").read_text()[-3000:]
    assert process.returncode == 0, log
