"""The Python SDK checks the deal: the commitment of ``MatchStarted`` against the salt and seed
``MatchEnded`` reveals (``MatchEnd.deal_verified``), network-free."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

import pytest

from bisca import wire
from bisca.client import MatchEnd, Session
from bisca.engine import GAMES
from bisca.v1 import arena_pb2

from .support import action_request, belote_started, through_wire

MATCH = "m-5eed"
SALT = bytes(range(16))
SEED = 2**63 - 25  # a 63-bit seed, like the server's random ones
SEAT = 1


def started(
    commitment: bytes, *, match_id: str = MATCH, resumed: bool = False
) -> arena_pb2.ServerMessage:
    return belote_started(match_id, SEAT, commitment, resumed=resumed)


def ended(
    *,
    salt: bytes = SALT,
    seed: int = SEED,
    match_id: str = MATCH,
    status: int = arena_pb2.MATCH_STATUS_FINISHED,
    reason: str = "",
    sealed: bool = False,
) -> arena_pb2.ServerMessage:
    return through_wire(
        arena_pb2.ServerMessage(
            match_ended=arena_pb2.MatchEnded(
                match_id=match_id,
                seat=SEAT,
                status=status,
                reason=reason,
                seed=seed,
                deal_salt=salt,
                deal_sealed=sealed,
            )
        )
    )


def play_out(*messages: arena_pb2.ServerMessage) -> MatchEnd:
    """The MatchEnd the bot's hook gets after ``messages``."""
    ends: list[MatchEnd] = []
    sdk = Session(lambda request: None, token="t", name="n", on_match_end=ends.append)
    for message in messages:
        assert sdk.handle(message) == []
    [end] = ends
    return end


COMMITMENT = wire.deal_commitment(SALT, SEED, MATCH)


def test_the_commitment_is_sha256_of_salt_seed_big_endian_and_match_id() -> None:
    # The byte layout the bot guide documents, spelled out once by hand.
    layout = SALT + SEED.to_bytes(8, "big") + MATCH.encode("utf-8")
    assert hashlib.sha256(layout).digest() == COMMITMENT
    assert len(COMMITMENT) == 32


def test_a_correct_commitment_verifies(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="bisca.client"):
        end = play_out(started(COMMITMENT), ended())
    assert end.deal_verified is True
    assert (end.seed, end.deal_salt) == (SEED, SALT)
    assert "deal verified" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    "reveal",
    [
        pytest.param(lambda: ended(salt=bytes(16)), id="wrong salt"),
        pytest.param(lambda: ended(seed=SEED + 1), id="wrong seed"),
        pytest.param(lambda: ended(match_id="m-other"), id="wrong match id"),
    ],
)
def test_a_wrong_salt_seed_or_match_id_is_a_mismatch(
    reveal: Callable[[], arena_pb2.ServerMessage], caplog: pytest.LogCaptureFixture
) -> None:
    message = reveal()
    # The start commits to COMMITMENT, made with SALT, SEED and MATCH; the end reveals one of
    # them changed (a wrong match id: the start and the end are of "m-other", whose commitment
    # the server made with MATCH's id).
    start = started(COMMITMENT, match_id=message.match_ended.match_id)
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        end = play_out(start, message)
    assert end.deal_verified is False
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "does not match its commitment" in error.getMessage()
    assert COMMITMENT.hex() in error.getMessage()


def test_no_commitment_gives_none(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        assert play_out(started(b""), ended()).deal_verified is None
        # an end of a match whose start this connection never got: nothing to check against
        assert play_out(ended()).deal_verified is None
    assert not caplog.records


def test_a_failed_match_reveals_its_salt_and_is_checked_too() -> None:
    failed = arena_pb2.MATCH_STATUS_FAILED
    end = play_out(started(COMMITMENT), ended(status=failed, reason="a bot never connected"))
    assert (end.status, end.deal_verified) == ("failed", True)
    end = play_out(started(COMMITMENT), ended(status=failed, seed=SEED - 1))
    assert end.deal_verified is False


def test_a_commitment_with_nothing_revealed_is_not_verified(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        assert play_out(started(COMMITMENT), ended(salt=b"")).deal_verified is False
    assert "revealed no salt" in caplog.text


def test_a_sealed_deal_is_not_checked_yet_and_not_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A twin dealt from the same seed is still played: the server withholds seed and salt."""
    with caplog.at_level(logging.INFO, logger="bisca.client"):
        end = play_out(started(COMMITMENT), ended(salt=b"", seed=0, sealed=True))
    assert (end.deal_verified, end.deal_sealed, end.seed) == (None, True, 0)
    assert "stays sealed" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_resumed_start_must_carry_the_same_commitment(caplog: pytest.LogCaptureFixture) -> None:
    same = play_out(started(COMMITMENT), started(COMMITMENT, resumed=True), ended())
    assert same.deal_verified is True
    # A server that commits to another deal after a reconnect, then reveals what hashes to the
    # second commitment, has still changed the deal mid-match.
    other_salt = bytes(16)
    second = wire.deal_commitment(other_salt, SEED, MATCH)
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        end = play_out(started(COMMITMENT), started(second, resumed=True), ended(salt=other_salt))
    assert end.deal_verified is False
    assert "commits to another deal" in caplog.text


def test_commitments_survive_a_reconnect_and_are_kept_per_seat() -> None:
    ends: list[MatchEnd] = []
    sdk = Session(lambda request: None, token="t", name="n", on_match_end=ends.append)
    sdk.hello()
    sdk.handle(started(COMMITMENT))
    sdk.hello()  # a new connection: the open requests are forgotten, the commitment is not
    sdk.handle(ended())
    sdk.handle(ended())  # a second end of the same seat has no commitment left to check
    assert [end.deal_verified for end in ends] == [True, None]


def test_the_match_start_hook_sees_the_commitment() -> None:
    starts: list[object] = []
    sdk = Session(lambda request: None, token="t", name="n", on_match_start=starts.append)
    sdk.handle(started(COMMITMENT))
    [start] = starts
    assert getattr(start, "deal_commitment", None) == COMMITMENT


def _start_shown(seed: int) -> arena_pb2.ServerMessage:
    """The events seat SEAT is shown at the start of a Belote match dealt from ``seed``."""
    state = GAMES["belote"].new_match(GAMES["belote"].settings({}), seed)
    events = [
        wire.encode_game_event("belote", index, event)
        for index, (audience, event) in enumerate(state.all_events(0))
        if audience >> SEAT & 1
    ]
    return through_wire(
        arena_pb2.ServerMessage(
            events=arena_pb2.EventBatch(match_id=MATCH, seat=SEAT, events=events)
        )
    )


def test_cards_dealt_from_the_committed_seed_verify() -> None:
    assert play_out(started(COMMITMENT), _start_shown(SEED), ended()).deal_verified is True


def test_cards_dealt_from_another_seed_than_the_committed_one_are_caught(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The hostile-server review's rigged deal: an honest commitment to SEED, the seat dealt
    the cards of seed 999, SEED revealed. The hash matches; the cards do not."""
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        end = play_out(started(COMMITMENT), _start_shown(999), ended())
    assert end.deal_verified is False
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "not dealt from the seed the server committed to" in error.getMessage()
    assert f"is not what seed {SEED} deals" in error.getMessage()


def test_a_seat_the_match_does_not_have_is_not_verified(caplog: pytest.LogCaptureFixture) -> None:
    """A server that seats the bot at seat 9 of a four-seat match shows it no card of the
    start; nothing to compare is not a start that holds."""
    seat = 9
    commitment = wire.deal_commitment(SALT, SEED, MATCH)
    end = ended()
    end.match_ended.seat = seat
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        verdict = play_out(belote_started(MATCH, seat, commitment), end)
    assert verdict.deal_verified is False
    assert any(
        "seat 9 is not a seat of a 4-seat belote match" in r.getMessage() for r in caplog.records
    )


def test_a_deal_first_seen_on_a_resumed_start_is_not_checked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What the seat was shown before (a bot that restarted, or a commitment forgotten past
    the bounds and brought back by a resumed start) is unknown: not checkable, not verified."""
    with caplog.at_level(logging.INFO, logger="bisca.client"):
        end = play_out(started(COMMITMENT, resumed=True), _start_shown(SEED), ended())
    assert end.deal_verified is None
    assert any("a resumed start came first" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("before", ["request", "events"])
def test_a_request_or_events_before_the_start_make_the_deal_untrusted(
    before: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A rigged request answered (or rigged events shown) before any start, then a start:
    what the seat was shown came outside the commitment."""
    ends: list[MatchEnd] = []
    sdk = Session(
        lambda request: request.legal_actions[0], token="t", name="n", on_match_end=ends.append
    )
    sdk.hello()
    if before == "request":
        state = GAMES["belote"].new_match(GAMES["belote"].settings({}), 999)
        while state.to_act != SEAT:
            state.apply(state.legal_actions()[0])
        early = action_request(state, "r1", MATCH)
        assert len(sdk.handle(early)) == 1  # answered all the same (the clock would lose it)
    else:
        sdk.handle(_start_shown(999))
    for message in (started(COMMITMENT), _start_shown(SEED), ended()):
        sdk.handle(message)
    [end] = ends
    assert end.deal_verified is False
    assert any("before its start" in r.getMessage() for r in caplog.records)


def test_a_request_whose_hand_is_not_the_dealt_one_is_caught(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Honest events, but the observation the bot plays from holds seed 999's cards."""
    ends: list[MatchEnd] = []
    sdk = Session(
        lambda request: request.legal_actions[0], token="t", name="n", on_match_end=ends.append
    )
    rigged = GAMES["belote"].new_match(GAMES["belote"].settings({}), 999)
    while rigged.to_act != SEAT:
        rigged.apply(rigged.legal_actions()[0])
    sdk.handle(started(COMMITMENT))
    sdk.handle(_start_shown(SEED))
    assert len(sdk.handle(action_request(rigged, "r1", MATCH))) == 1
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        sdk.handle(ended())
    [end] = ends
    assert end.deal_verified is False
    assert any(f"the hand in seat {SEAT}'s first request" in r.getMessage() for r in caplog.records)
