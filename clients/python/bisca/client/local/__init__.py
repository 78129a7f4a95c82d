"""Matches in-process, the way Kaggle's ``env.run`` plays them: a bot's own callbacks against
sample bots or other callbacks, on the engine, with no server, gRPC or sandbox.

    from bisca.client.local import play_match

    def mine(request):
        return request.legal_actions[0]

    result = play_match("belote", [mine, "greedy", "random", "greedy"], seed=7, log="m.binlog")
    print(result.scores)        # then: bisca replay show m.binlog

A bot sees exactly what the arena sends it (:class:`bisca.client.Request`, the engine's
values), seeded deals are the arena's, and the log is the referee's format, which
``bisca replay show`` prints and ``bisca replay verify`` re-runs on the engine.  A bot that
raises, or answers what the rules forbid, stops the match with the traceback
(:class:`IllegalAnswer`, :class:`MalformedAnswer`).  For training, ``bisca.client.local.
pettingzoo`` is a PettingZoo AEC environment over the same engine (``pip install
'bisca-client[pettingzoo]'``).
"""

from ._log import Signer
from ._request import LocalRequest
from ._runner import (
    DEFAULT_CLOCK,
    AnswerError,
    IllegalAnswer,
    LocalResult,
    MalformedAnswer,
    Player,
    Seat,
    play_match,
)

__all__ = [
    "DEFAULT_CLOCK",
    "AnswerError",
    "IllegalAnswer",
    "LocalRequest",
    "LocalResult",
    "MalformedAnswer",
    "Player",
    "Seat",
    "Signer",
    "play_match",
]
