"""The ladder's draw of the next pairing: new versions first, the pace held, opponents near
the anchor's rating (yet the far ones reached), never two versions of one bot, duplicate
rotations on one deal."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bisca.server.errors import ConfigError
from bisca.server.league import (
    PACE_WINDOW,
    LadderEntrant,
    LadderSettings,
    next_pairing,
    paced_until,
)


def entrant(bot: str, mu: float, matches: int = 50, version: int = 1) -> LadderEntrant:
    return LadderEntrant(f"{bot}.v{version}", bot, mu, 2.0, matches, 0)


LADDER = [entrant(f"bot{i}", 15.0 + 2 * i) for i in range(8)]  # μ 15, 17, ... 29


def play(entrants: list[LadderEntrant], players: tuple[str, ...]) -> list[LadderEntrant]:
    """The entrants after a match of ``players`` (one more match, one more in this hour)."""
    return [
        replace(e, matches=e.matches + 1, played_last_hour=e.played_last_hour + 1)
        if e.player in players
        else e
        for e in entrants
    ]


def test_a_new_version_plays_first_until_its_rating_settles() -> None:
    rng = random.Random(1)
    settings = LadderSettings(matches_per_hour=100, newcomer_matches=10)
    entrants = [*LADDER, entrant("bot3", 22.0, matches=0, version=2)]
    for round_number in range(10):
        pairing = next_pairing(entrants, 2, settings, rng)
        assert pairing is not None and "bot3.v2" in pairing.players, round_number
        assert "bot3.v1" not in pairing.players  # never its own bot's other version
        entrants = play(entrants, pairing.players)
    pairing = next_pairing(entrants, 2, settings, rng)
    assert pairing is not None and "bot3.v2" not in pairing.players


def test_the_pace_is_held_and_every_version_keeps_playing() -> None:
    rng = random.Random(2)
    settings = LadderSettings(matches_per_hour=6, newcomer_matches=0)
    entrants = list(LADDER)
    played: Counter[str] = Counter()
    while (pairing := next_pairing(entrants, 2, settings, rng)) is not None:
        played.update(pairing.players)
        entrants = play(entrants, pairing.players)
    # An hour of 8 versions at 6 an hour: 24 pairings, every version at its pace, none over.
    assert sorted(played.values()) == [6] * 8


def test_a_paced_version_may_be_drawn_again_once_enough_of_its_matches_leave_the_hour() -> None:
    settings = LadderSettings(matches_per_hour=3)
    at = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    started = [at + timedelta(minutes=minutes) for minutes in (40, 5, 20, 30)]  # any order
    assert paced_until(started[:2], settings) is None  # below its pace
    # 3 an hour: with 3 started it waits for the oldest (12:05) to leave the hour; with 4, the
    # two oldest (12:05, 12:20).
    assert paced_until(started[:3], settings) == at + timedelta(minutes=5) + PACE_WINDOW
    assert paced_until(started, settings) == at + timedelta(minutes=20) + PACE_WINDOW


def test_opponents_are_drawn_near_the_rating_and_the_far_ones_still_met() -> None:
    rng = random.Random(3)
    settings = LadderSettings(matches_per_hour=10**6, newcomer_matches=1, spread=3.0)
    newcomer = entrant("new", 15.0, matches=0)
    met: Counter[str] = Counter()
    for _ in range(3000):
        pairing = next_pairing([*LADDER, newcomer], 2, settings, rng)
        assert pairing is not None
        met.update(player for player in pairing.players if player != "new.v1")
    assert met["bot0.v1"] > met["bot1.v1"] > met["bot3.v1"] > met["bot7.v1"] > 0


def test_duplicate_rotations_share_one_deal_and_too_few_bots_wait() -> None:
    rng = random.Random(4)
    duplicate = LadderSettings(duplicate=True)
    pairing = next_pairing(LADDER[:4], 4, duplicate, rng)
    assert pairing is not None and len(set(pairing.players)) == 4
    assert len(pairing.seatings) == 4
    assert {tuple(sorted(s)) for s in pairing.seatings} == {tuple(sorted(pairing.players))}
    assert [s[0] for s in pairing.seatings] == list(pairing.players)  # each leads once
    single = next_pairing(LADDER[:2], 2, LadderSettings(), rng)
    assert single is not None and len(single.seatings) == 1
    same_bot = [entrant("solo", 20.0), entrant("solo", 21.0, version=2)]
    assert next_pairing(same_bot, 2, LadderSettings(), rng) is None
    with pytest.raises(ValueError, match="matches_per_hour must be 1 or more"):
        LadderSettings(matches_per_hour=0)


def test_by_default_a_pairing_is_one_match_whose_seats_are_drawn() -> None:
    """Without duplicate deals (the default since review s58d: a hosted bot can remember a
    deal from one rotation to the next) a pairing is one match; its anchor, a newcomer, sits
    in every seat as often as chance has it, not always first."""
    assert LadderSettings().duplicate is False
    rng = random.Random(6)
    newcomer = entrant("new", 25.0, matches=0)
    seats: Counter[int] = Counter()
    for _ in range(400):
        pairing = next_pairing([newcomer, *LADDER[:5]], 4, LadderSettings(), rng)
        assert pairing is not None and pairing.players[0] == "new.v1"  # the anchor
        [seating] = pairing.seatings
        assert sorted(seating) == sorted(pairing.players)
        seats[seating.index("new.v1")] += 1
    assert sorted(seats) == [0, 1, 2, 3] and min(seats.values()) > 60, seats


def test_one_accounts_bots_never_share_a_table() -> None:
    """Review 52: a pairing kept two versions of one *bot* apart only, so one account's bots
    could fill a table and throw their games to its best one (it went to the top in 30 s) or
    pass it the others' hands.  A pairing seats each account once."""
    owned = [replace(e, account="mallory" if i < 6 else f"owner{i}") for i, e in enumerate(LADDER)]
    rng = random.Random(5)
    # Three accounts: mallory's six bots and two others; a table of four needs four.
    assert next_pairing(owned, 4, LadderSettings(), rng) is None
    owned.append(replace(entrant("bot8", 20.0), account="olive"))
    for _ in range(200):
        pairing = next_pairing(owned, 4, LadderSettings(), rng)
        assert pairing is not None
        accounts = [e.account for e in owned if e.player in pairing.players]
        assert len(set(accounts)) == 4, accounts


def test_a_bot_that_plays_slowly_is_not_the_anchor_of_every_pairing() -> None:
    """Review 52: the anchor was the version that played the fewest matches in the hour, and a
    bot answering at the end of its clock plays the fewest: it anchored every pairing of the
    one-table ladder (175 matches in 15 s fell to 4 in 110 s).  The anchor is the version that
    spent the least time at the table."""
    slow = replace(LADDER[0], played_last_hour=2, seconds_last_hour=600.0)
    others = [replace(e, played_last_hour=5, seconds_last_hour=25.0) for e in LADDER[1:]]
    rng = random.Random(11)
    seated = 0
    for _ in range(300):
        pairing = next_pairing([slow, *others], 4, LadderSettings(), rng)
        assert pairing is not None and pairing.players[0] != slow.player  # never the anchor
        seated += slow.player in pairing.players
    assert 0 < seated < 300  # an opponent now and then, as its rating draws it


def test_a_ladder_setting_of_the_wrong_kind_is_said_in_words() -> None:
    """``--ladder KEY=VALUE`` names the kind a setting takes as a person says it (review 53:
    "matches_per_hour is a int")."""
    with pytest.raises(ConfigError) as wrong:
        LadderSettings().with_settings(["matches_per_hour=1e9"])
    assert str(wrong.value) == "--ladder matches_per_hour=1e9: matches_per_hour is a whole number"
    assert LadderSettings().with_settings(["matches_per_hour=30"]).matches_per_hour == 30


def test_how_long_the_ladder_keeps_its_seats_output_is_a_setting_with_bounds() -> None:
    """``output_days``: above 0 (a ladder keeps what it shows), 3650 at most (more is a typo,
    and past ~2.7 million days the sweep's ``timedelta`` could not be made)."""
    assert LadderSettings().output_days == 14
    assert LadderSettings().with_settings(["output_days=0.5"]).output_days == 0.5
    for wrong in ("output_days=0", "output_days=-1", "output_days=1e9"):
        with pytest.raises(ConfigError) as refused:
            LadderSettings().with_settings([wrong])
        assert str(refused.value) == "the ladder's output_days must be above 0 and 3650 at most"


def test_how_often_a_ladder_worker_looks_again_is_bounded() -> None:
    """Review s57c: ``poll_s=inf`` started a ladder that never looked again."""
    assert LadderSettings().with_settings(["poll_s=0.5"]).poll_s == 0.5
    for wrong in ("poll_s=0", "poll_s=inf", "poll_s=nan", "poll_s=1e300"):
        with pytest.raises(ConfigError) as refused:
            LadderSettings().with_settings([wrong])
        assert str(refused.value) == "the ladder's poll_s must be above 0 and 3600 at most"
