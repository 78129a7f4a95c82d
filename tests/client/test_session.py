"""The SDK's protocol logic, driven without a network: server messages built with the codec from
real engine states go in, and the bot messages it answers come out."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bisca import wire
from bisca.client import (
    BotCrashed,
    BotRejected,
    Clock,
    MatchEnd,
    MatchStart,
    Rejection,
    Request,
    Session,
)
from bisca.client.bots import make_bot
from bisca.engine import GAMES, new_match
from bisca.engine.belote import BeloteSettings, BeloteState, Pass, PlayCard, Take
from bisca.v1 import arena_pb2

from .support import State, action_request, advance, reply_action, through_wire, to_act


def first_legal(request: Request[Any, Any]) -> Any:
    return request.legal_actions[0]


def session(bot: Any = first_legal, **hooks: Any) -> Session:
    return Session(bot, token="secret", name="tester", version="1.2", **hooks)


def rejected(
    state: State, request_id: str = "r1", attempts_left: int = 2, match_id: str = "m1"
) -> arena_pb2.ServerMessage:
    """The referee's rejection of the answer of the seat to act in ``state``."""
    seat = to_act(state)
    return through_wire(
        arena_pb2.ServerMessage(
            action_rejected=arena_pb2.ActionRejected(
                request_id=request_id,
                match_id=match_id,
                seat=seat,
                code=arena_pb2.REJECT_CODE_ILLEGAL_ACTION,
                message="not now",
                attempts_left=attempts_left,
            )
        )
    )


# ---- hello and welcome -----------------------------------------------------------------------


def test_hello_carries_the_token_name_version_protocol_and_games() -> None:
    hello = Session(first_legal, token="t", name="n", games=["belote", "bestia"]).hello().hello
    assert (hello.token, hello.bot_name, hello.bot_version) == ("t", "n", "0")
    assert hello.protocol_version == arena_pb2.PROTOCOL_VERSION_CURRENT
    assert list(hello.games) == [arena_pb2.GAME_BELOTE, arena_pb2.GAME_BESTIA]


def test_unknown_games_are_refused_before_any_message() -> None:
    with pytest.raises(ValueError, match="unknown game 'poker'; known: belote, bestia"):
        Session(first_legal, token="t", name="n", games=["poker"])
    with pytest.raises(ValueError, match="at least one game"):
        Session(first_legal, token="t", name="n", games=[])


def test_welcome_is_recorded_and_answered_with_nothing() -> None:
    bot = session()
    bot.hello()
    welcome = arena_pb2.Welcome(protocol_version=1, bot_name="tester-7", connection_id="c9")
    assert bot.handle(arena_pb2.ServerMessage(welcome=welcome)) == []
    assert (bot.welcomed, bot.registered_name, bot.connection_id) == (True, "tester-7", "c9")
    bot.hello()
    assert not bot.welcomed


# ---- action requests -------------------------------------------------------------------------


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_request_reaches_the_bot_as_engine_values_and_the_reply_echoes_one(game: str) -> None:
    state = advance(game, 2, lambda state: len(state.legal_actions()) > 1)
    seen: list[Request[Any, Any]] = []

    def last(request: Request[Any, Any]) -> Any:
        seen.append(request)
        return request.legal_actions[-1]

    replies = session(last).handle(action_request(state, "req-1", "match-1"))
    [request] = seen
    assert request.request_id == "req-1" and request.match_id == "match-1"
    assert request.game == game and request.seat == to_act(state)
    assert request.observation == state.observation(to_act(state))
    assert request.legal_actions == tuple(state.legal_actions())
    assert request.clock == Clock(move_ms=1000, bank_ms=5000) and request.attempt == 1
    [reply] = replies
    assert reply.action.request_id == "req-1"
    assert reply_action(game, reply) == state.legal_actions()[-1]


def test_a_rejected_answer_is_asked_again_with_the_next_attempt() -> None:
    state = BeloteState(seed=1)
    answers = iter([Take(state.turned_card.suit), Pass()])
    attempts: list[int] = []
    rejections: list[Rejection] = []

    def bot(request: Request[Any, Any]) -> Any:
        attempts.append(request.attempt)
        return next(answers)

    sdk = session(bot, on_rejected=rejections.append)
    [first] = sdk.handle(action_request(state))
    assert reply_action("belote", first) == Take(state.turned_card.suit)
    [second] = sdk.handle(rejected(state))
    assert reply_action("belote", second) == Pass()
    assert second.action.request_id == "r1"
    assert attempts == [1, 2]
    [rejection] = rejections
    assert rejection.code == "illegal_action" and rejection.message == "not now"
    assert rejection.action == Take(state.turned_card.suit) and rejection.attempts_left == 2


def test_repeating_a_rejected_action_falls_back_to_one_not_yet_rejected() -> None:
    state = advance("belote", 3, lambda state: len(state.legal_actions()) > 2)
    legal = state.legal_actions()
    sdk = session(lambda request: request.legal_actions[1])
    [first] = sdk.handle(action_request(state))
    assert reply_action("belote", first) == legal[1]
    [second] = sdk.handle(rejected(state))
    assert reply_action("belote", second) == legal[0]
    [third] = sdk.handle(rejected(state))
    assert reply_action("belote", third) == legal[2]


def test_no_retry_when_no_attempt_is_left_or_the_request_is_unknown() -> None:
    state = new_match("belote", seed=1)
    sdk = session()
    sdk.handle(action_request(state))
    assert sdk.handle(rejected(state, request_id="other")) == []
    assert sdk.handle(rejected(state, attempts_left=0)) == []


def test_a_request_resent_for_an_attempt_already_answered_is_not_answered_twice() -> None:
    state = new_match("belote", seed=1)
    calls: list[int] = []

    def bot(request: Request[Any, Any]) -> Any:
        calls.append(request.attempt)
        return request.legal_actions[-1]

    sdk = session(bot)
    assert len(sdk.handle(action_request(state))) == 1
    assert len(sdk.handle(rejected(state))) == 1
    assert sdk.handle(action_request(state, attempt=2)) == []
    [third] = sdk.handle(action_request(state, attempt=3))
    # The bot's answer (the last action) was rejected: the first other legal action is sent.
    assert reply_action("belote", third) == state.legal_actions()[0]
    assert calls == [1, 2, 3]


def test_a_bot_that_raises_ends_with_its_traceback_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = new_match("belote", seed=1)

    def broken(request: Request[Any, Any]) -> Any:
        raise RuntimeError("oops")

    with pytest.raises(BotCrashed, match="bot callable, on request r1") as crashed:
        session(broken).handle(action_request(state))
    assert isinstance(crashed.value.__cause__, RuntimeError)
    err = capsys.readouterr().err
    assert "Traceback (most recent call last):" in err and "RuntimeError: oops" in err
    assert "in broken" in err  # the bot's own frame is shown


#: Answers that are not actions of the game, and what the line about each says of it.
NOT_ACTIONS = [
    (
        None,
        "the bot returned None, which is not an action of the game (does every path of "
        "choose() return an action?)",
    ),
    (
        "pass",
        "the bot returned 'pass', which is not an action of the game (str is not a belote action)",
    ),
]


@pytest.mark.parametrize(("answer", "said"), NOT_ACTIONS, ids=["None", "str"])
def test_an_answer_that_is_not_an_action_ends_the_bot_saying_what_it_was(
    capsys: pytest.CaptureFixture[str], answer: Any, said: str
) -> None:
    """None (a choose() that fell off its end) once read as "every legal action was rejected":
    nothing was sent and the seat timed out on every move.  It is a bug like an exception."""
    state = new_match("belote", seed=1)
    with pytest.raises(BotCrashed, match="bot callable, on request r1") as crashed:
        session(lambda request: answer).handle(action_request(state))
    assert "which is not an action of the game (said above); the bot ends" in str(crashed.value)
    err = capsys.readouterr().err
    assert err == f"bisca.client: request r1 (match m1, seat {to_act(state)}): {said}\n"


@pytest.mark.parametrize(("answer", "said"), NOT_ACTIONS, ids=["None", "str"])
def test_keep_going_sends_a_legal_action_for_an_answer_that_is_not_one_and_says_so(
    capsys: pytest.CaptureFixture[str], answer: Any, said: str
) -> None:
    state = new_match("belote", seed=1)
    sdk = session(lambda request: answer, keep_going=True)
    [reply] = sdk.handle(action_request(state))
    assert reply_action("belote", reply) == state.legal_actions()[0]
    err = capsys.readouterr().err
    assert f": {said}\n" in err
    assert "keep_going: sending the first legal action instead" in err
    assert "every legal action was rejected" not in err


def test_the_end_of_a_match_is_logged_with_the_rank_counted_from_1(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ends: list[MatchEnd] = []
    ended = arena_pb2.MatchEnded(
        match_id="m1",
        seat=0,
        status=arena_pb2.MATCH_STATUS_FINISHED,
        seats=[
            arena_pb2.SeatResult(seat=0, score=185, rank=2),
            arena_pb2.SeatResult(seat=1, score=300, rank=0),
        ],
    )
    with caplog.at_level(logging.INFO, logger="bisca.client"):
        session(on_match_end=ends.append).handle(arena_pb2.ServerMessage(match_ended=ended))
    assert "match m1 finished: seat 0 scored 185, rank 3" in caplog.text
    [end] = ends
    assert end.mine is not None and end.mine.rank == 2  # the protocol's value, from 0


def test_keep_going_sends_a_legal_action_and_says_so_every_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = new_match("belote", seed=1)

    def broken(request: Request[Any, Any]) -> Any:
        raise RuntimeError("oops")

    sdk = session(broken, keep_going=True)
    for _ in range(2):
        [reply] = sdk.handle(action_request(state))
        assert reply_action("belote", reply) == state.legal_actions()[0]
        sdk.handle(arena_pb2.ServerMessage(match_ended=arena_pb2.MatchEnded(match_id="m1", seat=0)))
    err = capsys.readouterr().err
    assert err.count("RuntimeError: oops") == 2
    assert err.count("keep_going: sending the first legal action instead") == 2


def test_a_well_formed_illegal_answer_is_sent_for_the_referee_to_judge() -> None:
    state = new_match("belote", seed=1)
    illegal = PlayCard(state.observation(to_act(state)).hand[0])
    [reply] = session(lambda request: illegal).handle(action_request(state))
    assert reply_action("belote", reply) == illegal


def test_an_unreadable_request_is_logged_and_left_unanswered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    message = arena_pb2.ServerMessage(action_request=arena_pb2.ActionRequest(request_id="x"))
    with caplog.at_level(logging.ERROR, logger="bisca.client"):
        assert session().handle(message) == []
    assert "cannot read request x" in caplog.text


# ---- match start, events, match end ---------------------------------------------------------


def test_match_start_reaches_the_hook_with_engine_settings() -> None:
    starts: list[MatchStart] = []
    settings = BeloteSettings(deals=2, first_dealer=3)
    message = arena_pb2.ServerMessage(
        match_started=arena_pb2.MatchStarted(
            match_id="m1",
            game=arena_pb2.GAME_BELOTE,
            settings=wire.encode_game_settings("belote", settings),
            seat=2,
            seats=[arena_pb2.SeatInfo(seat=s, bot_name=f"b{s}", bot_version="1") for s in range(4)],
            clock=arena_pb2.ClockSettings(
                move_ms=500, bank_ms=9000, policy=arena_pb2.TIMEOUT_POLICY_STRIKES, strikes=3
            ),
            resumed=True,
        )
    )
    assert session(on_match_start=starts.append).handle(through_wire(message)) == []
    [start] = starts
    assert (start.match_id, start.game, start.seat, start.resumed) == ("m1", "belote", 2, True)
    assert start.settings == settings
    assert [seat.bot_name for seat in start.seats] == ["b0", "b1", "b2", "b3"]
    assert (start.clock.move_ms, start.clock.bank_ms) == (500, 9000)
    assert (start.clock.policy, start.clock.strikes) == ("strikes", 3)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_events_reach_the_hook_as_engine_events_in_order(game: str) -> None:
    state = advance(game, 4, lambda state: state.event_count > 12)
    seat = 1
    events = state.events_for(seat)
    batch = arena_pb2.EventBatch(
        match_id="m1",
        seat=seat,
        events=[wire.encode_game_event(game, i, event) for i, event in enumerate(events)],
    )
    seen: list[tuple[str, int, Any]] = []
    sdk = session(on_event=lambda *args: seen.append(args))
    assert sdk.handle(through_wire(arena_pb2.ServerMessage(events=batch))) == []
    assert seen == [("m1", seat, event) for event in events]


def test_match_end_reaches_the_hook_and_forgets_the_matchs_requests() -> None:
    ends: list[MatchEnd] = []
    state = new_match("belote", seed=1)
    sdk = session(on_match_end=ends.append)
    sdk.handle(action_request(state))
    message = arena_pb2.ServerMessage(
        match_ended=arena_pb2.MatchEnded(
            match_id="m1",
            seat=1,
            status=arena_pb2.MATCH_STATUS_FINISHED,
            seats=[
                arena_pb2.SeatResult(seat=0, bot_name="a", score=90, rank=0),
                arena_pb2.SeatResult(
                    seat=1,
                    bot_name="b",
                    score=-70,
                    rank=1,
                    end=arena_pb2.SEAT_END_FORFEITED,
                    forfeit_reason="timeouts",
                    timeouts=3,
                    crashes=1,
                    illegal_moves=2,
                ),
            ],
            seed=42,
        )
    )
    assert sdk.handle(through_wire(message)) == []
    [end] = ends
    assert (end.match_id, end.status, end.seed) == ("m1", "finished", 42)
    assert end.mine is not None and end.mine.end == "forfeited" and end.mine.score == -70
    assert end.mine.forfeit_reason == "timeouts" and end.mine.timeouts == 3
    assert (end.mine.crashes, end.mine.illegal_moves) == (1, 2)
    assert sdk.handle(rejected(state)) == []  # the request is gone with its match


def test_a_hook_that_raises_ends_the_bot_unless_it_keeps_going(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken(start: MatchStart) -> None:
        raise RuntimeError("hook bug")

    message = arena_pb2.ServerMessage(
        match_started=arena_pb2.MatchStarted(match_id="m1", game=arena_pb2.GAME_BELOTE)
    )
    with pytest.raises(BotCrashed, match="on_match_start hook"):
        session(on_match_start=broken).handle(message)
    assert "RuntimeError: hook bug" in capsys.readouterr().err
    sdk = session(on_match_start=broken, keep_going=True)
    assert sdk.handle(message) == []
    assert "keep_going: going on" in capsys.readouterr().err
    assert len(sdk.handle(action_request(new_match("belote", seed=1)))) == 1


# ---- errors ----------------------------------------------------------------------------------


def test_a_non_fatal_error_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    error = arena_pb2.Error(
        code=arena_pb2.ERROR_CODE_UNKNOWN_REQUEST, message="late", request_id="r0"
    )
    with caplog.at_level(logging.WARNING, logger="bisca.client"):
        assert session().handle(arena_pb2.ServerMessage(error=error)) == []
    assert "ERROR_CODE_UNKNOWN_REQUEST" in caplog.text and "request r0" in caplog.text


def test_a_fatal_error_raises_bot_rejected_with_the_code_and_message() -> None:
    error = arena_pb2.Error(code=arena_pb2.ERROR_CODE_UNKNOWN_TOKEN, message="who?", fatal=True)
    with pytest.raises(BotRejected, match="ERROR_CODE_UNKNOWN_TOKEN: who") as raised:
        session().handle(arena_pb2.ServerMessage(error=error))
    assert raised.value.code == "ERROR_CODE_UNKNOWN_TOKEN" and raised.value.message == "who?"


# ---- a whole match through sessions ----------------------------------------------------------


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_whole_match_played_through_one_session_per_seat(game: str) -> None:
    """A minimal referee loop: every seat's session gets its events and requests on the wire,
    and its replies, decoded, are the actions applied."""
    state = new_match(game, seed=11)
    seats = range(state.num_seats)
    seen: dict[int, list[Any]] = {seat: [] for seat in seats}
    sessions = {
        seat: session(
            make_bot(game, "greedy" if seat % 2 else "random", seat),
            on_event=lambda match, s, event: seen[s].append(event),
            games=[game],
        )
        for seat in seats
    }
    sent = 0
    for step in range(100_000):
        for seat in seats:
            batch = arena_pb2.EventBatch(
                match_id="m",
                seat=seat,
                events=[
                    wire.encode_game_event(game, sent + i, event)
                    for i, event in enumerate(state.events_for(seat, sent))
                ],
            )
            sessions[seat].handle(through_wire(arena_pb2.ServerMessage(events=batch)))
        sent = state.event_count
        if state.is_over:
            break
        [reply] = sessions[to_act(state)].handle(action_request(state, f"r{step}", "m"))
        state.apply(reply_action(game, reply))
    assert state.is_over
    for seat in seats:
        assert seen[seat] == state.events_for(seat)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_events_carried_by_requests_and_the_end_reach_the_hook_before_the_bot(game: str) -> None:
    """Protocol 2's default: no EventBatch at all; each request carries the seat's events since
    its last message and the MatchEnded the rest.  Every event reaches ``on_event`` in order,
    and all of those before a request before the bot is asked."""
    state = new_match(game, seed=5)
    seats = range(state.num_seats)
    seen: dict[int, list[Any]] = {seat: [] for seat in seats}
    behind: list[int] = []  # events a seat had not been shown when its bot was asked

    def bot_of(seat: int) -> Any:
        def bot(request: Request[Any, Any]) -> Any:
            behind.append(len(state.events_for(seat)) - len(seen[seat]))
            return request.legal_actions[0]

        return bot

    sessions = {
        seat: session(bot_of(seat), on_event=lambda m, s, e: seen[s].append(e), games=[game])
        for seat in seats
    }
    assert not sessions[0].hello().hello.live_events
    shown = dict.fromkeys(seats, 0)

    def carried(seat: int) -> list[arena_pb2.GameEvent]:
        events = [
            wire.encode_game_event(game, index, event)
            for index, (audience, event) in enumerate(state.all_events())
            if index >= shown[seat] and audience >> seat & 1
        ]
        shown[seat] = state.event_count
        return events

    for step in range(100_000):
        if state.is_over:
            break
        seat = to_act(state)
        message = action_request(state, f"r{step}", "m")
        message.action_request.events.extend(carried(seat))
        [reply] = sessions[seat].handle(through_wire(message))
        state.apply(reply_action(game, reply))
    for seat in seats:
        ended = arena_pb2.MatchEnded(match_id="m", seat=seat, events=carried(seat))
        sessions[seat].handle(through_wire(arena_pb2.ServerMessage(match_ended=ended)))
        assert seen[seat] == state.events_for(seat)
    assert behind and set(behind) == {0}


def test_live_events_are_asked_for_in_the_hello() -> None:
    hello = Session(first_legal, token="t", name="n", live_events=True).hello().hello
    assert hello.live_events and hello.protocol_version == arena_pb2.PROTOCOL_VERSION_2
