"""A bot may not learn other bots' matches by replying to request ids it guesses.

Request ids are opaque (``Referee.new_request_id``: a keyed hash of a counter), so a bot can
neither guess another's nor count the requests sent between two of its own (review s58c G1:
the counter told the table which seat's default player played).  ``ERROR_CODE_NOT_YOUR_SEAT``
(with the request's match) answers a reply to a request of the bot's *own* seat held by
another of its connections; a request of another bot's seat, its id known, is as unknown as
one never sent.
"""

from __future__ import annotations

import re
from pathlib import Path

import trio

from bisca.engine import GAMES
from bisca.server.referee import MatchPlan, Referee, ServerOptions, clock_settings
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from tests.support.fake_bots import connect
from tests.support.waiting import wait_until


def test_a_bot_is_not_told_the_matches_of_other_bots(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = Referee(
            Store.in_directory(tmp_path),
            ServerOptions(clock=clock_settings(60_000, 0, "forfeit"), hello_timeout=5),
        )
        async with trio.open_nursery() as nursery:
            await nursery.start(referee.run)
            mine, theirs = ["a", "b", "c", "d"], ["e", "f", "g", "h"]
            bots = await connect(referee, mine + theirs, playing=False)
            settings = GAMES["belote"].settings({"deals": 1})
            my_match = await referee.create_match(MatchPlan("belote", settings, tuple(mine)))
            their_match = await referee.create_match(MatchPlan("belote", settings, tuple(theirs)))
            await wait_until(
                lambda: sum(1 for b in bots.values() if b.of_kind("action_request")) == 2
            )
            # The prober: the seat of its own match that was asked.  It replies to the other
            # match's open request, its id learnt somehow, and to ids a counter would give.
            prober = next(bots[n] for n in mine if bots[n].of_kind("action_request"))
            theirs_asked = next(bots[n] for n in theirs if bots[n].of_kind("action_request"))
            their_id = theirs_asked.of_kind("action_request")[-1].action_request.request_id
            own_id = prober.of_kind("action_request")[-1].action_request.request_id
            assert re.fullmatch("r[0-9a-f]{24}", own_id) and re.fullmatch("r[0-9a-f]{24}", their_id)
            for request_id in [their_id, *(f"r{n}" for n in range(1, 50))]:
                referee.message_received(
                    prober.id, pb.BotMessage(action=pb.ActionReply(request_id=request_id))
                )
            told = {
                m.error.match_id
                for m in prober.of_kind("error")
                if m.error.code == pb.ERROR_CODE_NOT_YOUR_SEAT
            }
            print(f"{prober.id} (in {my_match.id}) was told of matches {sorted(told)}")
            nursery.cancel_scope.cancel()
            assert their_match.id not in told, (
                f"a bot of {my_match.id} was told that {their_match.id} (a match of other bots) "
                "exists and has an open request"
            )

    trio.run(scenario)


def test_request_ids_are_unique_and_say_nothing_of_their_order(tmp_path: Path) -> None:
    """No id says how many were made before it (their order is not the ids' order), and
    another run of the server makes others."""
    referee = Referee(Store.in_directory(tmp_path / "one"), ServerOptions())
    made = [referee.new_request_id() for _ in range(20_000)]
    assert len(set(made)) == len(made)
    assert all(re.fullmatch("r[0-9a-f]{24}", request_id) for request_id in made)
    assert sorted(made) != made
    again = Referee(Store.in_directory(tmp_path / "two"), ServerOptions())
    assert again.new_request_id() not in made
