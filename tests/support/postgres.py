"""A throwaway PostgreSQL server from Debian's packages, for the tests and the benchmark.

``initdb`` into a temporary folder, ``pg_ctl start`` on loopback at a free port, a database
per test, ``pg_ctl stop`` at the end.  PostgreSQL refuses to run as root: as root (CI) the
server runs as the package's ``postgres`` user, and its folder is given to that user.
The tests' servers are not about durability, so ``fsync`` is off; the benchmark's is
``durable`` (as a real store would be), so its figures compare fairly with SQLite's.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import psycopg

#: Where Debian's packages put each major version's programs.
BIN_GLOB = "/usr/lib/postgresql/*/bin"
USER = "bisca"


def find_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder, or ``None``."""
    found = sorted(
        Path("/").glob(BIN_GLOB.lstrip("/")),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    found = [path for path in found if (path / "initdb").exists()]
    return found[-1] if found else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    """One server: :meth:`start`, :meth:`new_database` as often as needed, :meth:`stop`."""

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable
        bin_dir = find_bin()
        if bin_dir is None:
            raise RuntimeError(
                f"no PostgreSQL in {BIN_GLOB}: `make system` installs Debian's postgresql"
            )
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="bisca-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.sockets.mkdir()
        self.port = free_port()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            account = pwd.getpwnam("postgres")
            for path in (self.root, self.sockets):
                os.chown(path, account.pw_uid, account.pw_gid)
        self._names = itertools.count(1)

    def _run(self, argv: Sequence[str]) -> None:
        command = list(argv)
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")

    def start(self) -> PostgresServer:
        if not self.data.exists():
            self._run([str(self.bin / "initdb"), "-A", "trust", "-U", USER, "-D", str(self.data)])
        options = f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1"
        options += " -c max_connections=200"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            [
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                options,
                "-l",
                str(self.root / "server.log"),
                "-w",
                "start",
            ]
        )
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``immediate``: as abruptly as a crash)."""
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])

    def remove(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        name = f"t{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self.url(name)
