"""``bisca.client.run`` against a scripted in-process server: the stream, a clean end, fatal
errors, and reconnects after transport failures."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from bisca import wire
from bisca.client import CHANNEL_OPTIONS, Backoff, BotRejected, ConnectionLost, run
from bisca.client.bots import make_bot
from bisca.engine import new_match
from bisca.v1 import arena_pb2
from tests.support.waiting import poll_until

from .fake_server import FakeArena, serve, socket_address, welcome
from .support import action_request

FAST = Backoff(initial=0.01, maximum=0.05, budget=5.0)
STATE = new_match("belote", seed=1)


def one_request(
    fake: FakeArena, number: int, requests: Iterator[arena_pb2.BotMessage], context: Any
) -> Iterator[arena_pb2.ServerMessage]:
    """Welcome, one action request, read the reply, end the stream cleanly."""
    yield welcome()
    yield action_request(STATE, f"r{number}")
    fake.read_reply(requests)


def served(tmp_path: Path, script: Any) -> tuple[FakeArena, str, grpc.Server]:
    fake = FakeArena(script)
    address = socket_address(tmp_path)
    return fake, address, serve(fake, address)


def test_run_plays_until_the_server_ends_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, address, server = served(tmp_path, one_request)
    monkeypatch.setenv("BISCA_ADDRESS", address)
    monkeypatch.setenv("BISCA_TOKEN", "from-env")
    try:
        run(make_bot("belote", "greedy"), name="greedy", version="3")
    finally:
        server.stop(None)
    [hello] = fake.hellos
    assert (hello.token, hello.bot_name, hello.bot_version) == ("from-env", "greedy", "3")
    assert list(hello.games) == [arena_pb2.GAME_BELOTE]
    [reply] = fake.replies
    assert reply.request_id == "r1"
    assert wire.decode_game_action("belote", reply.action) in STATE.legal_actions()


def test_a_fatal_error_raises_bot_rejected_without_reconnecting(tmp_path: Path) -> None:
    def refuse(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield arena_pb2.ServerMessage(
            error=arena_pb2.Error(
                code=arena_pb2.ERROR_CODE_UNKNOWN_TOKEN, message="unknown token", fatal=True
            )
        )

    fake, address, server = served(tmp_path, refuse)
    try:
        with pytest.raises(BotRejected, match="ERROR_CODE_UNKNOWN_TOKEN: unknown token"):
            run(make_bot("belote", "random"), address=address, token="bad", name="b", backoff=FAST)
    finally:
        server.stop(None)
    assert len(fake.hellos) == 1


def test_a_transport_error_reconnects_and_says_hello_again(tmp_path: Path) -> None:
    def drop_first(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        if number == 1:
            yield welcome()
            context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        yield from one_request(fake, number, requests, context)

    fake, address, server = served(tmp_path, drop_first)
    try:
        run(make_bot("belote", "random"), address=address, token="tok", name="b", backoff=FAST)
    finally:
        server.stop(None)
    assert [hello.token for hello in fake.hellos] == ["tok", "tok"]
    assert [reply.request_id for reply in fake.replies] == ["r2"]


def test_a_killed_server_is_reconnected_to_when_it_comes_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def hang(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield welcome()
        for _ in requests:
            pass

    first, address, server = served(tmp_path, hang)
    errors: list[BaseException] = []

    def bot_process() -> None:
        try:
            run(make_bot("belote", "random"), address=address, token="t", name="b", backoff=FAST)
        except BaseException as error:
            errors.append(error)

    def failures() -> int:
        return sum("; reconnecting in " in record.getMessage() for record in caplog.records)

    caplog.set_level(logging.WARNING, logger="bisca.client")
    thread = threading.Thread(target=bot_process)
    thread.start()
    assert first.connected.wait(5)
    server.stop(None).wait()
    # The bot retries against nothing: its stream failed, and then so did a new connection.
    poll_until("a connection to no server", lambda: failures() >= 2, timeout=FAST.budget)
    second = FakeArena(one_request)
    server = serve(second, address)
    try:
        thread.join(10)
        assert not thread.is_alive()
    finally:
        server.stop(None)
    assert errors == []
    assert len(second.hellos) == 1 and len(second.replies) == 1


def test_reconnecting_gives_up_after_the_backoff_budget(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ConnectionLost, match=r"within 0\.3 s"):
        run(
            make_bot("belote", "random"),
            address=socket_address(tmp_path),
            token="t",
            name="b",
            backoff=Backoff(initial=0.01, maximum=0.05, budget=0.3),
        )
    assert time.monotonic() - started < 5


def test_without_reconnect_the_first_failure_is_final(tmp_path: Path) -> None:
    with pytest.raises(ConnectionLost, match="UNAVAILABLE") as raised:
        run(
            make_bot("belote", "random"),
            address=socket_address(tmp_path),
            token="t",
            name="b",
            reconnect=False,
        )
    assert isinstance(raised.value.__cause__, grpc.RpcError)


def test_address_and_token_must_be_given_or_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BISCA_ADDRESS", raising=False)
    monkeypatch.delenv("BISCA_TOKEN", raising=False)
    with pytest.raises(ValueError, match="BISCA_ADDRESS"):
        run(make_bot("belote", "random"), token="t", name="b")
    with pytest.raises(ValueError, match="BISCA_TOKEN"):
        run(make_bot("belote", "random"), address="localhost:1", name="b")
    with pytest.raises(ValueError, match="unknown game 'poker'"):
        run(
            make_bot("belote", "random"),
            address="localhost:1",
            token="t",
            name="b",
            games=["poker"],
        )


def test_channel_options_keep_connections_alive_and_apart() -> None:
    options = dict(CHANNEL_OPTIONS)
    assert options["grpc.keepalive_time_ms"] == 10_000
    assert options["grpc.keepalive_timeout_ms"] == 5_000
    assert "grpc.http2.ping_timeout_ms" in options
    assert options["grpc.use_local_subchannel_pool"] == 1


def test_with_no_logging_set_up_run_says_on_stderr_that_it_is_connected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bot whose author configured no logging still shows "welcomed" (the Node and C++ SDKs
    do), and run() leaves the logger as it found it."""
    _fake, address, server = served(tmp_path, one_request)
    monkeypatch.setattr(logging.root, "handlers", [])  # (pytest's own capture handler too)
    sdk_logger = logging.getLogger("bisca.client")
    before = (list(sdk_logger.handlers), sdk_logger.level)
    try:
        run(make_bot("belote", "random"), address=address, token="t", name="plain")
    finally:
        server.stop(None)
    err = capsys.readouterr().err
    assert err.count(" INFO bisca.client: welcomed as 'bot'") == 1, err
    assert (list(sdk_logger.handlers), sdk_logger.level) == before


def test_logging_the_application_set_up_gets_each_line_once_and_nothing_is_added(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake, address, server = served(tmp_path, one_request)
    try:
        with caplog.at_level(logging.INFO, logger="bisca.client"):
            run(make_bot("belote", "random"), address=address, token="t", name="configured")
    finally:
        server.stop(None)
    assert sum("welcomed as" in record.getMessage() for record in caplog.records) == 1
    assert "welcomed" not in capsys.readouterr().err


#: A bot process as the docs write one: run() at the top level, nothing caught.
CRASHING_BOT = """
import sys
from bisca.client import run

def choose(request):
    if sys.argv[2] == "raises":
        raise ValueError("a deliberate bug")
    return None  # a path of choose() without a return

run(choose, name="crashing", address=sys.argv[1], token="t", reconnect=False)
"""


@pytest.mark.system
@pytest.mark.parametrize("bug", ["raises", "returns None"])
def test_a_crashed_bot_process_exits_1_with_its_report_once(tmp_path: Path, bug: str) -> None:
    """The SDK's report (the traceback, or the answer), then one line: not Python's second
    traceback of the same frames through BotCrashed's cause."""
    _fake, address, server = served(tmp_path, one_request)
    try:
        done = subprocess.run(
            [sys.executable, "-c", CRASHING_BOT, address, bug.split()[0]],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop(None)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert lines[-1].startswith("bisca.client: the bot's bot callable, on request r1"), lines
    if bug == "raises":
        assert done.stderr.count("Traceback (most recent call last):") == 1, done.stderr
        assert done.stderr.count("ValueError: a deliberate bug") == 1
    else:
        assert "Traceback" not in done.stderr, done.stderr
        assert done.stderr.count("the bot returned None, which is not an action of the game") == 1
