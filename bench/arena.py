"""The referee against a bare grpc.aio echo server, in the same run.

* round trip per decision: one Belote match (4 deals) between 4 Python bots, wall time over
  decisions; the echo: one stream of sequential round trips of the same sizes;
* server CPU per decision at 16 and 64 concurrent matches (engine, clocks, logs, store and
  transport included), read from /proc for the server process; the echo: 16 and 64
  concurrent ping-pong streams.

The bots are grpc.aio clients in one load-driver process (``bench/_load.py``), so the server
process's CPU is the referee's alone.  The echo replies with as many messages, of the same
sizes, per decision as the referee sent in the 16-match run.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bisca.server.datadir import DataDir
from bisca.server.store import Store

PYTHON = sys.executable


def _load(*argv: str) -> dict[str, Any]:
    result = subprocess.run(
        [PYTHON, "-m", "bench._load", *argv], capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise RuntimeError(f"load driver failed: {result.stderr[-2000:]}")
    stats: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return stats


def _start_server(data: Path) -> tuple[subprocess.Popen[str], str, str]:
    server = subprocess.Popen(
        [PYTHON, "-m", "bisca.server.cli", "serve", "--listen", "127.0.0.1:0", "--data", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    found = re.search(r"serving on (\S+?)[;,]", line)
    if not found:
        server.kill()
        raise RuntimeError(f"the server said {line!r}")
    return server, found.group(1), DataDir(data).admin_token.read_text().strip()


def _start_echo(folder: Path, sizes: list[int]) -> tuple[subprocess.Popen[str], str]:
    port_file = folder / "echo.port"
    echo = subprocess.Popen(
        [PYTHON, "-m", "bench._echo", str(port_file), ",".join(map(str, sizes))], text=True
    )
    deadline = time.monotonic() + 30
    while not port_file.exists() or not port_file.read_text():
        if time.monotonic() > deadline:
            echo.kill()
            raise RuntimeError("the echo server did not start")
        time.sleep(0.05)
    return echo, f"127.0.0.1:{port_file.read_text()}"


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    del seconds  # these figures are per decision over whole matches, not timed loops
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        data = folder / "data"
        store = Store.in_directory(data)
        bots = [f"load{n}={store.add_bot(f'load{n}')}" for n in range(4 * 64)]
        store.close()
        server, address, admin = _start_server(data)
        try:
            pid = str(server.pid)
            one = [_load("arena", address, admin, pid, "1", "4", *bots[:4]) for _ in range(runs)]
            busy = {
                n: [
                    _load(
                        "arena",
                        address,
                        admin,
                        pid,
                        str(n),
                        "2",
                        *bots[: 4 * n],
                    )
                    for _ in range(runs)
                ]
                for n in (16, 64)
            }
        finally:
            _stop(server)
        sample = busy[16][0]
        per_decision_in = sample["bytes_in"] / sample["decisions"]
        messages = max(1, round(sample["messages_in"] / sample["decisions"]))
        reply_bytes = max(1, round(sample["bytes_out"] / sample["decisions"]))
        sizes = [max(1, round(per_decision_in / messages))] * messages
        echo, echo_address = _start_echo(folder, sizes)
        try:
            epid = str(echo.pid)
            echo_one = [
                _load("echo", echo_address, epid, "1", "400", str(reply_bytes), str(messages))
                for _ in range(runs)
            ]
            echo_busy = {
                n: [
                    _load("echo", echo_address, epid, str(n), "60", str(reply_bytes), str(messages))
                    for _ in range(runs)
                ]
                for n in (16, 64)
            }
        finally:
            _stop(echo)

    def round_trip(samples: list[dict[str, Any]]) -> float:
        return statistics.median(s["wall_s"] / s["decisions"] * 1e6 for s in samples)

    def cpu(samples: list[dict[str, Any]]) -> float:
        return statistics.median(s["server_cpu_s"] / s["decisions"] * 1e6 for s in samples)

    lines = [
        f"referee messages per decision: {messages} out ({per_decision_in:,.0f} bytes), "
        f"1 in ({reply_bytes} bytes)",
        f"referee round trip per decision, 1 belote match, 4 bots: {round_trip(one):,.0f} us",
        f"echo round trip per decision: {round_trip(echo_one):,.0f} us",
        f"ratio round trip vs echo: {round_trip(one) / round_trip(echo_one):.2f}",
    ]
    for n in (16, 64):
        ours, floor = cpu(busy[n]), cpu(echo_busy[n])
        lines += [
            f"referee server CPU per decision at {n} matches: {ours:,.0f} us",
            f"echo server CPU per decision at {n} streams: {floor:,.0f} us",
            f"ratio server CPU at {n} matches vs echo: {ours / floor:.2f}",
        ]
    return lines
