"""What each crossing of a decision costs, measured apart, in this process.

A decision goes transport -> bridge -> match -> engine -> log -> transport.  The transport's
share is the floor of ``bench/arena.py``; here are the others, per decision of 2-deal Belote
matches whose seats play a legal action drawn at random (seeded: the same decisions each run;
until 2026-12-07 the engine, encoding and log lines played the first legal action, which in
Belote is a pass: every deal was thrown in after eight passes, and those lines measured
bidding alone, 16 decisions a match):

* bridge: a call from asyncio into guest-mode trio and its answer back (``TrioGuest.call``),
  and a batch of 64 one-way calls through the referee's :class:`Mailbox`, per call;
* hand-off: the process's CPU (every thread's) for a call of nothing in a worker thread and
  back, as a served match makes its three store calls (``trio.to_thread.run_sync`` in
  guest-mode trio), and as asyncio makes one (``loop.run_in_executor``);
* engine: the step (apply) and the next question (observation, legal actions);
* encoding: the question's bytes, the events' bytes and the request message put together;
* log: the step's and the events' log records (hash chain, framing, batched writes);
* core: the whole of a decision in the sans-I/O match core, as the referee takes a reply
  (``_core.py``): the reply parsed and judged, the step settled, applied and logged, the next
  question, events and request built, for 64 interleaved matches, no transport.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import random
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio

from bisca.engine import GAMES
from bisca.server.edge import Mailbox, TrioGuest
from bisca.server.logs import LogWriter
from bisca.server.referee import ClockSettings, MatchCore, outgoing, verify_reply_message
from bisca.server.referee import core as match_core
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

MATCHES = 20
CROSSINGS = 2_000
CORE_MATCHES = 64


def _per_decision(runs: int, measure: Callable[[], tuple[float, int]]) -> float:
    """The median over ``runs`` of seconds per item, in microseconds."""
    samples = []
    for _ in range(runs):
        seconds, items = measure()
        samples.append(seconds / items * 1e6)
    return statistics.median(samples)


def _engine() -> tuple[float, int]:
    spent, decisions = 0.0, 0
    for seed in range(MATCHES):
        state = GAMES["belote"].new_match(GAMES["belote"].settings({"deals": 2}), seed)
        rng = random.Random(seed)
        start = time.perf_counter()
        while not state.is_over:
            seat = state.to_act
            assert seat is not None
            state.observation(seat)
            state.apply(rng.choice(state.legal_actions()))
            decisions += 1
        spent += time.perf_counter() - start
    return spent, decisions


def _encoding_and_log() -> tuple[float, float, int]:
    """Seconds spent encoding, seconds spent writing log records, decisions."""
    encoding = logging = 0.0
    decisions = 0
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(MATCHES):
            state = GAMES["belote"].new_match(GAMES["belote"].settings({"deals": 2}), seed)
            encoder = outgoing.GameEncoder("belote")
            writer = LogWriter(Path(folder) / f"{seed}.binlog")
            rng = random.Random(seed)
            delivered = 0
            while not state.is_over:
                seat = state.to_act
                assert seat is not None
                observation, legal = state.observation(seat), state.legal_actions()
                played = rng.choice(legal)
                events = state.all_events(delivered)
                start = time.perf_counter()
                encoded = [
                    (delivered + i, audience, encoder.event(delivered + i, event))
                    for i, (audience, event) in enumerate(events)
                ]
                question = encoder.question(observation, legal)
                head = outgoing.request_head("r1", "m-bench", seat)
                outgoing.action_request(
                    head, question, 5000, 0, 1, [data for _, _, data in encoded]
                )
                batch = outgoing.log_events(decisions, encoded)
                step = outgoing.log_step(
                    log_pb2.LogStep(seat=seat), question, encoder.action(played)
                )
                encoded_at = time.perf_counter()
                writer.write_entry(outgoing.log_events_entry(batch))
                writer.write_entry(step)
                logged_at = time.perf_counter()
                encoding += encoded_at - start
                logging += logged_at - encoded_at
                delivered += len(events)
                state.apply(played)
                decisions += 1
            writer.abandon()
    return encoding, logging, decisions


def _core() -> tuple[float, int]:
    """Seconds the core spends on the decisions of 64 interleaved 2-deal Belote matches whose
    bots answer a random legal action, and how many decisions."""
    ids = itertools.count()
    spent, decisions = 0.0, 0
    with tempfile.TemporaryDirectory() as folder:
        playing = []
        for seed in range(CORE_MATCHES):
            core = MatchCore(
                match_id=f"m-{seed}",
                game="belote",
                settings=GAMES["belote"].settings({"deals": 2}),
                seed=seed,
                bots=["a", "b", "c", "d"],
                clock=ClockSettings(),
                deal_salt=bytes(16),
                new_request_id=lambda: f"r{next(ids)}",
            )
            for seat in range(4):
                core.seat_connected(seat, live_events=False, bot_version="", now=0.0)
            writer = LogWriter(Path(folder) / f"{seed}.binlog")
            request = _logged_request(core.start(0.0, 0), writer)
            assert request is not None, "a match starts with a request"
            playing.append((core, writer, random.Random(seed), request))
        now = 0.0
        while playing:
            still = []
            for core, writer, rng, request in playing:
                reply = pb.BotMessage(
                    action=pb.ActionReply(
                        request_id=request.request_id, action=rng.choice(request.legal_actions)
                    )
                ).SerializeToString()
                now += 0.001
                start = time.perf_counter()
                action = verify_reply_message(pb.BotMessage.FromString(reply)).action
                outputs = core.reply(request.seat, action, now)
                for output in outputs:
                    if isinstance(output, match_core.AppendLog):
                        writer.write_entry(output.entry)
                spent += time.perf_counter() - start
                decisions += 1
                following = _logged_request(outputs, None)
                if following is None:
                    writer.abandon()
                else:
                    still.append((core, writer, rng, following))
            playing = still
    return spent, decisions


def _logged_request(
    outputs: list[match_core.Output], writer: LogWriter | None
) -> pb.ActionRequest | None:
    """The request among a core's outputs (parsed, as its bot reads it), logging the rest."""
    request = None
    for output in outputs:
        if isinstance(output, match_core.Send):
            message = pb.ServerMessage.FromString(output.data)
            if message.WhichOneof("kind") == "action_request":
                request = message.action_request
        elif isinstance(output, match_core.AppendLog) and writer is not None:
            writer.write_entry(output.entry)
    return request


def _bridge(runs: int) -> tuple[float, float]:
    """(µs per asyncio -> trio -> asyncio call, µs per mailbox call in batches of 64)."""

    async def main() -> tuple[float, float]:
        guest = TrioGuest()

        async def idle(task_status: trio.TaskStatus[None]) -> None:
            task_status.started()
            await trio.sleep_forever()

        async def nothing() -> None:
            return None

        await guest.start(idle)
        try:
            calls = []
            for _ in range(runs):
                start = time.perf_counter()
                for _ in range(CROSSINGS):
                    await guest.call(nothing)
                calls.append((time.perf_counter() - start) / CROSSINGS * 1e6)
            mailbox = Mailbox(guest)
            batched = []
            for _ in range(runs):
                received = []
                start = time.perf_counter()
                for _ in range(CROSSINGS // 64):
                    for item in range(64):
                        mailbox.call(received.append, item)
                    await guest.call(nothing)  # the batch has crossed when this returns
                batched.append((time.perf_counter() - start) / (CROSSINGS // 64 * 64) * 1e6)
            return statistics.median(calls), statistics.median(batched)
        finally:
            await guest.stop()

    return asyncio.run(main())


def _process_cpu() -> float:
    """Seconds of CPU of this process, every thread's."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _hand_offs(runs: int) -> tuple[float, float]:
    """(µs of the process's CPU per worker-thread call of nothing from guest-mode trio, the
    same from asyncio's executor)."""

    def nothing() -> None:
        return None

    async def in_trio() -> float:
        start = _process_cpu()
        for _ in range(CROSSINGS):
            await trio.to_thread.run_sync(nothing)
        return (_process_cpu() - start) / CROSSINGS * 1e6

    async def main() -> tuple[float, float]:
        guest = TrioGuest()

        async def idle(task_status: trio.TaskStatus[None]) -> None:
            task_status.started()
            await trio.sleep_forever()

        await guest.start(idle)
        try:
            from_trio = [await guest.call(in_trio) for _ in range(runs)]
        finally:
            await guest.stop()
        loop = asyncio.get_running_loop()
        from_asyncio = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as executor:
            for _ in range(runs):
                start = _process_cpu()
                for _ in range(CROSSINGS):
                    await loop.run_in_executor(executor, nothing)
                from_asyncio.append((_process_cpu() - start) / CROSSINGS * 1e6)
        return statistics.median(from_trio), statistics.median(from_asyncio)

    return asyncio.run(main())


def run(runs: int = 3, seconds: float = 2.0) -> list[str]:
    del seconds
    call, batched = _bridge(runs)
    from_trio, from_asyncio = _hand_offs(runs)
    engine = _per_decision(runs, _engine)
    passes = [_encoding_and_log() for _ in range(runs)]
    encoding = statistics.median(e / n * 1e6 for e, _, n in passes)
    logged = statistics.median(w / n * 1e6 for _, w, n in passes)
    core = _per_decision(runs, _core)
    return [
        f"bridge asyncio -> trio -> asyncio call: {call:,.1f} us",
        f"bridge mailbox call, in batches of 64: {batched:,.2f} us",
        f"hand-off to a worker thread and back, CPU, from guest-mode trio: {from_trio:,.0f} us",
        f"hand-off to a worker thread and back, CPU, from asyncio: {from_asyncio:,.0f} us",
        f"engine per belote decision (apply, observation, legal actions): {engine:,.1f} us",
        f"encoding per belote decision (question, events, request): {encoding:,.1f} us",
        f"log records per belote decision (step and events, written): {logged:,.1f} us",
        f"referee core per belote decision (reply judged, applied, logged, next request, "
        f"{CORE_MATCHES} matches, no transport): {core:,.1f} us",
    ]
