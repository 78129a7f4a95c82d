"""``bisca serve`` whose trio tasks end by themselves (operator review, finding 1): it stayed up
half-alive (gRPC calls failed, a replay hung, nothing logged, SIGTERM did not stop it).  Now it
says why and exits non-zero, so that a supervisor restarts it."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import threading
from pathlib import Path

import pytest

from bisca.server import cli
from bisca.server.cli import _serve
from bisca.server.errors import StoreUnavailable
from bisca.server.referee import Referee

#: Only for the bug (a server that never stops by itself): then the test stops it.
BACKSTOP_S = 20


def test_serve_exits_non_zero_naming_the_error_that_ended_its_trio_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def failing_league(referee: Referee, games: object) -> None:
        async def lose_the_store() -> None:
            raise StoreUnavailable("cannot reach the store postgresql://db/league: refused")

        referee.spawn(lose_the_store)

    monkeypatch.setattr(_serve, "start_league", failing_league)
    caplog.set_level(logging.ERROR, logger="bisca.server")
    backstop = threading.Timer(BACKSTOP_S, os.kill, (os.getpid(), signal.SIGTERM))
    errors = io.StringIO()
    argv = ["serve", "--listen", "127.0.0.1:0", "--data", str(tmp_path / "d"), "--league", "belote"]
    backstop.start()
    try:
        with contextlib.redirect_stderr(errors):
            code = cli.main(argv)
    finally:
        backstop.cancel()
    assert code == 1, errors.getvalue()
    said = errors.getvalue()
    assert (
        "bisca serve: the arena stopped (its trio tasks ended: StoreUnavailable: cannot reach"
        in said
    )
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert logged and logged[0].startswith(
        "the arena's trio tasks ended: StoreUnavailable: cannot"
    ), logged
