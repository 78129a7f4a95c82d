"""The referee against the transport's floor, in the same run, and the referee at scale.

The floor is a bare grpc.aio echo (``bench/_echo.py``) doing the least any arena protocol must:
one message out and one in per decision, of the sizes the referee's default mode sends and its
bots answer (measured in this run).

* round trip per decision: one Belote match (4 deals) between 4 bots, the time from the first
  request to the last reply over the decisions; the floor: one stream of sequential round
  trips; the table floor: one table of four streams (below).  The match's start and end
  (joining, the store's records, the log's sync) are shown apart, per match;
* server CPU per decision at 64 concurrent matches (engine, clocks, logs, store and transport
  included), read from /proc for the server process; the floor: 64 concurrent streams; the
  table floor: 64 tables of four streams where each message is answered on the next seat's
  stream (``bench/_echo.py``'s ``Table``: what grpc.aio costs a four-seat match per decision
  before any referee work), for live events with an event to every seat before each request;
* both for the default mode (events inside the requests) and for live events;
* the server's CPU split into a part per decision and a part per match (its creation, start and
  end: the store's records, the log's file and sync, the rating update, the first and last
  messages), fitted from the same 64 matches played with one deal and with eight;
* messages out per decision (everything the server sent the bots, over their decisions);
* scale: 1,000 bot streams in 250 concurrent one-deal matches on a fresh server: its peak
  threads and RSS, the timeouts the results record (every bot answers at once, so each one is
  a false timeout), and the delay from a bot's reply to its match's next request (p50, p99:
  that includes the load driver's own loop, which runs 1,000 streams on the other core).

The floors run beside the referee's server, and each sample of the referee is taken next to
its floors' (the one match, then the one stream and table; the 64 matches, then the 64 streams
and tables): a ratio is the median of those pairs' ratios, so that the machine's speed, which
moves by half within minutes here, moves both sides of a ratio alike.  A first 64-match run of
each mode, not counted, says which sizes the floors speak.

The bots are grpc.aio clients in one load-driver process (``bench/_load.py``), so the server
process's CPU is the server's alone.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bisca.server.datadir import DataDir
from bisca.server.store import Store

from ._echo import TABLE_SEATS

PYTHON = sys.executable
MODES = ("carried", "live")
#: What the lines of each event mode begin with.
LABELS = {"carried": "", "live": "live events: "}
BUSY_MATCHES = 64
SCALE_MATCHES = 250

Sample = dict[str, Any]


def _load(*argv: str, bots: list[str] | None = None) -> Sample:
    result = subprocess.run(
        [PYTHON, "-m", "bench._load", *argv],
        input="\n".join(bots or []),
        capture_output=True,
        text=True,
        timeout=180,
    )
    if result.returncode != 0:
        raise RuntimeError(f"load driver failed: {result.stderr[-2000:]}")
    stats: Sample = json.loads(result.stdout.strip().splitlines()[-1])
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


def _start_echo(folder: Path, sizes: list[int], name: str) -> tuple[subprocess.Popen[str], str]:
    port_file = folder / f"{name}.port"
    port_file.unlink(missing_ok=True)  # an earlier echo server's
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


def _bots(data: Path, count: int) -> list[str]:
    store = Store.in_directory(data)
    try:
        return [f"load{n}={store.bots.add(f'load{n}')}" for n in range(count)]
    finally:
        store.close()


@dataclass(frozen=True)
class Floor:
    """One floor's server, started once: ``bench/_echo.py`` speaking the sizes of a mode's
    messages, asked by ``bench/_load.py``'s ``echo`` (the echo floor) or ``table`` (the table
    floor: what grpc.aio costs a four-seat match per decision before any referee work)."""

    process: subprocess.Popen[str]
    address: str
    kind: str
    reply_bytes: int

    def sample(self, streams: int, decisions: int) -> Sample:
        """``streams`` streams (or tables) of ``decisions`` round trips each."""
        argv = [self.kind, self.address, str(self.process.pid), str(streams), str(decisions)]
        argv.append(str(self.reply_bytes))
        if self.kind == "echo":
            argv.append("1")  # one message back per message, as a request answers a reply
        return _load(*argv)


def _message_sizes(sample: Sample) -> tuple[int, int]:
    """The bytes of a request the bots of ``sample`` received and of a reply they sent, on
    average: the sizes the floors speak."""
    request_bytes = max(1, round(sample["request_bytes_in"] / sample["requests_in"]))
    reply_bytes = max(1, round(sample["bytes_out"] / sample["decisions"]))
    return request_bytes, reply_bytes


def _table_sizes(sample: Sample) -> list[int]:
    """What the table floor sends per decision in ``sample``'s mode: with live events an
    event to every seat first (as many per decision as the mode sends beside requests), then
    the request to the next seat."""
    request_bytes, _ = _message_sizes(sample)
    others = sample["messages_in"] - sample["requests_in"]
    # Events to every seat per decision: the messages beside the requests, seat by seat.
    rounds = round(others / sample["decisions"] / TABLE_SEATS)
    event_bytes = max(1, round((sample["bytes_in"] - sample["request_bytes_in"]) / max(1, others)))
    return [event_bytes] * rounds + [request_bytes]


def _start_floors(folder: Path, first: dict[str, Sample], floors: dict[str, Floor]) -> None:
    """Start the echo floor (the default mode's sizes) and each mode's table floor into
    ``floors`` (the caller stops those started, whatever happens)."""
    request_bytes, reply_bytes = _message_sizes(first["carried"])
    process, address = _start_echo(folder, [request_bytes], "echo")
    floors["echo"] = Floor(process, address, "echo", reply_bytes)
    for mode in MODES:
        process, address = _start_echo(folder, _table_sizes(first[mode]), f"table-{mode}")
        floors[mode] = Floor(process, address, "table", _message_sizes(first[mode])[1])


def _median(samples: list[Sample], figure: Callable[[Sample], float]) -> float:
    return statistics.median(figure(sample) for sample in samples)


def _paired(
    samples: list[Sample],
    anchors: list[Sample],
    figure: Callable[[Sample], float],
    anchor_figure: Callable[[Sample], float],
) -> float:
    """The median of the ratios of each sample to the anchor taken beside it."""
    return statistics.median(
        figure(sample) / anchor_figure(anchor)
        for sample, anchor in zip(samples, anchors, strict=True)
    )


def _fit(short: list[Sample], long: list[Sample]) -> tuple[float, float]:
    """The server's CPU as a match's own part plus a part per decision, from runs of the
    same matches with few and with many decisions: (µs per decision, ms per match)."""
    cpu = [_median(samples, lambda s: s["server_cpu_s"]) for samples in (short, long)]
    decisions = [_median(samples, lambda s: s["decisions"]) for samples in (short, long)]
    per_decision = (cpu[1] - cpu[0]) / (decisions[1] - decisions[0])
    per_match = (cpu[0] - per_decision * decisions[0]) / BUSY_MATCHES
    return per_decision * 1e6, per_match * 1e3


def _round_trip(sample: Sample) -> float:
    return float(sample["wall_s"] / sample["decisions"] * 1e6)


def _playing_round_trip(sample: Sample) -> float:
    return float(sample["playing_s"] / sample["decisions"] * 1e6)


def _start_and_end(sample: Sample) -> float:
    return float((sample["wall_s"] - sample["playing_s"]) * 1e3)


def _cpu(sample: Sample) -> float:
    return float(sample["server_cpu_s"] / sample["decisions"] * 1e6)


def _messages(sample: Sample) -> float:
    return float(sample["messages_in"] / sample["decisions"])


def _percentile(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, int(fraction * len(values)))] if values else 0.0


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    del seconds  # these figures are per decision over whole matches, not timed loops
    one: dict[str, list[Sample]] = {mode: [] for mode in MODES}
    busy: dict[str, list[Sample]] = {mode: [] for mode in MODES}
    table_one: dict[str, list[Sample]] = {mode: [] for mode in MODES}
    table_busy: dict[str, list[Sample]] = {mode: [] for mode in MODES}
    floor_one: list[Sample] = []
    floor_busy: list[Sample] = []
    short: list[Sample] = []
    long: list[Sample] = []
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        data = folder / "data"
        bots = _bots(data, 4 * SCALE_MATCHES)
        server, address, admin = _start_server(data)
        floors: dict[str, Floor] = {}
        try:
            pid = str(server.pid)

            def busy_run(deals: str, mode: str) -> Sample:
                return _load(
                    "arena",
                    *(address, admin, pid, str(BUSY_MATCHES), deals, mode),
                    bots=bots[: 4 * BUSY_MATCHES],
                )

            # A first busy run of each mode says which sizes the floors speak (and warms the
            # server up); it is not one of the figures.
            first = {mode: busy_run("2", mode) for mode in MODES}
            _start_floors(folder, first, floors)
            # Each referee sample is taken beside its anchors', one after the other, and each
            # ratio is the median of those pairs': this machine's speed moves by half within
            # minutes, and figures taken minutes apart moved their ratio with it.
            for _ in range(runs):
                for mode in MODES:
                    one[mode].append(
                        _load("arena", address, admin, pid, "1", "4", mode, bots=bots[:4])
                    )
                    table_one[mode].append(floors[mode].sample(1, 400))
                floor_one.append(floors["echo"].sample(1, 400))
                for mode in MODES:
                    busy[mode].append(busy_run("2", mode))
                    table_busy[mode].append(floors[mode].sample(BUSY_MATCHES, 120))
                floor_busy.append(floors["echo"].sample(BUSY_MATCHES, 60))
                # A match's own cost apart from its decisions': the same 64 matches with one
                # deal and with eight, alternated; the line through them (CPU against
                # decisions).
                short.append(busy_run("1", "carried"))
                long.append(busy_run("8", "carried"))
        finally:
            for floor in floors.values():
                _stop(floor.process)
            _stop(server)
        scale = []
        for _ in range(runs):  # a fresh server each time: its threads and memory at scale
            server, address, admin = _start_server(data)
            try:
                scale.append(
                    _load(
                        "arena",
                        *(address, admin, str(server.pid), str(SCALE_MATCHES), "1", "carried"),
                        bots=bots,
                    )
                )
            finally:
                _stop(server)

    request_bytes, reply_bytes = _message_sizes(first["carried"])
    floor_trip = _median(floor_one, _round_trip)
    floor_cpu = _median(floor_busy, _cpu)
    lines = [
        f"floor message sizes: {request_bytes} bytes out, {reply_bytes} bytes in",
        f"floor round trip per decision: {floor_trip:,.0f} us",
        f"floor server CPU per decision at {BUSY_MATCHES} streams: {floor_cpu:,.0f} us",
    ]
    for mode in MODES:
        label = LABELS[mode]
        lines += [
            f"{label}table floor round trip per decision, 1 table of 4 streams: "
            f"{_median(table_one[mode], _round_trip):,.0f} us",
            f"{label}table floor server CPU per decision at {BUSY_MATCHES} tables of 4 streams: "
            f"{_median(table_busy[mode], _cpu):,.0f} us",
        ]
    for mode in MODES:
        label = LABELS[mode]
        trip = _median(one[mode], _playing_round_trip)
        cpu = _median(busy[mode], _cpu)
        lines += [
            f"{label}referee messages out per decision: {_median(busy[mode], _messages):.2f}",
            f"{label}referee round trip per decision, 1 belote match: {trip:,.0f} us",
            f"{label}ratio round trip vs floor: "
            f"{_paired(one[mode], floor_one, _playing_round_trip, _round_trip):.2f}",
            f"{label}ratio round trip vs table floor: "
            f"{_paired(one[mode], table_one[mode], _playing_round_trip, _round_trip):.2f}",
            f"{label}referee match start and end, 1 belote match: "
            f"{_median(one[mode], _start_and_end):,.0f} ms",
            f"{label}referee wall time per decision with start and end, 1 belote match: "
            f"{_median(one[mode], _round_trip):,.0f} us",
            f"{label}referee server CPU per decision at {BUSY_MATCHES} matches: {cpu:,.0f} us",
            f"{label}ratio server CPU at {BUSY_MATCHES} matches vs floor: "
            f"{_paired(busy[mode], floor_busy, _cpu, _cpu):.2f}",
            f"{label}ratio server CPU at {BUSY_MATCHES} matches vs table floor: "
            f"{_paired(busy[mode], table_busy[mode], _cpu, _cpu):.2f}",
        ]
    per_decision, per_match = _fit(short, long)
    lines += [
        f"referee server CPU per decision, starts and ends apart (1 and 8 deals, "
        f"{BUSY_MATCHES} matches): {per_decision:,.0f} us",
        f"referee server CPU per match start and end (1 and 8 deals, {BUSY_MATCHES} "
        f"matches): {per_match:,.2f} ms",
    ]
    streams = 4 * SCALE_MATCHES
    where = f"at {streams} streams, {SCALE_MATCHES} matches"
    lines += [
        f"server threads {where}: {_median(scale, lambda s: s['peak_threads']):.0f}",
        f"server RSS {where}: {_median(scale, lambda s: s['peak_rss_mb']):.0f} MB",
        f"false timeouts {where}: {max(s['timeouts'] for s in scale)}",
        f"reply to next request p50 {where}: "
        f"{_median(scale, lambda s: _percentile(s['delays'], 0.5)) * 1e3:.1f} ms",
        f"reply to next request p99 {where}: "
        f"{_median(scale, lambda s: _percentile(s['delays'], 0.99)) * 1e3:.1f} ms",
        f"decisions per second {where}: "
        f"{_median(scale, lambda s: s['decisions'] / s['wall_s']):,.0f}",
    ]
    return lines
