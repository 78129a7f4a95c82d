"""League mode (``bisca serve --league GAME...``): a matchmaker that keeps remote bots playing.

Registered bots connect with their tokens and say in their Hello which games they play.  The
matchmaker, a trio task in the referee's nursery, keeps a queue of the bots that are online and
idle and, whenever enough of them wait for a game, forms a rated match of that game with the
settings given on the command line (seat counts come from those settings), so results flow
into the game's leaderboard.  Operators see the queue and the live matches with ``ListMatches``.

Decisions (docs/leagues.md, "League mode"):

* The queue is first come, first served: a bot waits from the moment it is seen online and
  idle, and the longest-waiting bots are matched first.  Games take turns: among the games a
  match could be formed for now, the one that formed a match least recently goes first (then
  the one whose longest-waiting bot has waited longest), so a game never starves another of
  bots that play both.
* The seats of a new match are shuffled, so Belote partners and Bestia's order around the
  table vary from match to match.
* A bot plays one match at a time, whatever number of connections it has (each match gets the
  bot's whole attention and clock), and a match never seats the same bot twice.
* A bot whose Hello names no game is never queued: it says nothing about what it can play.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Awaitable, Callable, Mapping
from functools import partial

import trio

from bisca.engine import GAMES, Settings
from bisca.server.errors import StoreError
from bisca.server.records import QueuedBot
from bisca.server.referee import MatchPlan, MatchRunner, Referee
from bisca.server.store import StoreOutage, VersionKind, is_store_lost, now

log = logging.getLogger("bisca.server.league")

POLL_SECONDS = 0.5
#: The bots of a league match are online when it is formed; one that drops at that moment
#: fails the match quickly instead of holding the others.
JOIN_TIMEOUT_SECONDS = 10.0


class Matchmaker:
    """Forms rated matches among the referee's idle, connected bots, continuously."""

    def __init__(
        self, referee: Referee, games: Mapping[str, Settings], *, rng: random.Random | None = None
    ) -> None:
        self.referee = referee
        self.games = games
        self.seats = {game: int(GAMES[game].seats(settings)) for game, settings in games.items()}
        self.rng = rng or random.Random()
        self._since: dict[str, tuple[float, str]] = {}
        self._last_formed: dict[str, float] = {}
        self._match_ended = trio.Event()
        self.formed = 0
        #: Bots this matchmaker leaves alone: a league's connected versions, which its ladder
        #: seats (``bisca.server.hosting``), read from the store at every round.
        self.reserved: set[str] = set()
        #: What it says and waits while the store does not answer (a wait doubling from
        #: ``POLL_SECONDS``).
        self._outage = StoreOutage(log, "league", POLL_SECONDS)

    async def run(self) -> None:
        log.info(
            "league: %s",
            ", ".join(f"{game} ({seats} seats)" for game, seats in self.seats.items()),
        )
        while True:
            # Read at every round, not when the ladder draws: a version connected while a
            # pairing was played was matched here, unpaced and unrated by the ladder's rules,
            # against whichever versions were online (review 52: four such versions played
            # 928 rated matches each in 40 s, only among themselves).
            try:
                self.reserved = await trio.to_thread.run_sync(self._connected_versions)
            except StoreError as problem:
                # The store lost: ride it out, as a worker does (an error escaping here would
                # end the referee's trio run: review op-1); another store error is a bug.
                if not is_store_lost(problem):
                    raise
                await trio.sleep(self._outage.failed(problem, "the league failed a round"))
                continue
            self._outage.answered()
            await self.form_matches()
            with trio.move_on_after(POLL_SECONDS):
                async with trio.open_nursery() as wake:
                    # Whichever comes first: a bot connects or leaves, or a match ends.
                    async def on(waiter: Callable[[], Awaitable[None]]) -> None:
                        await waiter()
                        wake.cancel_scope.cancel()

                    wake.start_soon(on, self.referee.wait_bots_changed)
                    wake.start_soon(on, self._match_ended.wait)
            if self._match_ended.is_set():
                self._match_ended = trio.Event()

    def _connected_versions(self) -> set[str]:
        """The player names of the store's connected versions, whatever their state."""
        connected = self.referee.store.versions.of_kind(VersionKind.CONNECTED)
        return {version.player for version in connected}

    async def _watch(self, runner: MatchRunner) -> None:
        await runner.done.wait()
        self._match_ended.set()

    # ---- the queue --------------------------------------------------------------------------

    def busy(self) -> set[str]:
        """Bots with a seat in a match that has not ended (league or not)."""
        return {
            bot
            for runner in self.referee.matches.values()
            if not runner.status.is_over
            for bot in runner.bots
        }

    def queue(self) -> list[QueuedBot]:
        """The idle bots waiting for a league match, longest-waiting first."""
        busy = self.busy()
        local = set(self.referee.ephemeral.values())
        waiting: dict[str, tuple[str, ...]] = {}
        for bot, connections in self.referee.online.items():
            if bot in busy or bot in local or bot in self.reserved:
                continue
            games = {g for c in connections if c.alive for g in c.games if g in self.games}
            if games:
                waiting[bot] = tuple(sorted(games))
        clock = trio.current_time()
        for bot in list(self._since):
            if bot not in waiting:
                del self._since[bot]
        for bot in waiting:
            self._since.setdefault(bot, (clock, now()))
        entries = [QueuedBot(bot, games, *self._since[bot]) for bot, games in waiting.items()]
        return sorted(entries, key=lambda e: (e.since, e.bot))

    def next_match(self, queue: list[QueuedBot]) -> tuple[str, list[str]] | None:
        """The game and bots of the next match to form from ``queue``, if any can be."""
        best: tuple[tuple[float, float], str, list[str]] | None = None
        for game, seats in self.seats.items():
            players = [entry for entry in queue if game in entry.games][:seats]
            if len(players) < seats:
                continue
            key = (self._last_formed.get(game, -math.inf), players[0].since)
            if best is None or key < best[0]:
                best = (key, game, [entry.bot for entry in players])
        if best is None:
            return None
        _, game, bots = best
        self._last_formed[game] = trio.current_time()
        self.rng.shuffle(bots)
        return game, bots

    async def form_matches(self) -> None:
        # The queue is read again before each match: while one is recorded, bots may leave or
        # be seated elsewhere (an operator's CreateMatch).
        handled: set[str] = set()  # this round's bots, matched or not
        while (
            chosen := self.next_match([e for e in self.queue() if e.bot not in handled])
        ) is not None:
            game, bots = chosen
            try:
                runner = await self.referee.create_match(
                    MatchPlan(
                        game,
                        self.games[game],
                        tuple(bots),
                        rated=True,
                        join_timeout=JOIN_TIMEOUT_SECONDS,
                    )
                )
            except ValueError as problem:  # a bot unregistered meanwhile, ...
                log.warning("league: could not start a %s match of %s: %s", game, bots, problem)
            except Exception:  # a store error: these bots are matched again next round
                log.exception("league: could not start a %s match of %s", game, bots)
            else:
                self.formed += 1
                self.referee.spawn(partial(self._watch, runner))
                log.info("league: %s %s for %s", game, runner.id, ", ".join(bots))
            # Either way these bots leave this round's queue; they come back when idle.
            handled.update(bots)
            for bot in bots:
                self._since.pop(bot, None)


async def start_league(referee: Referee, games: Mapping[str, Settings]) -> Matchmaker:
    """Start a matchmaker for ``games`` in the referee's nursery (a trio function)."""
    matchmaker = Matchmaker(referee, games)
    referee.matchmaker = matchmaker
    referee.spawn(matchmaker.run)
    return matchmaker
