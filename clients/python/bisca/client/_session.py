"""The protocol logic of one bot connection, with no network in it.

:class:`Session` turns each :class:`~bisca.v1.arena_pb2.ServerMessage` into the bot messages to
send back, calling the bot and its hooks on the way.  It never blocks and never touches a
socket, so tests drive it with messages built from real engine states, and the gRPC plumbing
(:mod:`bisca.client._transport`) stays a thin loop that only moves messages.

Rejected answers
    When the referee rejects an answer (``ActionRejected`` with attempts left), the session asks
    the bot again with the same request and ``attempt + 1``.  If the bot gives an action that was
    already rejected for this request, the session sends the first legal action not yet
    rejected instead, so a deterministic bot cannot burn every attempt on one mistake.  The
    request id stays the same; if the server also re-sends the request with a higher
    ``attempt`` after answering the retry, the re-sent copy is recognised and not answered twice.

    Each rejection makes the bot think again, so a server could turn a stream of tiny
    rejections into as much work as it likes: the rejected actions are kept as a set, the
    fallback looks only at the distinct legal actions, and once every distinct legal action was
    rejected (or more rejections came than there are distinct legal actions, or the last
    attempt was rejected) the request is spent: its further rejections are ignored (said once,
    then only at debug level), the bot and ``on_rejected`` are not called for them, nor for a
    re-sent copy of it.  Rejections of a request that is not open are logged as warnings at
    most ``_Throttle.burst`` times a minute.

A bot that raises
    An exception in the bot's code (the ``bot`` callable or a hook) is a bug to see, not to
    hide: its traceback is printed on stderr (whatever the logging set-up) and, by default,
    :meth:`Session.handle` raises :class:`BotCrashed` (chained to it), which ends
    :func:`~bisca.client.run` and so the bot process: the arena counts a crash and
    ``bisca check-bot`` fails the bot.  With ``keep_going=True`` the old fallback stays: the
    first legal action not yet rejected is sent (a hook's exception is skipped), and every such
    use says so on stderr.  An answer that is not an action of the game at all (it cannot even
    be encoded: ``None`` from a ``choose()`` that fell off its end, a string, ...) is the same
    kind of bug and follows the same rule: a line on stderr that says so and carries
    :data:`NOT_AN_ACTION` (the phrase ``bisca check-bot`` looks for, in all three SDKs), then
    :class:`BotCrashed`, or with ``keep_going`` the fallback.  A well-formed action that is not
    in the legal list is sent as it is: the referee decides, and a rejection follows.

Checking the deal
    ``MatchStarted`` carries the server's commitment to the deal, SHA-256(salt || seed ||
    match id), and ``MatchEnded`` reveals the salt and the seed (of a failed match too).  The
    session keeps each seat's commitment from the start (across reconnects: a resumed start
    must carry the same one) and recomputes it at the end; the result is
    ``MatchEnd.deal_verified``, and a mismatch is logged as an error.

Events
    By default (protocol version 2) the referee sends a seat's events inside its next
    ``ActionRequest`` or its ``MatchEnded``; with ``live_events`` the Hello asks for each step's
    events at once, in ``EventBatch`` messages.  Either way ``on_event`` sees every event, in
    order, before the request or the end that follows it: the events a message carries are
    handed to the hook before the bot is asked (or ``on_match_end`` called).

Requests the session did not expect
    The server sends a seat's ``MatchStarted`` before its first request on every connection (a
    resumed one after a reconnect), so a request for a (match, seat) this connection has no
    start for is the server's slip: it is logged, once per (match, seat), and still answered
    (``_action_request`` says why).  A request whose observation is another seat's than the
    one it names cannot be answered sensibly: it is logged and the bot is not asked.

Matches that never end
    What the session keeps per (match, seat) (the open request, the deal commitment with the
    first events, the start on this connection) goes when the match ends.  A server that
    starts matches and never ends them, or sends enormous messages for them, would grow it
    without limit, so each such table keeps at most :data:`MAX_MATCHES` entries and about
    :data:`MAX_KEPT_BYTES` (``_kept.py``): past either, the entry that saw no message for the
    longest time is forgotten, and the first time that happens a warning says so.  An event
    too big to be one of a start's is not kept for the deal check, only its size.

Hooks
    ``on_match_start``, ``on_event``, ``on_match_end`` and ``on_rejected`` are called in the
    order the messages arrive; an exception in a hook is treated as one in the bot (above).
    Events are only decoded when ``on_event`` is given.
"""

from __future__ import annotations

import dataclasses
import logging
import reprlib
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bisca import wire
from bisca.engine import GAMES, MalformedActionError, Settings
from bisca.v1 import arena_pb2

from ._deal import ShownStart, seat_outside, start_dealt_from
from ._kept import MAX_KEPT_BYTES, MAX_MATCHES, KeptTable, Key, key_size, request_size
from ._messages import (
    deal_matches,
    error_code_name,
    match_end_from,
    match_start_from,
    rejection_from,
    request_from,
)
from ._text import printable
from ._types import (
    Bot,
    BotCrashed,
    BotRejected,
    OnEvent,
    OnMatchEnd,
    OnMatchStart,
    OnRejected,
    Request,
)

logger = logging.getLogger("bisca.client")

#: The phrase in the stderr line about a bot's answer that is not an action of the game.  The
#: Node and C++ SDKs say it too, word for word, because ``bisca check-bot`` finds this bug by it
#: (``server/bisca/server/conformance/_crashes.py``), as it finds a traceback: a fallback played
#: in its place would pass every other check.
NOT_AN_ACTION = "which is not an action of the game"

#: How much of a malformed answer a line shows (a bot may return anything, of any size).
_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 80


class _Spent:
    """What :meth:`Session._choose` returns when there is nothing left to send (every legal
    action was rejected).  Not ``None``: that is what a bot's ``choose()`` returns when a path
    of it falls off its end, a bug to report, not a reason to stay silent."""

    def __repr__(self) -> str:
        return "nothing"


_SPENT = _Spent()


@dataclass
class _OpenRequest:
    """The request a seat is answering, and what the referee already refused for it."""

    request: Request[Any, Any]
    #: The action answered since the last rejection (``None``: nothing was sent since).
    sent: Any = None
    rejected: set[Any] = field(default_factory=set)
    #: How many rejections of this request came (answered or not).
    rejections: int = 0
    #: Nothing is left to try (:meth:`spent`; once true, it stays true).
    given_up: bool = False
    #: That further rejections are ignored was said (once).
    ignoring: bool = False
    #: The legal actions without repeats, in order: what the fallback looks at, and how many
    #: rejections can make sense.
    legal: dict[Any, None] = field(init=False)

    def __post_init__(self) -> None:
        self.legal = dict.fromkeys(self.request.legal_actions)

    def spent(self) -> bool:
        """Nothing is left to try: every distinct legal action was rejected, or more
        rejections came than there are distinct legal actions (or the last attempt was)."""
        if not self.given_up:
            self.given_up = self.rejections > len(self.legal) or (
                len(self.rejected) >= len(self.legal)
                and all(action in self.rejected for action in self.legal)
            )
        return self.given_up

    def was_rejected(self, action: Any) -> bool:
        try:
            return action in self.rejected
        except TypeError:  # unhashable: not an action of the game at all (encoding says so)
            return False


class _Throttle:
    """At most ``burst`` warnings a ``period`` (seconds); the first after a pause says how
    many were left out (they went to the debug level)."""

    burst = 10
    period = 60.0

    def __init__(self) -> None:
        self._since = -float("inf")
        self._said = 0
        self._left_out = 0

    def allow(self) -> int | None:
        """``None``: say it at debug level; else say it as a warning, with the number of
        warnings left out since the last one."""
        now = time.monotonic()
        if now - self._since >= self.period:
            self._since, self._said = now, 0
        if self._said >= self.burst:
            self._left_out += 1
            return None
        self._said += 1
        left_out, self._left_out = self._left_out, 0
        return left_out


@dataclass
class _Commitment:
    """The deal commitment of a seat's match, as first received; ``changed`` when a resumed
    start carried another one (a server that changed its deal mid-match)."""

    digest: bytes
    #: The game and settings the start named (``None``: they could not be read), and what the
    #: seat was shown of the first deal: what dealing again from the revealed seed must
    #: reproduce (``_deal.py``).
    game: str
    settings: Settings | None
    shown: ShownStart = field(default_factory=ShownStart)
    changed: bool = False
    #: The first start this session had was a resumed one (it cannot know what the seat was
    #: shown before), or requests or events for the seat came before its start.
    resumed_first: bool = False
    early: bool = False

    def size(self, key: Key) -> int:
        """What it costs kept (:mod:`._kept`): its key, and its events as decoded messages."""
        return key_size(key) + len(self.digest) + 2 * self.shown.kept_bytes + 1024


def game_enums(games: Iterable[str]) -> list[str]:
    """The ``bisca.v1.Game`` values of game names (``ValueError`` naming the known ones)."""
    values = []
    for game in games:
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(GAMES))}")
        values.append(arena_pb2.Game.Name(wire.game_enum(game)))
    if not values:
        raise ValueError("a bot must play at least one game")
    return values


class Session:
    """One bot's side of the protocol: hello, then one reply list per server message.

    Reusable across reconnects: :meth:`hello` starts a new connection's conversation and forgets
    the previous connection's open requests (the server sends them again).
    """

    def __init__(
        self,
        bot: Bot,
        *,
        token: str,
        name: str,
        version: str = "0",
        games: Iterable[str] = ("belote",),
        on_match_start: OnMatchStart | None = None,
        on_event: OnEvent | None = None,
        on_match_end: OnMatchEnd | None = None,
        on_rejected: OnRejected | None = None,
        live_events: bool = False,
        keep_going: bool = False,
    ) -> None:
        self._bot = bot
        self._keep_going = keep_going
        self._live_events = live_events
        self._token = token
        self._name = name
        self._version = version
        self._games = game_enums(games)
        self._on_match_start = on_match_start
        self._on_event = on_event
        self._on_match_end = on_match_end
        self._on_rejected = on_rejected
        # All bounded (KeptTable: entries and bytes), in the order of each key's last message.
        self._open: KeptTable[_OpenRequest] = KeptTable("an open request", self._forget)
        # Kept across reconnects (unlike the open requests): the end of a match checks what
        # its first start committed to.
        self._commitments: KeptTable[_Commitment] = KeptTable("a deal commitment", self._forget)
        # The (match, seat) pairs this connection has a (readable) MatchStarted for, and those
        # whose requests without one were warned about: both per connection, both bounded.
        self._started: KeptTable[None] = KeptTable("a start", self._forget)
        self._strangers: KeptTable[None] = KeptTable("a request without a start", self._forget)
        # The (match, seat) pairs sent requests or events before their start (this connection):
        # a deal committed to later cannot be checked for them.
        self._early: KeptTable[None] = KeptTable("a message before its start", self._forget)
        self._forgotten = 0  # entries dropped by the bound (the first one said so)
        self._unknown_rejections = _Throttle()
        #: Set by the server's Welcome: the name the bot is registered under, and the id of
        #: this connection (for the server's logs).
        self.welcomed = False
        self.registered_name = ""
        self.connection_id = ""
        self._handlers: dict[str, Callable[[Any], list[arena_pb2.BotMessage]]] = {
            "welcome": self._welcome,
            "match_started": self._match_started,
            "events": self._events,
            "action_request": self._action_request,
            "action_rejected": self._action_rejected,
            "match_ended": self._match_ended,
            "error": self._error,
        }

    # ---- the conversation -----------------------------------------------------------------

    def hello(self) -> arena_pb2.BotMessage:
        """The first message of a (re)connection."""
        self.welcomed = False
        self._open.clear()
        self._started.clear()
        self._strangers.clear()
        self._early.clear()
        return arena_pb2.BotMessage(
            hello=arena_pb2.Hello(
                token=self._token,
                bot_name=self._name,
                bot_version=self._version,
                protocol_version=arena_pb2.PROTOCOL_VERSION_CURRENT,
                games=self._games,
                live_events=self._live_events,
            )
        )

    def handle(self, message: arena_pb2.ServerMessage) -> list[arena_pb2.BotMessage]:
        """The replies to one server message (raises :class:`BotRejected` on a fatal error,
        :class:`BotCrashed` when the bot's code raised and ``keep_going`` is off)."""
        kind = message.WhichOneof("kind")
        if kind is None:
            logger.warning("ignoring an empty message from the server")
            return []
        return self._handlers[kind](getattr(message, kind))

    # ---- one handler per message kind -----------------------------------------------------

    def _welcome(self, welcome: arena_pb2.Welcome) -> list[arena_pb2.BotMessage]:
        self.welcomed = True
        self.registered_name = welcome.bot_name
        self.connection_id = welcome.connection_id
        logger.info(
            "welcomed as %r by server %s (connection %s)",
            welcome.bot_name,
            welcome.server_version or "?",
            welcome.connection_id,
        )
        return []

    def _match_started(self, started: arena_pb2.MatchStarted) -> list[arena_pb2.BotMessage]:
        self._remember_commitment(started)
        try:
            start = match_start_from(started)
        except (MalformedActionError, ValueError) as error:
            logger.error("cannot read the start of match %s: %s", started.match_id, error)
            return []
        key = (start.match_id, start.seat)
        self._started.keep(key, None, key_size(key))
        logger.info(
            "match %s %s: %s, seat %d, bots %s",
            start.match_id,
            "resumed" if start.resumed else "started",
            start.game,
            start.seat,
            ", ".join(seat.bot_name for seat in start.seats),
        )
        if self._on_match_start is not None:
            self._call_hook("on_match_start", self._on_match_start, start)
        return []

    def _events(self, batch: arena_pb2.EventBatch) -> list[arena_pb2.BotMessage]:
        self._deliver(batch.match_id, batch.seat, batch.events)
        return []

    def _deliver(self, match_id: str, seat: int, events: Iterable[arena_pb2.GameEvent]) -> None:
        """Hand events to ``on_event`` in order (those of an EventBatch, or those a request
        or an end carries)."""
        events = list(events)
        key = (match_id, seat)
        commitment = self._commitments.get(key)
        if commitment is not None:
            for message in events:
                commitment.shown.show(message)
            if events:
                self._commitments.keep(key, commitment, commitment.size(key))
        elif events and key not in self._started:
            self._early.keep(key, None, key_size(key))
        hook = self._on_event
        if hook is None:
            return
        for message in events:
            try:
                _, event = wire.decode_game_event(message)
            except (MalformedActionError, ValueError) as error:
                logger.error("cannot read event %d of match %s: %s", message.index, match_id, error)
                continue
            self._call_hook("on_event", hook, match_id, seat, event)

    def _action_request(self, message: arena_pb2.ActionRequest) -> list[arena_pb2.BotMessage]:
        self._deliver(message.match_id, message.seat, message.events)
        key = (message.match_id, message.seat)
        commitment = self._commitments.get(key)
        if commitment is not None:
            commitment.shown.ask(message)
            self._commitments.keep(key, commitment, commitment.size(key))
        elif key not in self._started:
            self._early.keep(key, None, key_size(key))
        previous = self._open.get(key)
        if (
            previous is not None
            and previous.request.request_id == message.request_id
            and message.attempt <= previous.request.attempt
        ):
            logger.debug(
                "request %s attempt %d already answered", message.request_id, message.attempt
            )
            return []
        try:
            request = request_from(message)
        except (MalformedActionError, ValueError) as error:
            logger.error(
                "cannot read request %s of match %s: %s",
                message.request_id,
                message.match_id,
                error,
            )
            return []
        if not request.legal_actions:
            # The server's fault, not the bot's: there is nothing the bot could legally answer,
            # so it is not called (a bot indexing an empty list would crash and be blamed for
            # it).  Nothing is sent back either: any action would be an illegal one, and the
            # referee's clock already decides what happens to a seat that does not answer.
            logger.error(
                "request %s of match %s (seat %d) from the server has no legal actions; "
                "the bot is not asked and nothing is answered",
                message.request_id,
                message.match_id,
                message.seat,
            )
            return []
        seen = getattr(request.observation, "seat", request.seat)
        if seen != request.seat:
            # The server's fault again: a bot handed seat 3's request with seat 1's view of the
            # table would answer for one seat what it sees as another, or crash on state it
            # keeps per seat.  Not asked, not answered: the referee's clock decides.
            logger.error(
                "request %s of match %s from the server is for seat %d but its observation is "
                "seat %s's; the bot is not asked and nothing is answered",
                message.request_id,
                message.match_id,
                message.seat,
                seen,
            )
            return []
        if key in self._started:
            self._started.keep(key, None, key_size(key))
        elif key not in self._strangers:
            # Answered all the same, after one warning per (match, seat).  The server sends a
            # seat's MatchStarted (resumed after a reconnect, as hello() forgets the last
            # connection's) before the seat's first request, so only a broken or hostile
            # server sends this.  Answering gives it nothing: the answer goes only to the
            # server that asked, which sees all the bot does anyway; not answering costs the
            # seat its clock, a whole match when the start was merely forgotten here (past
            # MAX_MATCHES, or one that could not be read).  A bot that keeps state per match
            # from on_match_start must expect it (or raise, and be reported as crashed).
            self._strangers.keep(key, None, key_size(key))
            logger.warning(
                "request %s of match %s for seat %d, though this connection had no start of "
                "that match for that seat; answering it all the same (said once per match "
                "and seat)",
                message.request_id,
                message.match_id,
                message.seat,
            )
        entry = _OpenRequest(request)
        if previous is not None and previous.request.request_id == message.request_id:
            # The same request again (after a rejection or a reconnect): what was refused
            # stays refused, and a spent request stays spent.
            entry.rejected = previous.rejected
            entry.rejections = previous.rejections
            entry.given_up = previous.given_up
            entry.ignoring = previous.ignoring
        self._open.keep(key, entry, request_size(key, _request_bytes(message)))
        if entry.given_up:
            logger.debug("request %s is spent: not answered again", message.request_id)
            return []
        return self._answer(entry)

    def _action_rejected(self, message: arena_pb2.ActionRejected) -> list[arena_pb2.BotMessage]:
        entry = self._open.get((message.match_id, message.seat))
        if entry is not None and entry.request.request_id != message.request_id:
            entry = None
        if entry is not None and entry.spent():
            # Nothing is left to try: answering again (or even looking at the legal list)
            # would only turn each tiny rejection into work.
            say = logger.debug if entry.ignoring else logger.warning
            entry.ignoring = True
            say(
                "request %s of match %s: rejected again with nothing left to try (every legal "
                "action or attempt was rejected); ignoring its further rejections",
                message.request_id,
                message.match_id,
            )
            return []
        rejection = rejection_from(message, entry.sent if entry is not None else None)
        left_out = 0 if entry is not None else self._unknown_rejections.allow()
        line = "request %s of match %s: %r rejected (%s): %s; %d attempt(s) left%s"
        (logger.debug if left_out is None else logger.warning)(
            line,
            message.request_id,
            message.match_id,
            rejection.action,
            rejection.code,
            message.message,
            message.attempts_left,
            f" ({left_out} such warning(s) left out)" if left_out else "",
        )
        if self._on_rejected is not None:
            self._call_hook("on_rejected", self._on_rejected, rejection)
        if entry is None:
            return []
        entry.rejections += 1
        if entry.sent is not None:
            entry.rejected.add(entry.sent)
            entry.sent = None  # (a second rejection with no answer between refuses nothing new)
        if message.attempts_left == 0:
            entry.given_up = True  # (no request follows: the referee's timeout policy applies)
            return []
        if entry.spent():
            logger.error(
                "request %s: %s; leaving it to the referee",
                message.request_id,
                "every legal action was rejected"
                if entry.rejections <= len(entry.legal)
                else f"{entry.rejections} rejections for {len(entry.legal)} distinct legal "
                "action(s)",
            )
            return []
        entry.request = dataclasses.replace(entry.request, attempt=entry.request.attempt + 1)
        return self._answer(entry)

    def _match_ended(self, message: arena_pb2.MatchEnded) -> list[arena_pb2.BotMessage]:
        self._deliver(message.match_id, message.seat, message.events)
        for key in [key for key in self._open if key[0] == message.match_id]:
            self._open.pop(key)
        self._started.pop((message.match_id, message.seat))
        self._strangers.pop((message.match_id, message.seat))
        self._early.pop((message.match_id, message.seat))
        end = match_end_from(message, self._check_deal(message))
        mine = end.mine
        logger.info(
            "match %s %s%s%s%s",
            end.match_id,
            end.status,
            f" ({end.reason})" if end.reason else "",
            # The protocol's rank counted from 1, as people count: "rank 3" is a losing Belote
            # team's seat (partners share a rank); what Bisca prints for people says its "place",
            # counted by sides (2nd), which a seat's message alone cannot tell.
            f": seat {mine.seat} scored {mine.score}, rank {mine.rank + 1}" if mine else "",
            {True: "; deal verified", False: "; DEAL NOT VERIFIED", None: ""}[end.deal_verified],
        )
        if self._on_match_end is not None:
            self._call_hook("on_match_end", self._on_match_end, end)
        return []

    # ---- bounded per-match state --------------------------------------------------------

    def _forget(self, what: str, key: Key) -> None:
        """An entry went past a bound (:class:`KeptTable`).  Said once per session, at the
        first one: a server that opens matches without end would otherwise turn each into a
        log line."""
        match_id, seat = key
        self._forgotten += 1
        if self._forgotten == 1:
            logger.warning(
                "more than %d matches open at once, or more than %d MB kept for them (does the "
                "server never end them?): forgetting %s (match %s, seat %d), the least "
                "recently active one, and so on for the next ones without a word",
                MAX_MATCHES,
                MAX_KEPT_BYTES // (1024 * 1024),
                what,
                match_id,
                seat,
            )
        else:
            logger.debug("forgetting %s (match %s, seat %d)", what, match_id, seat)

    # ---- the deal -------------------------------------------------------------------------

    def _remember_commitment(self, started: arena_pb2.MatchStarted) -> None:
        if not started.deal_commitment:
            return
        key = (started.match_id, started.seat)
        known = self._commitments.get(key)
        if known is None:
            try:
                game = wire.game_name(started.game)
                settings: Settings | None = wire.decode_game_settings(
                    game, started.settings if started.HasField("settings") else None
                )
            except (MalformedActionError, ValueError):
                game, settings = "", None  # (the start is refused, and said so, as it is read)
            commitment = _Commitment(
                started.deal_commitment,
                game,
                settings,
                resumed_first=started.resumed,
                early=key in self._early,
            )
            self._early.pop(key)
            self._commitments.keep(key, commitment, commitment.size(key))
        elif known.digest != started.deal_commitment:
            logger.error(
                "match %s: the resumed start commits to another deal (%s) than the first "
                "start did (%s); the deal cannot be trusted",
                started.match_id,
                started.deal_commitment.hex(),
                known.digest.hex(),
            )
            known.changed = True

    def _check_deal(self, ended: arena_pb2.MatchEnded) -> bool | None:
        """The check of the deal :attr:`MatchEnd.deal_verified` reports, logged when it fails."""
        commitment = self._commitments.pop((ended.match_id, ended.seat))
        if commitment is None:
            return None
        if ended.deal_sealed:
            logger.info(
                "match %s: the deal stays sealed while a match dealt from the same seed is "
                "played; check it later from the match's log",
                ended.match_id,
            )
            return None
        if not ended.deal_salt:
            logger.error(
                "match %s: the server committed to a deal but revealed no salt to check it",
                ended.match_id,
            )
            return False
        if not deal_matches(commitment.digest, ended):
            revealed = wire.deal_commitment(ended.deal_salt, ended.seed, ended.match_id)
            logger.error(
                "match %s: the deal does not match its commitment: SHA-256(salt %s || seed %d "
                "|| match id) is %s, the server committed to %s at the start",
                ended.match_id,
                ended.deal_salt.hex(),
                ended.seed,
                revealed.hex(),
                commitment.digest.hex(),
            )
            return False
        if commitment.changed:
            return False
        if commitment.early:
            logger.error(
                "match %s: the server sent seat %d's requests or events before its start: the "
                "deal cannot be trusted",
                ended.match_id,
                ended.seat,
            )
            return False
        if commitment.settings is not None:
            not_a_seat = seat_outside(commitment.game, commitment.settings, ended.seat)
            if not_a_seat is not None:
                logger.error("match %s: the deal cannot be checked: %s", ended.match_id, not_a_seat)
                return False
        if commitment.resumed_first:
            logger.info(
                "match %s: its start was not seen from the beginning (a resumed start came "
                "first): the deal cannot be checked",
                ended.match_id,
            )
            return None
        if commitment.shown.nothing:
            return True  # the seed was committed to, and no card of it was shown to the seat
        if commitment.settings is None:
            logger.error(
                "match %s: its start could not be read: the deal cannot be dealt again",
                ended.match_id,
            )
            return False
        why = start_dealt_from(
            commitment.game,
            commitment.settings,
            ended.seed,
            ended.seat,
            commitment.shown,
        )
        if why is not None:
            logger.error(
                "match %s: the cards were not dealt from the seed the server committed to (%d): %s",
                ended.match_id,
                ended.seed,
                why,
            )
            return False
        return True

    def _error(self, error: arena_pb2.Error) -> list[arena_pb2.BotMessage]:
        code = error_code_name(error.code)
        if error.fatal:
            logger.error("fatal error from the server: %s: %s", code, error.message)
            raise BotRejected(code, error.message)
        context = "".join(
            f" ({label} {value})"
            for label, value in (("match", error.match_id), ("request", error.request_id))
            if value
        )
        logger.warning("error from the server%s: %s: %s", context, code, error.message)
        return []

    # ---- answering ------------------------------------------------------------------------

    def _answer(self, entry: _OpenRequest) -> list[arena_pb2.BotMessage]:
        request = entry.request
        chosen = self._choose(entry)
        if isinstance(chosen, _Spent):
            logger.error(
                "request %s: every legal action was rejected; leaving it to the referee",
                request.request_id,
            )
            return []
        action, encoded = chosen
        entry.sent = action
        logger.debug("request %s attempt %d: %r", request.request_id, request.attempt, action)
        reply = arena_pb2.ActionReply(request_id=request.request_id, action=encoded)
        return [arena_pb2.BotMessage(action=reply)]

    def _choose(self, entry: _OpenRequest) -> tuple[Any, arena_pb2.GameAction] | _Spent:
        """The action to send for the open request and its encoding (the bot's answer, or
        the fallback in its place), or :data:`_SPENT` when nothing is left to send."""
        request = entry.request
        where = (
            f"bot callable, on request {request.request_id} (match {request.match_id}, "
            f"seat {request.seat})"
        )
        try:
            action = self._bot(request)
        except Exception as error:
            self._raised(where, error, "sending the first legal action instead")
            return _encoded(request.game, _fallback(entry))
        try:
            encoded = wire.encode_game_action(request.game, action)
        except MalformedActionError as error:
            hint = "does every path of choose() return an action?" if action is None else error
            shown = _SHOWN.repr(action)
            self._bug(
                where,
                f"bisca.client: request {request.request_id} (match {request.match_id}, seat "
                f"{request.seat}): the bot returned {shown}, {NOT_AN_ACTION} ({hint})",
                f"returned {shown}, {NOT_AN_ACTION} (said above)",
                "keep_going: sending the first legal action instead",
            )
            return _encoded(request.game, _fallback(entry))
        if entry.was_rejected(action):
            fallback = _fallback(entry)
            logger.warning(
                "request %s: the bot repeated the rejected %r; sending %r instead",
                request.request_id,
                action,
                fallback,
            )
            return _encoded(request.game, fallback)
        return action, encoded

    def _raised(self, where: str, error: Exception, instead: str) -> None:
        """The bot's code raised: its traceback is the report (:meth:`_bug`)."""
        lines = traceback.format_exception(error)
        self._bug(
            where,
            f"bisca.client: the {where} raised:\n" + "".join(lines).rstrip("\n"),
            "raised (traceback above)",
            f"keep_going: {instead} ({error!r})",
            cause=error,
        )

    def _bug(
        self, where: str, report: str, what: str, instead: str, cause: Exception | None = None
    ) -> None:
        """The bot's code has a bug (it raised, or answered no action): ``report`` on stderr,
        whatever the logging set-up (``bisca check-bot`` reads it there), then the end of the
        bot (:class:`BotCrashed`, saying the bot ``what``) or, with ``keep_going``, the line
        ``instead`` (what is done in its place)."""
        # Server text (a request or match id, and whatever the bot's exception quotes) is
        # printed without its control characters, as in the log lines.
        print(printable(report), file=sys.stderr, flush=True)
        if not self._keep_going:
            raise BotCrashed(where, what) from cause
        # Said on every use, on stderr itself: a fallback nobody sees is the bug this hides.
        print(printable(f"bisca.client: {instead}"), file=sys.stderr, flush=True)

    def _call_hook(self, name: str, hook: Callable[..., None], *args: Any) -> None:
        try:
            hook(*args)
        except Exception as error:
            self._raised(f"{name} hook", error, "going on")


def _fallback(entry: _OpenRequest) -> Any:
    """The first legal action the referee has not rejected for this request (or
    :data:`_SPENT`)."""
    for action in entry.legal:
        if action not in entry.rejected:
            return action
    return _SPENT


def _encoded(game: str, action: Any) -> tuple[Any, arena_pb2.GameAction] | _Spent:
    """A legal action with its encoding (:data:`_SPENT` stays itself)."""
    if isinstance(action, _Spent):
        return action
    return action, wire.encode_game_action(game, action)


def _request_bytes(message: arena_pb2.ActionRequest) -> int:
    """A request's wire size without its events (handed to the hooks, never kept)."""
    return message.ByteSize() - sum(event.ByteSize() + 3 for event in message.events)
