"""A match that cannot go on fails alone: the referee, its other matches and the store go on,
and its log is left clearly incomplete, never silently cut."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import trio

import bisca.server.referee._journal as journal_module  # its LogWriter, patched
import bisca.server.referee._match as match_module  # its retry's first wait, shortened
from bisca.engine import GAMES
from bisca.server.datadir import log_file
from bisca.server.edge import CUT_OFF_REASON, CutOff, fail_cut_off_matches
from bisca.server.errors import StoreUnavailable
from bisca.server.logs import LogWriter, ServerKey, verify
from bisca.server.referee import MatchPlan, MatchRunner, Referee, ServerOptions, clock_settings
from bisca.server.store import Store
from tests.support.fake_bots import connect
from tests.support.waiting import wait_until

T = TypeVar("T")
NAMES = ["a", "b", "c", "d"]
ONE_DEAL = GAMES["belote"].settings({"deals": 1})


def _referee(tmp_path: Path) -> Referee:
    return Referee(
        Store.in_directory(tmp_path / "data"),
        ServerOptions(clock=clock_settings(5000, 0, "default"), join_timeout=10),
    )


async def _play(
    referee: Referee, match_id: str, match_dir: Path | None = None, *, rated: bool = False
) -> MatchRunner:
    runner = await referee.create_match(
        MatchPlan("belote", ONE_DEAL, tuple(NAMES), seed=1, match_id=match_id, rated=rated),
        match_dir=match_dir,
    )
    with trio.fail_after(30):
        await runner.done.wait()
    return runner


def test_a_full_disk_fails_the_match_and_the_server_plays_on(tmp_path: Path) -> None:
    """The log of the first match is written to /dev/full (every write: ENOSPC)."""
    full = tmp_path / "full"
    full.mkdir()
    log_file(full, "m-full").with_name("m-full.binlog.partial").symlink_to("/dev/full")

    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            await connect(referee, NAMES)
            failed = await _play(referee, "m-full", match_dir=full)
            assert failed.status == "failed"
            assert "log" in failed.reason and "No space left on device" in failed.reason
            record = referee.store.matches.get("m-full")
            assert record is not None and record.status == "failed"
            assert record.reason == failed.reason
            after = await _play(referee, "m-after")
            assert after.status == "finished", after.reason
            nursery.cancel_scope.cancel()

    trio.run(scenario)


class _FlakyFile:
    """A file whose ``fail_at``-th write fails with ENOSPC (the disk filled up for a moment);
    every other write goes through."""

    def __init__(self, file: Any, fail_at: int) -> None:
        self._file = file
        self._writes = 0
        self._fail_at = fail_at

    def write(self, data: bytes) -> int:
        self._writes += 1
        if self._writes == self._fail_at:
            raise OSError(errno.ENOSPC, "No space left on device")
        return int(self._file.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def test_a_log_write_that_fails_mid_match_leaves_a_partial_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record that could not be written is never papered over by a footer: the log stays
    ``.partial`` (incomplete, agreeing as far as it goes) and the store points at it."""

    class FlakyWriter(LogWriter):
        flush_after_s = 0.0  # every record its own write, so the 6th write is mid-match

        def __init__(self, path: Path, signer: ServerKey | None = None) -> None:
            super().__init__(path, signer)
            self._file = _FlakyFile(self._file, fail_at=6)  # type: ignore[assignment]

    monkeypatch.setattr(journal_module, "LogWriter", FlakyWriter)

    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            await connect(referee, NAMES)
            runner = await _play(referee, "m-flaky")
            assert runner.status == "failed" and "No space left on device" in runner.reason
            nursery.cancel_scope.cancel()
        final = log_file(tmp_path / "data" / "matches" / "m-flaky", "m-flaky")
        partial = final.with_name(final.name + ".partial")
        assert not final.exists(), "a log with a lost record was published as complete"
        verdict = verify(partial)
        assert verdict.ok and not verdict.complete
        record = referee.store.matches.get("m-flaky")
        assert record is not None and record.status == "failed"
        assert record.log_path == str(partial) and record.log_hash is None

    trio.run(scenario)


def test_a_server_stopping_as_a_match_finishes_records_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop comes right after the log is complete (FINISHED): the result is recorded
    too, so the store and the log agree."""

    async def scenario() -> None:
        referee = _referee(tmp_path)
        store = referee.store
        set_match_log = store.logs.record
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            assert referee.nursery is not None
            stop = referee.nursery.cancel_scope

            def log_recorded_then_stop(match_id: str, path: str, final_hash: str | None) -> None:
                set_match_log(match_id, path, final_hash)
                if final_hash is not None:
                    trio.from_thread.run_sync(stop.cancel)

            monkeypatch.setattr(store.logs, "record", log_recorded_then_stop)
            await connect(referee, NAMES)
            runner = await referee.create_match(
                MatchPlan("belote", ONE_DEAL, tuple(NAMES), seed=1, match_id="m-stop")
            )
            with trio.fail_after(30):
                await runner.done.wait()
            nursery.cancel_scope.cancel()
        record = store.matches.get("m-stop")
        assert record is not None and record.log_hash is not None
        assert record.status == "finished" and len(record.seats) == 4

    trio.run(scenario)


async def _asked(referee: Referee) -> MatchRunner:
    """A match started with bots that never answer, once its first request is out (the seat
    asked has 5 s: long enough to look at the match while its bot thinks)."""
    bots = await connect(referee, NAMES, playing=False)
    runner = await referee.create_match(MatchPlan("belote", ONE_DEAL, tuple(NAMES), seed=1))
    await wait_until(lambda: any(bot.of_kind("action_request") for bot in bots.values()))
    return runner


def test_a_matchs_log_reaches_the_disk_while_a_bot_thinks(tmp_path: Path) -> None:
    """Records wait in memory for a batch's write, but never longer than ``FLUSH_AFTER_S``,
    even when no record follows (a bot thinks for seconds): a server killed then leaves
    them in the ``.partial`` log."""

    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            runner = await _asked(referee)
            writer = runner.journal._writer
            assert writer is not None and writer.records >= 2  # the header and the deal
            # Within the 5 s the bot may think, well after the batch's 0.1 s.
            on_disk = writer.partial_path.stat
            await wait_until(lambda: on_disk().st_size == writer.bytes_written, timeout=4)
            assert not writer.waiting
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_server_stopping_mid_match_leaves_every_record_in_the_partial_log(
    tmp_path: Path,
) -> None:
    """The referee stops (its nursery cancelled) while a bot thinks: the match's records that
    waited for their batch are written and the file closed, for the next start to record."""

    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            runner = await _asked(referee)
            writer = runner.journal._writer
            assert writer is not None
            nursery.cancel_scope.cancel()
        assert runner.done.is_set() and writer.records >= 2
        assert writer.partial_path.stat().st_size == writer.bytes_written
        assert not writer.partial_path.with_suffix("").exists()  # not completed: .partial

    trio.run(scenario)


def test_a_forfeit_after_the_matchs_task_stopped_changes_nothing(tmp_path: Path) -> None:
    """A forfeit that comes late (a bot process's watcher, the web table's timer) to a match
    whose task stopped (the referee stopping) plays no step and opens no request: nothing
    would close it."""

    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            runner = await _asked(referee)
            nursery.cancel_scope.cancel()
        assert runner.done.is_set() and referee.pending == {}
        assert runner.state is not None and runner.state.to_act is not None
        steps = runner.steps
        runner.forfeit_seat(runner.state.to_act, "its bot process ended", crashed=True)
        assert (runner.steps, referee.pending) == (steps, {})

    trio.run(scenario)


def test_a_match_given_up_before_its_turn_is_not_played(tmp_path: Path) -> None:
    """A match recorded ahead (a ladder's later rotation) and given up while it waited (a
    retried job plays its seating again) fails when its turn comes, saying so: neither played
    nor rated beside the replay of the same seating."""

    async def scenario() -> None:
        referee = _referee(tmp_path)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            await connect(referee, NAMES)
            plan = MatchPlan("belote", ONE_DEAL, tuple(NAMES), seed=7, rated=True)
            plan = await referee.record_ahead(plan)
            assert plan.match_id is not None
            cut = referee.store.matches.abandon_unfinished
            assert await trio.to_thread.run_sync(cut, [plan.match_id], "cut off") == 1
            runner = await referee.create_match(plan)
            with trio.fail_after(30):
                await runner.done.wait()
            assert runner.status == "failed" and runner.steps == 0
            assert "given up before it started" in runner.reason
            record = referee.store.matches.get(plan.match_id)
            assert record is not None and record.status == "failed"
            assert referee.store.ratings.leaderboard("belote") == []
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_failure_the_store_could_not_take_is_recorded_once_it_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Operator review 55, finding 9: the disk full, the match's log fails it and the store
    cannot record that either; once the disk has room again the failure is recorded with its
    own reason (not left 'running' for the next start's sweep to blame the stop), and the
    match's waiters were not held meanwhile."""
    full = tmp_path / "full"
    full.mkdir()
    log_file(full, "m-full").with_name("m-full.binlog.partial").symlink_to("/dev/full")

    async def scenario() -> None:
        referee = _referee(tmp_path)
        store_fail = referee.store.matches.fail
        disk_full = trio.Event()  # set: the disk has room again
        tries: list[str] = []

        def fail_while_full(match_id: str, reason: str, steps: int = 0) -> None:
            tries.append(match_id)
            if not disk_full.is_set():
                raise StoreUnavailable(f"the store {tmp_path} failed: database or disk is full")
            store_fail(match_id, reason, steps)

        store_log = referee.store.logs.record

        def log_while_full(match_id: str, path: str, final_hash: str | None) -> None:
            if path.endswith(".partial") and not disk_full.is_set():  # (as it is closed)
                raise StoreUnavailable(f"the store {tmp_path} failed: database or disk is full")
            store_log(match_id, path, final_hash)

        monkeypatch.setattr(referee.store.matches, "fail", fail_while_full)
        monkeypatch.setattr(referee.store.logs, "record", log_while_full)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            await connect(referee, NAMES)
            failed = await _play(referee, "m-full", match_dir=full)
            assert failed.status == "failed" and "No space left on device" in failed.reason
            record = referee.store.matches.get("m-full")
            assert record is not None and record.status == "running"
            await wait_until(lambda: len(tries) >= 2, timeout=30)  # tried again, still full
            disk_full.set()
            await wait_until(
                lambda: getattr(referee.store.matches.get("m-full"), "status", None) == "failed",
                timeout=60,
            )
            record = referee.store.matches.get("m-full")
            assert record is not None and record.reason == failed.reason
            # Where its log was left, which the lost store could not take as it was closed
            # (review s59a, F3).
            assert record.log_path == str(full / "m-full.binlog.partial"), record
            assert record.log_hash is None
            nursery.cancel_scope.cancel()

    trio.run(scenario)
    # Said in a line each, no traceback: an outage cuts every match at once (operator re-test).
    said = [r for r in caplog.records if r.name.startswith("bisca.server.match")]
    lost = [r for r in said if "could not record the failure" in r.getMessage()]
    assert lost and all(r.exc_info is None for r in said), [r.getMessage() for r in said]
    assert any("the store answers again" in r.getMessage() for r in said)


def _lost_for(calls: int, real: Callable[..., T], path: Path, *, after: bool = False) -> Any:
    """``real``, but its first ``calls`` calls raise as a lost store does (``after``: each of
    them once ``real`` has done its work: a commit whose answer the outage lost)."""
    left = [calls]

    def flaky(*args: object, **kwargs: object) -> T:
        if left[0] > 0:
            left[0] -= 1
            if after:
                real(*args, **kwargs)
            raise StoreUnavailable(f"the store {path} failed: disk I/O error")
        return real(*args, **kwargs)

    return flaky


@pytest.mark.parametrize("committed", [False, True], ids=["not-committed", "answer-lost"])
def test_a_finished_matchs_result_the_lost_store_could_not_take_is_recorded_once_it_answers(
    committed: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Review s59a, F1: a match played to its end, its log complete and signed, met a lost
    store with its result's transaction, and was recorded failed, unrated ("the store failed").
    Its result is now tried again until the store answers: the match finished, its waiters
    held until its result is in the store, rated once (also when the outage lost only the
    commit's answer), and said in a line each, without a traceback."""
    monkeypatch.setattr(match_module, "LATE_RECORD_POLL_S", 0.05)

    async def scenario() -> None:
        referee = _referee(tmp_path)
        matches = referee.store.matches
        flaky = _lost_for(2, matches.finish_and_rate, tmp_path, after=committed)
        monkeypatch.setattr(matches, "finish_and_rate", flaky)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            await connect(referee, NAMES)
            runner = await _play(referee, "m-lost", rated=True)
            assert runner.status == "finished", runner.reason
            record = matches.get("m-lost")
            assert record is not None and record.status == "finished", record
            assert [s.score for s in record.seats] == [r.score for r in runner.results]
            assert record.log_path == str(runner.log_path) and record.log_hash, record
            board = referee.store.ratings.leaderboard("belote")
            assert {entry.matches for entry in board} == {1}, board
            nursery.cancel_scope.cancel()

    trio.run(scenario)
    said = [r for r in caplog.records if r.name.startswith("bisca.server.match")]
    lines = [r.getMessage() for r in said]
    assert any("could not record its result" in line for line in lines), lines
    assert any("recording its result: the store answers again" in line for line in lines), lines
    assert not any("failed" in line.split(": ", 1)[1][:7] for line in lines), lines
    assert all(r.exc_info is None for r in said), lines


@pytest.mark.parametrize("log_is", ["ours", "another-key", "tampered"])
def test_a_finished_match_its_stopped_server_could_not_record_is_recorded_from_its_log(
    log_is: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review s59a, F1: a server stopped (or killed) between a finished match's complete log
    and its result's transaction left the match 'running', and the next start marked it
    failed, "cut off", though its log says who won.  The next start records it finished from
    its log when the log replays and is signed by the directory's key; any other log (signed
    by another key, changed) is cut off as before."""
    monkeypatch.setattr(match_module, "LATE_RECORD_POLL_S", 0.05)
    key = ServerKey.generate()
    data = tmp_path / "data"

    async def scenario() -> MatchRunner:
        referee = Referee(
            Store.in_directory(data),
            ServerOptions(clock=clock_settings(5000, 0, "default"), join_timeout=10),
            key,
        )
        lost = _lost_for(1_000_000, referee.store.matches.finish_and_rate, tmp_path)
        monkeypatch.setattr(referee.store.matches, "finish_and_rate", lost)
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            await connect(referee, NAMES)
            runner = await referee.create_match(
                MatchPlan("belote", ONE_DEAL, tuple(NAMES), seed=1, match_id="m-cut", rated=True)
            )
            await wait_until(lambda: runner.status == "finished", timeout=30)
            nursery.cancel_scope.cancel()  # the server stops before the store answers
        referee.store.close()
        return runner

    runner = trio.run(scenario)
    assert runner.log_path is not None and runner.log_path.name == "m-cut.binlog"
    if log_is == "tampered":
        data_bytes = bytearray(runner.log_path.read_bytes())
        data_bytes[-40] ^= 1  # in the signature
        runner.log_path.write_bytes(bytes(data_bytes))
    store = Store.in_directory(data)
    try:
        record = store.matches.get("m-cut")
        assert record is not None and record.status == "running"
        trusted = key.public if log_is != "another-key" else ServerKey.generate().public
        settled = fail_cut_off_matches(store, data, trusted)
        record = store.matches.get("m-cut")
        assert record is not None
        if log_is == "ours":
            assert settled == CutOff(failed=0, recorded=1)
            assert record.status == "finished", record
            assert record.seats == runner.results
            assert record.steps == runner.steps
            assert record.log_path == str(runner.log_path)
            assert verify(runner.log_path, key.public, store.logs.recorded()).trusted
            assert {row.matches for row in store.ratings.leaderboard("belote")} == {1}
        else:
            assert settled == CutOff(failed=1, recorded=0)
            assert record.status == "failed" and record.reason == CUT_OFF_REASON, record
            assert store.ratings.leaderboard("belote") == []
    finally:
        store.close()
