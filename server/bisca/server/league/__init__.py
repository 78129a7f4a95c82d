"""The league: a matchmaker that keeps remote bots playing (``bisca serve --league``).

``_matchmaker.py`` pairs the registered bots that are online into the league's games;
``_ladder.py`` draws the next pairing of a ladder of submitted versions (pace, new versions
first, near their rating, duplicate deals); ``_pace.py`` reads from the store what holds a
version back (its pace, a rest after its bot failed to start);
``_settings.py`` reads game settings written as text on the command line (``KEY=VALUE``,
``GAME:K=V,K=V``).  Local matches and tournaments are :mod:`bisca.server.tournament`'s; the bot
processes and their sandbox :mod:`bisca.server.sandbox`'s.
"""

from ._ladder import (
    PACE_WINDOW,
    LadderEntrant,
    LadderPairing,
    LadderSettings,
    next_pairing,
    paced_until,
)
from ._matchmaker import Matchmaker, start_league
from ._pace import (
    CUT_OFF_LADDER_ATTEMPT,
    FAILING_STREAK,
    FIRST_REST,
    SERVER_STOPPED_ROTATION,
    UNPLAYED_LADDER_ROTATION,
    Resting,
    in_pace_window,
    not_played_ladder_match,
    resting,
    seconds_played,
    started_in_pace_window,
    unplayed_ladder_rotation,
)
from ._settings import (
    SettingValue,
    merged_settings,
    parse_league_games,
    parse_setting,
    setting_text,
)

__all__ = [
    "CUT_OFF_LADDER_ATTEMPT",
    "FAILING_STREAK",
    "FIRST_REST",
    "PACE_WINDOW",
    "SERVER_STOPPED_ROTATION",
    "UNPLAYED_LADDER_ROTATION",
    "LadderEntrant",
    "LadderPairing",
    "LadderSettings",
    "Matchmaker",
    "Resting",
    "SettingValue",
    "in_pace_window",
    "merged_settings",
    "next_pairing",
    "not_played_ladder_match",
    "paced_until",
    "parse_league_games",
    "parse_setting",
    "resting",
    "seconds_played",
    "setting_text",
    "start_league",
    "started_in_pace_window",
    "unplayed_ladder_rotation",
]
