"""The checks: each a short script of messages, built from real engine states, that puts the
bot in one situation the referee produces, and the list of them per game.

A check returns the sentence of its PASS line or raises :class:`CheckFailed` with the reason;
it works on the :class:`Session` of the run, and needs a live, welcomed stream unless it is
the Hello check, which makes the first one.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVarTuple

from bisca import wire
from bisca.engine import GAMES, Settings
from bisca.server.referee import messages
from bisca.v1 import arena_pb2 as pb

from . import _script as script
from ._harness import Harness
from ._judge import Judge
from ._match import Ledger
from ._report import CheckFailed, LateAnswer, hello_text

Args = TypeVarTuple("Args")

#: The clock of the short-clock check (or the answer time, if that is shorter).
SHORT_CLOCK_MS = 300
#: Requests the short-clock check may ask, each in a match of its own: one answered in time
#: passes.  A bot that assumes its usual thinking time misses every one; a bot that reads the
#: clock can miss one on a loaded machine (a league's server checks a version beside the
#: matches it plays: one such bot answered in 280 ms, then missed the next 300 ms clock).
SHORT_CLOCK_TRIES = 3
#: How long to listen for a second answer after a corrected one, and for a crash after a
#: match ends early.
SETTLE_S = 0.25
#: How long to listen after each check for a second answer sent at once (a later one fails
#: the check in which it arrives, naming the check it belongs to).
END_QUIET_S = 0.03
#: Requests per match in "two matches at once", and answers in "events between requests".
TWO_MATCH_ROUNDS = 3
EVENT_CHECK_ANSWERS = 4
EVENTS_SEED = 3

_REJECTED_ON_PURPOSE = (
    "bisca check-bot refuses this answer on purpose: answer the request again, with another "
    "of its legal actions"
)


@dataclass
class Session:
    """What the checks of one run work with."""

    harness: Harness
    ledger: Ledger
    judge: Judge
    #: The games to check: those asked for, narrowed by the Hello check to those the Hello
    #: lists (the arena seats a bot only in the games its Hello lists).
    games: list[str]
    #: Whether the games were asked for by name (``--game``): then a game the Hello does not
    #: list fails the Hello check instead of being left out.
    asked: bool = False


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[Session], Awaitable[str]]
    #: Whether the bot must be connected (and welcomed) before it runs.
    needs_link: bool = True


def hello_check() -> Check:
    """The first check of every run; it narrows :attr:`Session.games` to the Hello's."""
    return Check("hello", check_hello, needs_link=False)


def checks_of(game: str) -> list[Check]:
    checks = [Check(f"{game}: full match", _bind(check_full_match, game))]
    for label in script.PHASES[game]:
        checks.append(Check(f"{game}: phase {label}", _bind(check_phase, game, label)))
    checks += [
        Check(f"{game}: rejected action corrected", _bind(check_rejection, game)),
        Check(f"{game}: short clock", _bind(check_short_clock, game)),
        Check(f"{game}: events between requests", _bind(check_events, game)),
        Check(f"{game}: two matches at once", _bind(check_two_matches, game)),
        Check(f"{game}: match that ends early", _bind(check_ends_early, game)),
        Check(f"{game}: reconnect", _bind(check_reconnect, game)),
    ]
    return checks


def _bind(
    check: Callable[[Session, *Args], Awaitable[str]], *args: *Args
) -> Callable[[Session], Awaitable[str]]:
    """``check`` with its game (and label) given now, so the loop above binds each its own."""
    return lambda session: check(session, *args)


# --------------------------------------------------------------------------------------------
# The checks


async def check_hello(session: Session) -> str:
    """The command connects, says a valid Hello with the token, and is welcomed."""
    hello = await session.harness.first_connection()
    named = [wire.game_name(number) for number in hello.games]
    events = "live events" if session.harness.live_events else "events inside requests"
    text = (
        f"Hello from {hello.bot_name!r} version {hello.bot_version!r}, protocol "
        f"{hello.protocol_version} ({events}), games {', '.join(named) or 'none'}; "
        "answered Welcome"
    )
    if not named:
        session.games = []
        raise CheckFailed(
            "the Hello lists no games; the arena seats a bot only in the games its Hello "
            "lists, so no match would ever seat this one",
            "got: " + hello_text(hello),
        )
    missing = [game for game in session.games if game not in named]
    session.games = [game for game in session.games if game in named]
    if missing and session.asked:
        raise CheckFailed(
            f"the Hello does not list {', '.join(missing)}, which --game asks to check "
            "(no match of it would seat this bot; list the game in the Hello, or leave "
            "--game out to check the games the Hello lists)",
            "got: " + hello_text(hello),
        )
    if missing:
        text += f"; checking {', '.join(session.games)}, the games it lists"
    return text


async def check_full_match(session: Session, game: str) -> str:
    """A whole short match with the bot in every seat, on this one connection (the referee
    seats a bot's seats on its connections, so one stream may hold them all)."""
    settings, state = script.full_match_state(game)
    match = session.ledger.new_match(
        game, settings, state, script.FULL_MATCH_SEED, range(state.num_seats)
    )
    match.start()
    answered = 0
    slowest = 0.0
    while not state.is_over:
        match.events()
        sent = match.request()
        try:
            answer = await session.judge.answer(sent)
        except CheckFailed as failure:
            failure.reason = f"at request {answered + 1} of the match: {failure.reason}"
            raise
        match.apply(answer)
        answered += 1
        slowest = max(slowest, answer.elapsed_ms)
    match.finish()
    outcome = state.outcome
    assert outcome is not None
    return (
        f"{state.num_seats} seats, {describe_settings(game, settings)}: {answered} requests "
        f"answered (slowest {slowest:.0f} ms), MatchEnded FINISHED, scores "
        f"{list(outcome.scores)}"
    )


async def check_phase(session: Session, game: str, label: str) -> str:
    """One request in the phase ``label``, from a match joined mid-way: each phase has its
    own kinds of action (and observation fields), and a bot that only ever saw card play
    would meet a Bestia controbuio call for the first time in a league."""
    match = session.ledger.situation_match(game, label)
    sent = match.request()
    answer = await session.judge.answer(sent)
    return (
        f"request {sent.request_id} (seat {sent.seat}, {len(sent.legal)} legal) answered in "
        f"{answer.elapsed_ms:.0f} ms with {answer.text}"
    )


async def check_rejection(session: Session, game: str) -> str:
    """The first answer is refused (``ActionRejected``, then the request again with attempt
    2, as the referee does); the bot must answer again, legally and differently, and only
    once."""
    judge = session.judge
    match = session.ledger.situation_match(game, "a choice of cards")
    sent = match.request()
    first = await judge.answer(sent)
    await judge.quiet(END_QUIET_S)
    sent.rejected = first.action
    session.harness.send(
        messages.action_rejected(
            sent.request_id,
            match.id,
            sent.seat,
            pb.REJECT_CODE_ILLEGAL_ACTION,
            _REJECTED_ON_PURPOSE,
            attempts_left=2,
        )
    )
    match.send_request(sent, attempt=2)
    try:
        second = await judge.answer(sent)
    except CheckFailed as failure:
        failure.details.append(f"rejected on purpose: {first.text}")
        raise
    await judge.quiet(SETTLE_S)
    return (
        f"{first.text} was rejected on purpose; request {sent.request_id} attempt 2 was "
        f"answered in {second.elapsed_ms:.0f} ms with {second.text}"
    )


async def check_short_clock(session: Session, game: str) -> str:
    """A request whose clock (in ``MatchStarted`` and in the request) is 300 ms, with no
    bank: a bot must read the clock rather than assume its usual thinking time.  Up to
    :data:`SHORT_CLOCK_TRIES` requests, each in a new match: one answered in time passes."""
    move_ms = min(SHORT_CLOCK_MS, session.ledger.move_ms)
    missed: list[str] = []
    while True:
        match = session.ledger.situation_match(game, "short clock", move_ms)
        sent = match.request()
        try:
            answer = await session.judge.answer(sent)
        except LateAnswer as late:
            missed.append(late.reason)
            if len(missed) == SHORT_CLOCK_TRIES:
                late.reason += f" (the last of {SHORT_CLOCK_TRIES} tries, each missed)"
                late.details += [f"try {n}: {why}" for n, why in enumerate(missed[:-1], 1)]
                raise
            # Its answer, should it come, is for a match that is over: tolerated.  The bot is
            # given one more clock to send it before the next try, whose clock it would eat.
            match.abort("bisca check-bot: this request's clock ran out; another follows")
            await session.judge.quiet(move_ms / 1000)
            continue
        text = (
            f"request {sent.request_id} with a {move_ms} ms clock answered in "
            f"{answer.elapsed_ms:.0f} ms"
        )
        if missed:
            text += f" (try {len(missed) + 1} of {SHORT_CLOCK_TRIES}; before: {'; '.join(missed)})"
        return text


async def check_events(session: Session, game: str) -> str:
    """Requests with events before and between them, the bot in a seat that acts third: one
    event per batch with live events, else several carried by each request.  A bot must take
    events as news, not as questions (and answer a request that carries some)."""
    settings = GAMES[game].settings(script.SITUATION_SETTINGS[game])
    state = GAMES[game].new_match(settings, EVENTS_SEED)
    seat = ((state.to_act or 0) + 2) % state.num_seats  # two others act before it
    match = session.ledger.new_match(game, settings, state, EVENTS_SEED, [seat])
    match.start()
    rng = random.Random(EVENTS_SEED)
    answered = batches = 0
    while answered < EVENT_CHECK_ANSWERS:
        batches += match.play_scripted(rng, split=True)
        if state.is_over:
            break
        answer = await session.judge.answer(match.request())
        match.apply(answer)
        answered += 1
    if not session.harness.live_events:
        return f"{answered} requests answered, carrying {match.carried} events between them"
    return f"{answered} requests answered after {batches} event batches (one event each)"


async def check_two_matches(session: Session, game: str) -> str:
    """Two matches on the connection, a request of each open at the same time."""
    first = session.ledger.situation_match(game, "first match")
    second = session.ledger.situation_match(game, "second match")
    rng = random.Random(7)
    answered = 0
    for _ in range(TWO_MATCH_ROUNDS):
        if first.state.is_over or second.state.is_over:
            break
        requests = [first.request(), second.request()]
        for answer in await session.judge.collect(requests):
            answer.sent.match.apply(answer)
            answered += 1
        first.play_scripted(rng)
        second.play_scripted(rng)
    return (
        f"matches {first.id} and {second.id}: {answered} requests sent two at a time (one "
        "per match), each answered under its own id"
    )


async def check_ends_early(session: Session, game: str) -> str:
    """``MatchEnded`` FAILED while a request is open; the bot must survive it and play the
    next match."""
    match = session.ledger.situation_match(game, "first match")
    sent = match.request()
    match.abort("the referee aborted the match (bisca check-bot: a match that ends early)")
    late = await session.judge.quiet(SETTLE_S)
    following = session.ledger.situation_match(game, "second match")
    answer = await session.judge.answer(following.request())
    left = "answered it anyway, tolerated" if late else "left it"
    return (
        f"match {match.id} ended FAILED with request {sent.request_id} open (the bot {left}); "
        f"the next match's request was answered in {answer.elapsed_ms:.0f} ms"
    )


async def check_reconnect(session: Session, game: str) -> str:
    """The stream is dropped with a request open; the bot must connect again with its token,
    get ``MatchStarted`` resumed=true and the request again, and answer it."""
    match = session.ledger.situation_match(game, "reconnect")
    sent = match.request()
    back = await session.harness.drop_and_reconnect(
        "bisca check-bot dropped the stream on purpose (reconnect check)"
    )
    match.start(resumed=True)
    match.history()
    match.send_request(sent)
    answer = await session.judge.answer(sent)
    return (
        f"Hello again with the same token {back:.2f} s after the drop; after MatchStarted "
        f"resumed=true, request {sent.request_id} was answered in {answer.elapsed_ms:.0f} ms"
    )


def describe_settings(game: str, settings: Settings) -> str:
    """The settings the full match sets, as ``name=value`` words."""
    return ", ".join(
        f"{name}={getattr(settings, name)}" for name in script.FULL_MATCH_SETTINGS[game]
    )
