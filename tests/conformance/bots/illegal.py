"""Answers every request with a card that is not among its legal actions."""

from __future__ import annotations

from _raw import reply, run

from bisca.v1 import arena_pb2 as pb
from bisca.v1 import belote_pb2, bestia_pb2


def illegal(request: pb.ActionRequest) -> list[pb.BotMessage | bytes]:
    game = request.observation.WhichOneof("game")
    module = belote_pb2 if game == "belote" else bestia_pb2
    legal = {action.SerializeToString() for action in request.legal_actions}
    for suit in range(1, 5):
        for rank in range(1, 9):  # ranks every deck has
            card = module.Card(suit=suit, rank=rank)
            action = pb.GameAction(**{game: module.Action(play_card=module.PlayCard(card=card))})
            if action.SerializeToString() not in legal:
                return [reply(request, action)]
    raise AssertionError("every card is legal")


run(illegal)
