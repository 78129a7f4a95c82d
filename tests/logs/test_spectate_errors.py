"""Watching refused, clearly: a finished match whose log is gone or is not a log, a live
match that has all the spectators it takes, an address that watches all the live matches it
may."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio

import bisca.server.edge._spectator as spectator_module  # its limit, patched
from bisca.engine import GAMES
from bisca.server.edge import open_watch, stop_watching
from bisca.server.errors import OperatorError
from bisca.server.logs import Audience, Watcher
from bisca.server.referee import (
    MatchPlan,
    MatchRunner,
    Referee,
    counted_address,
    counted_peer,
    outgoing,
)
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import connect
from tests.support.waiting import wait_until

CLOCK = {"move_ms": 1000, "bank_ms": 0, "policy": "default"}


@pytest.mark.parametrize("content", [None, b"not a log at all\n" * 4])
def test_a_log_that_cannot_be_read_is_refused_saying_why(
    tmp_path: Path, content: bytes | None
) -> None:
    """In the system's words, or the log reader's naming the file, and no folder of the
    server's: a spectator's token is anybody's it was given to, as the web app's replays say."""
    store = Store.in_directory(tmp_path / "data")
    store.matches.create("m-1", "belote", {}, 1, ["a", "b", "c", "d"], CLOCK)
    store.matches.fail("m-1", "bots never came")
    path = tmp_path / "m-1.binlog"
    if content is not None:
        path.write_bytes(content)
    store.logs.record("m-1", str(path), None)
    pushed: list[pb.WatchUpdate | None] = []

    async def watch() -> None:
        await open_watch(Referee(store), pb.WatchMatchRequest(match_id="m-1"), pushed.append)

    with pytest.raises(OperatorError) as refused:
        trio.run(watch)
    assert refused.value.status == "FAILED_PRECONDITION"
    why = "No such file or directory" if content is None else "m-1.binlog is not a Bisca match log"
    assert refused.value.message == f"the log of match m-1 cannot be read: {why}"
    assert pushed == []


def _with_live_matches(
    tmp_path: Path, count: int, body: Callable[[Referee, list[MatchRunner]], Awaitable[None]]
) -> None:
    """Run ``body`` beside ``count`` live Belote matches of four connected bots, each with a
    request open."""

    async def scenario() -> None:
        referee = Referee(Store.in_directory(tmp_path / "data"))
        names = ["a", "b", "c", "d"]
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            bots = await connect(referee, names, playing=False)
            plan = MatchPlan("belote", GAMES["belote"].settings({"deals": 1}), tuple(names))
            runners = [await referee.create_match(plan) for _ in range(count)]
            await wait_until(
                lambda: sum(len(b.of_kind("action_request")) for b in bots.values()) >= count
            )
            await body(referee, runners)
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_a_live_match_takes_a_bounded_number_of_spectators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each spectator of a live match is fed at every step, on the loop that plays it: past
    ``MAX_WATCHERS_PER_MATCH`` a new one is refused (RESOURCE_EXHAUSTED), until one leaves."""
    monkeypatch.setattr(spectator_module, "MAX_WATCHERS_PER_MATCH", 2)

    async def body(referee: Referee, runners: list[MatchRunner]) -> None:
        request = pb.WatchMatchRequest(match_id=runners[0].id)
        first = await open_watch(referee, request, lambda update: None)
        await open_watch(referee, request, lambda update: None)
        with pytest.raises(OperatorError) as refused:
            await open_watch(referee, request, lambda update: None)
        assert refused.value.status == "RESOURCE_EXHAUSTED"
        assert first is not None
        stop_watching(referee, runners[0].id, first)
        assert await open_watch(referee, request, lambda update: None) is not None

    _with_live_matches(tmp_path, 1, body)


def test_one_address_watches_a_bounded_number_of_live_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each live watcher is fed at every step and its front keeps what its client has not
    read: past ``MAX_LIVE_WATCHERS_PER_PEER`` from one address, whichever live matches they
    watch, a new one is refused (RESOURCE_EXHAUSTED, naming the address), while another
    address still watches; a watch that ends gives its place back, once."""
    monkeypatch.setattr(spectator_module, "MAX_LIVE_WATCHERS_PER_PEER", 3)

    async def body(referee: Referee, runners: list[MatchRunner]) -> None:
        first, second = runners

        async def watch(match_id: str, peer: str) -> Watcher | spectator_module.LogView:
            request = pb.WatchMatchRequest(match_id=match_id)
            return await open_watch(referee, request, lambda update: None, peer)

        kept = [await watch(first.id, "10.0.0.1"), await watch(first.id, "10.0.0.1")]
        kept.append(await watch(second.id, "10.0.0.1"))
        with pytest.raises(OperatorError) as refused:
            await watch(second.id, "10.0.0.1")
        assert refused.value.status == "RESOURCE_EXHAUSTED"
        assert "10.0.0.1 watches 3 live matches already" in refused.value.message
        assert await watch(second.id, "10.0.0.2") is not None
        stop_watching(referee, second.id, kept.pop())
        stop_watching(referee, first.id, kept[0])
        stop_watching(referee, first.id, kept[0])  # twice: its place is given back once
        assert await watch(first.id, "10.0.0.1") is not None
        assert await watch(second.id, "10.0.0.1") is not None
        with pytest.raises(OperatorError):
            await watch(first.id, "10.0.0.1")

    _with_live_matches(tmp_path, 2, body)


@pytest.mark.parametrize(
    ("peer", "counted_as"),
    [
        ("ipv4:127.0.0.1:5000", "127.0.0.1"),
        ("ipv6:[2001:db8::1]:5000", "2001:db8::/64"),
        ("ipv6:[2001:db8::2]:6001", "2001:db8::/64"),
        ("ipv6:%5B2001:db8::3%5D:6002", "2001:db8::/64"),  # as grpcio 1.85 writes it
        ("ipv6:%5B::1%5D:5000", "::/64"),
        ("ipv6:%5Bfe80::1%25eth0%5D:5000", "fe80::/64"),
        ("ipv6:[::ffff:10.0.0.7]:5000", "10.0.0.7"),
        ("unix:/run/bisca.sock", "unix"),
        ("door:/tmp/doors/d1", "door:/tmp/doors/d1"),
    ],
)
def test_a_grpc_peer_is_counted_as_the_web_counts_its_client(peer: str, counted_as: str) -> None:
    """The spectators' limits per address count a gRPC peer and a web client alike (an IPv6
    one by its /64): one client cannot take each limit once per front."""
    assert counted_peer(peer) == counted_as
    # The web's remote address of the same client.
    web_remote = {"127.0.0.1": "127.0.0.1", "2001:db8::/64": "2001:db8::7", "::/64": "::1"}
    if counted_as in web_remote:
        assert counted_address(web_remote[counted_as]) == counted_as


def test_a_spectator_joining_as_the_match_ends_gets_its_end() -> None:
    """A watch opened while the match's end is being recorded joins after the match told its
    spectators it ended: it gets what one there from the start got, the end included, and its
    stream ends, rather than waiting for an end told before it came (review s54 F2)."""
    state = GAMES["belote"].new_match(GAMES["belote"].settings({"deals": 1}), 7)
    encoder = outgoing.GameEncoder("belote")
    events = state.all_events(0)
    encoded = [(i, audience, encoder.event(i, event)) for i, (audience, event) in enumerate(events)]
    audience = Audience(4)
    start = pb.WatchUpdate(start=pb.WatchStart(match_id="m-1", live=True))
    end = pb.WatchUpdate(end=pb.WatchEnd(status=pb.MATCH_STATUS_FINISHED, steps=0))
    early: list[pb.WatchUpdate | None] = []
    audience.join(start, False, 0, early.append, 0)
    audience.publish(outgoing.log_events(0, encoded), 0, 0)
    audience.close(end, 0)
    late: list[pb.WatchUpdate | None] = []
    watcher = audience.join(start, False, 0, late.append, 0)
    assert late == early and late[-2:] == [end, None] and len(late) > 3
    assert watcher.closed and watcher not in audience.watchers
