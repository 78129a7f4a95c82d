"""A league's web app with accounts, served in process from a thread of its own, for the
command line's tests (``bisca account``, ``bisca submit``) to call over HTTP."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bisca.engine import Settings
from bisca.server.accounts import LeagueAccounts, Registration, SubmissionLimits
from bisca.server.league import LadderSettings, Matchmaker
from bisca.server.store import Store
from bisca.server.web import data_backend, serving_web


@dataclass
class LeagueApp:
    url: str
    data: Path
    accounts: LeagueAccounts


@contextmanager
def league_app(
    data: Path,
    registration: Registration,
    limits: SubmissionLimits | None = None,
    games: Mapping[str, Settings] | None = None,
    ladder: LadderSettings | None = None,
) -> Iterator[LeagueApp]:
    """``games``: the league's (``bisca serve --league``), as its matchmaker tells the app;
    the matchmaker is not run (no arena here); ``ladder``: the settings of the ladder the
    server would play (none is played here either)."""
    Store.in_directory(data).close()
    ready = threading.Event()
    found: list[LeagueApp] = []
    failure: list[BaseException] = []
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        async with data_backend(data) as backend:
            backend.accounts = LeagueAccounts(
                backend.store, registration, limits or SubmissionLimits(), data / "submissions"
            )
            if games is not None:
                backend.referee.matchmaker = Matchmaker(backend.referee, games)
            backend.ladder = ladder
            async with serving_web(backend, None, "127.0.0.1", 0) as url:
                found.append(LeagueApp(url.rstrip("/"), data, backend.accounts))
                ready.set()
                await stop.wait()

    def run() -> None:
        try:
            loop.run_until_complete(serve())
        except BaseException as problem:  # shown by the test that waits for it
            failure.append(problem)
            ready.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(60), "the league app did not start"
    if failure:
        raise failure[0]
    try:
        yield found[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(60)
        loop.close()
