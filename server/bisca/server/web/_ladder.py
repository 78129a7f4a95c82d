"""A version on the ladder over HTTP (``docs/league-server.md``, "What the owner sees"):
``GET /api/bots/BOT/versions/N/ladder`` is public (its ratings, rating history and matches),
with its counts of what went wrong and each match's stderr and stdout links for its owner and
the operator alone; ``GET /api/bots/BOT/versions/N/matches/ID/stderr`` (and ``.../stdout``)
is what the version wrote to that stream in one match, its owner's and the operator's (403 for
anybody else), as the store keeps it (put there by whichever machine played the match: this
one, or a ``bisca worker``), else as this machine's disk has it (a match still under way
here).  Like a replay, it is held while
another match dealt the same cards is not over (a pairing's rotations, ``_sealing.py``): a bot
that writes the cards it is shown would give its owner the hands of the rotations to come
(review 52).

A version's page also says why the ladder leaves it ``waiting`` (:func:`waiting`): the ladder
pairs only as many *different* bots as a game has seats, so a league with fewer bots active
plays nothing, and a version alone cannot tell why (review 45)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from aiohttp import web

from bisca.engine import GAMES
from bisca.server.accounts import parse_manifest
from bisca.server.datadir import DataDir, OutputStream, seat_output_file
from bisca.server.league import (
    LadderSettings,
    Matchmaker,
    paced_until,
    resting,
    started_in_pace_window,
)
from bisca.server.records import MatchRecord, game_places
from bisca.server.referee import Deal, Referee
from bisca.server.store import (
    MAX_SEAT_OUTPUT,
    AccountStatus,
    BotVersionRecord,
    PlayerTotals,
    SeatOutput,
    Store,
    VersionKind,
    VersionState,
    stamp,
)
from bisca.server.textfiles import read_tail

from ._api import HISTORY_POINTS
from ._json import JsonObject, Problem
from ._recent import RecentAnswers
from ._submissions import SubmissionsApi, version_json

#: The most matches a version's page lists (the newest), and of each seat's stream it shows.
LADDER_MATCHES = 100
#: A version's pages built at once (each reads the version's ratings, history and matches and
#: the league's standings: 20-50 ms of a few hundred matches' league): the askers of others
#: wait their turn, off the loop, rather than take the loop's share of the process together.
PAGES_AT_ONCE = 1
MAX_OUTPUT = MAX_SEAT_OUTPUT


def _own_seats(match: MatchRecord, player: str) -> list[int]:
    return [seat for seat, bot in enumerate(match.bots) if bot == player]


def _output_link(version: BotVersionRecord, match_id: str, stream: OutputStream) -> str:
    return f"/api/bots/{version.bot}/versions/{version.version}/matches/{match_id}/{stream}"


def _match_json(match: MatchRecord, version: BotVersionRecord, owner: bool) -> JsonObject:
    seats = _own_seats(match, version.player)
    results = [record for record in match.seats if record.seat in seats]
    shown = game_places(match.game, match.seats)
    own_places = [place for record, place in zip(match.seats, shown, strict=True)
                  if record.seat in seats]  # fmt: skip
    return {
        "match_id": match.id,
        "game": match.game,
        "status": match.status.value,
        "created_at": match.created_at,
        "finished_at": match.finished_at,
        "players": list(match.bots),
        "seats": seats,
        "score": sum(record.score for record in results) if results else None,
        "place": min(own_places) if own_places else None,
        "forfeited": any(record.forfeited for record in results),
        "stderr": _output_link(version, match.id, OutputStream.STDERR) if owner else None,
        "stdout": _output_link(version, match.id, OutputStream.STDOUT) if owner else None,
    }


def _games(version: BotVersionRecord) -> Sequence[str]:
    """A hosted version's games are its manifest's; a connected one plays what it says."""
    if version.kind is VersionKind.CONNECTED:
        return list(GAMES)
    return parse_manifest(version.manifest).games


def league_seats(referee: Referee) -> dict[str, int]:
    """The league's games with each one's seats: its matchmaker's, started with the ladder
    from the same ``--league`` games (``bisca serve``); none on a server without a league."""
    matchmaker = referee.matchmaker
    return dict(matchmaker.seats) if isinstance(matchmaker, Matchmaker) else {}


def online_games(referee: Referee) -> dict[str, frozenset[str]]:
    """The games each online bot's live connections play (a connected version is online under
    its player name); read in the referee's thread, where its state changes."""
    return {
        bot: frozenset(game for connection in connections if connection.alive
                       for game in connection.games)
        for bot, connections in referee.online.items()
    }  # fmt: skip


def _may_play(version: BotVersionRecord, game: str, online: Mapping[str, frozenset[str]]) -> bool:
    """Whether the ladder may draw ``version`` in ``game``: a hosted one plays its manifest's
    games, a connected one those of its live connections."""
    if version.kind is VersionKind.CONNECTED:
        return game in online.get(version.player, frozenset())
    return game in parse_manifest(version.manifest).games


def waiting(
    store: Store,
    version: BotVersionRecord,
    seats: Mapping[str, int],
    online: Mapping[str, frozenset[str]],
    ladder: LadderSettings | None = None,
) -> list[JsonObject]:
    """Why the ladder cannot draw an active ``version`` now: its pace first (``ladder``'s
    ``matches_per_hour``, for every game), its rest after its bot failed to start
    (``league.resting``), then one entry per game of the league it plays
    (none: nothing keeps it waiting but its turn).  A pairing seats versions of as many
    different accounts as the game has seats, two versions of one account never meeting
    (``bisca.server.league.next_pairing``): with fewer accounts active in a game, that game's
    ladder plays nothing at all.  A connected version plays only while its bot is online."""
    if version.state is not VersionState.ACTIVE:
        return []
    account = store.accounts.get(version.account)
    if account is not None and account.status is not AccountStatus.ACTIVE:
        # The ladder draws no version of an account that is not active: said first, and alone
        # (the other reasons would send its owner looking for another cause; operator review).
        reason = (
            f"waiting: its account {account.name} is {account.status}; its versions are not drawn"
        )
        return [{"why": "account", "status": str(account.status), "reason": reason}]
    playing = store.versions.playing()
    found: list[JsonObject] = [] if ladder is None else _pace(store, version, ladder)
    rest = resting(store, version.player, datetime.now(UTC))
    if rest is not None:
        found.append(
            {"why": "failing", "until": stamp(rest.until), "last": rest.last.id,
             "streak": rest.streak, "reason": rest.reason}
        )  # fmt: skip
    for game in _games(version):
        if game not in seats:
            continue
        if not _may_play(version, game, online):
            reason = f"waiting: a connected version plays {game} while its bot is online; it is not"
            found.append({"why": "offline", "game": game, "reason": reason})
            continue
        able = [other for other in playing if _may_play(other, game, online)]
        bots = len({other.account for other in able})
        if bots < seats[game]:
            reason = (
                f"waiting: the {game} ladder needs bots of {seats[game]} different accounts "
                f"active; {bots} {'has' if bots == 1 else 'have'} one"
            )
            found.append(
                {"why": "bots", "game": game, "seats": seats[game], "bots": bots, "reason": reason}
            )
        elif ladder is not None:
            found += _others_held(store, version, able, game, seats[game], ladder)
    return found


def _others_held(
    store: Store,
    version: BotVersionRecord,
    able: Sequence[BotVersionRecord],
    game: str,
    seats: int,
    ladder: LadderSettings,
) -> list[JsonObject]:
    """Why ``version`` waits in ``game`` when enough accounts have a version active but too few
    of them may be drawn now (the others at their pace, or resting), if so: the other accounts
    it needs and when the first of the held ones may be drawn again (review s58e: a version
    sent once the others had played their hour waited an hour, its page saying nothing).  It
    stops reading at the first ``seats - 1`` accounts free, so a league that plays costs a few
    reads."""
    at = datetime.now(UTC)
    free: set[str] = set()
    held: list[datetime] = []
    for other in able:
        if other.account == version.account or other.account in free:
            continue
        rest = resting(store, other.player, at)
        paced = paced_until(started_in_pace_window(store, other.player, at), ladder)
        if rest is None and paced is None:
            free.add(other.account)
            if len(free) >= seats - 1:
                return []
        else:
            held += [until for until in (paced, None if rest is None else rest.until) if until]
    until = min(held) if held else None
    needed, may = seats - 1, len(free)
    reason = (
        f"waiting: the {game} ladder needs bots of {needed} other accounts that may be drawn "
        f"now; {may} {'has' if may == 1 else 'have'} one (the others played their "
        f"{ladder.matches_per_hour} matches of the hour, or rest)"
    )
    if until is not None:
        reason += f"; the first may be drawn again from {until:%H:%M} UTC"
    entry: JsonObject = {
        "why": "others", "game": game, "needed": needed, "free": may,
        "pace": ladder.matches_per_hour, "reason": reason,
        "until": None if until is None else stamp(until),
    }  # fmt: skip
    return [entry]


def _pace(store: Store, version: BotVersionRecord, ladder: LadderSettings) -> list[JsonObject]:
    """The version's pace, if it holds it back: the matches it started in the last hour, and
    when the ladder may draw it again."""
    started = started_in_pace_window(store, version.player, datetime.now(UTC))
    until = paced_until(started, ladder)
    if until is None:
        return []
    pace = ladder.matches_per_hour
    reason = (
        f"waiting: it started {len(started)} matches in the last hour, the ladder's pace "
        f"({pace} an hour); it may be drawn again from {until:%H:%M} UTC"
    )
    return [
        {
            "why": "pace",
            "pace": pace,
            "played_last_hour": len(started),
            "until": stamp(until),
            "reason": reason,
        }
    ]


def version_ladder_page(
    store: Store,
    version: BotVersionRecord,
    owner: bool,
    seats: Mapping[str, int] | None = None,
    online: Mapping[str, frozenset[str]] | None = None,
    ladder: LadderSettings | None = None,
) -> JsonObject:
    """A version's page; ``seats`` and ``online`` (:func:`league_seats`, :func:`online_games`)
    and ``ladder`` (the server's) say why it waits, none without them."""
    player = version.player
    ratings: list[JsonObject] = []
    history: list[JsonObject] = []
    for game in _games(version):
        for row in store.ratings.leaderboard(game, retired=True):
            if row.bot == player:
                ratings.append(
                    {"game": game, "mu": row.mu, "sigma": row.sigma,
                     "conservative": row.conservative, "matches": row.matches}
                )  # fmt: skip
        history += [
            {"game": game, "match_id": update.match_id, "rank": update.rank,
             "result": update.result, "mu": update.mu, "sigma": update.sigma,
             "at": update.created_at}
            for update in store.ratings.history(game, player, newest=HISTORY_POINTS)
        ]  # fmt: skip
    matches = store.matches.find(None, LADDER_MATCHES, player=player)
    return {
        "version": version_json(version),
        "ratings": ratings,
        "history": history,
        "matches": [_match_json(match, version, owner) for match in matches],
        "counts": _counts(store.matches.player_totals(player)) if owner else None,
        "waiting": waiting(store, version, seats or {}, online or {}, ladder),
    }


def _counts(totals: PlayerTotals) -> JsonObject:
    """What went wrong in a version's matches, for its owner."""
    return {
        "matches": totals.matches,
        "timeouts": totals.incidents.timeouts,
        "illegal_moves": totals.incidents.illegal_moves,
        "crashes": totals.incidents.crashes,
        "defaults": totals.incidents.defaults_played,
        "forfeits": totals.forfeits,
    }


def _played_by(store: Store, version: BotVersionRecord, match_id: str) -> MatchRecord | None:
    """The match, if the version played it."""
    match = store.matches.get(match_id)
    return match if match is not None and _own_seats(match, version.player) else None


#: Why a seat has no output to show: a connected version's is on its owner's machine, a
#: worker's match not over yet has it on the worker's disk, and the ladder forgets each after
#: its ``output_days``.
NOT_KEPT = "a connected version's seat, a match not over, or one older than the ladder keeps"


def _output_text(
    store: Store, version: BotVersionRecord, match: MatchRecord, stream: OutputStream
) -> str:
    """What the version wrote to ``stream`` in ``match``, every seat of it (its last
    :data:`MAX_OUTPUT` bytes each), from the store; while the match is not over, from this
    machine's disk, where it is written."""
    kept = store.logs.output(match.id)
    folder = DataDir(store.data_dir).match_dir(match.id)
    parts = []
    for seat in _own_seats(match, version.player):
        text = _kept_text(kept.get(seat), stream)
        if text is None and _on_disk(match, kept.get(seat)):
            text = _disk_text(seat_output_file(folder, seat, stream), stream)
            if text is None:  # removed since: its match ended, and the ladder kept it
                text = _kept_text(store.logs.output(match.id).get(seat), stream)
        if text is None:
            text = f"(no {stream} is kept for this seat: {NOT_KEPT})\n"
        parts.append(f"--- {version.player}, seat {seat} ---\n{text}")
    return "".join(parts)


def _on_disk(match: MatchRecord, kept: SeatOutput | None) -> bool:
    """Whether a seat's output not in the store is read beside the match: while the match is
    not over (the ladder keeps it once it is, and removes the files), and a stdout played
    before the store kept one (migration 16: its stderr is kept).  Never a file a match over
    left beside it otherwise: its output is forgotten (review s56)."""
    return not match.status.is_over or kept is not None


def _kept_text(kept: SeatOutput | None, stream: OutputStream) -> str | None:
    if kept is None:
        return None
    written = kept.stderr if stream is OutputStream.STDERR else kept.stdout
    return None if written is None else written[-MAX_OUTPUT:].decode(errors="replace")


def _disk_text(path: Path, stream: OutputStream) -> str | None:
    try:
        return read_tail(path, MAX_OUTPUT).decode(errors="replace")
    except FileNotFoundError:
        return None
    except OSError as problem:  # (its bot made it unreadable: the ladder reads it as it ends)
        return f"(its {stream} cannot be read here now: {problem.strerror or problem})\n"


class LadderApi:
    """The ladder's routes of a version, beside its submissions' (and their owner checks)."""

    def __init__(self, submissions: SubmissionsApi) -> None:
        self.submissions = submissions
        # What anybody may read of a version is made once a second at most (review s58b: built
        # for each asker, fourteen anonymous requests a second cut the ladder's matches by
        # three quarters); its owner's page, which says more, is made for each of its asks.
        self.public_pages: RecentAnswers[str] = RecentAnswers()
        self._building = asyncio.Semaphore(PAGES_AT_ONCE)

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/api/bots/{bot}/versions/{version}/ladder", self.ladder),
            web.get(
                "/api/bots/{bot}/versions/{version}/matches/{match}/{stream:stdout|stderr}",
                self.output,
            ),
        ]

    async def ladder(self, request: web.Request) -> web.Response:
        version = await self.submissions.named_version(request)
        if await self.submissions.may_read_logs(request, version):
            return web.json_response(text=await self._page(version, owner=True))
        made = partial(self._page, version, owner=False)
        key = ("ladder", version.bot, version.version)
        return web.json_response(text=await self.public_pages.get(key, made))

    async def _page(self, version: BotVersionRecord, *, owner: bool) -> str:
        async with self._building:
            store = self.submissions.accounts.league().store
            referee = self.submissions.accounts.backend.referee
            # The referee's state is read here, in its thread; the store's in a worker thread.
            seats, online = league_seats(referee), online_games(referee)
            ladder = self.submissions.accounts.backend.ladder
            page = await asyncio.to_thread(
                version_ladder_page, store, version, owner, seats, online, ladder
            )
        return json.dumps(page)

    async def output(self, request: web.Request) -> web.Response:
        stream = OutputStream(request.match_info["stream"])
        version = await self.submissions.owned_version(request)
        store = self.submissions.accounts.league().store
        match_id = request.match_info["match"]
        match = await asyncio.to_thread(_played_by, store, version, match_id)
        if match is None:
            raise Problem(404, f"{version.label} played no match {match_id!r}")
        backend = self.submissions.accounts.backend
        sealing = await backend.guest.call(
            partial(backend.referee.sealing_match, Deal(match.game, match.seed), besides=match.id)
        )
        if sealing is not None:
            raise Problem(
                403,
                f"match {sealing} is dealt the same cards and is not over; {version.label}'s "
                f"{stream} in {match.id} opens when it is",
            )
        text = await asyncio.to_thread(_output_text, store, version, match, stream)
        return web.Response(text=text, content_type="text/plain")
