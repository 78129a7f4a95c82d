"""The league: a matchmaker that keeps remote bots playing (``bisca serve --league``).

``_matchmaker.py`` pairs the registered bots that are online into the league's games;
``_settings.py`` reads game settings written as text on the command line (``KEY=VALUE``,
``GAME:K=V,K=V``).  Local matches and tournaments are :mod:`bisca.server.tournament`'s; the bot
processes and their sandbox :mod:`bisca.server.sandbox`'s.
"""

from ._matchmaker import Matchmaker, start_league
from ._settings import SettingValue, parse_league_games, parse_setting

__all__ = [
    "Matchmaker",
    "SettingValue",
    "parse_league_games",
    "parse_setting",
    "start_league",
]
