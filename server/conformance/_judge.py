"""Judging what the bot sends: every answer on its request id, its action and its time.

An answer must name an open request, decode (through the referee's codec) to one of that
request's legal actions, and arrive within the request's clock, measured on arrival.  The
judge answers mistakes as the referee would (an ``Error`` with the referee's code for bytes
that are not a ``BotMessage``, an unknown request id, a second Hello; an ``ActionRejected``
for an action it will not take), so a bot sees what it would see in a league; but where the
referee would let a bot retry or play a default action, the check fails at once and says why.

What is strict, and why
    * A second answer to a request already answered fails: the referee drops it with
      ``ERROR_CODE_UNKNOWN_REQUEST``, and it means the bot answered something twice.
    * After a rejection the bot must answer with a *different* legal action: the referee only
      rejects actions it will reject again, so a bot that repeats itself burns its attempts.
    * An answer to a request withdrawn by a ``MatchEnded`` (the match that ends early) or
      after its clock ran out is tolerated, as the referee tolerates it: the bot may have sent
      it before the news arrived.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from bisca import wire
from bisca.engine import Action, MalformedActionError
from bisca.server.referee import Inbound, Malformed, TooLarge
from bisca.v1 import arena_pb2 as pb

from . import _script as script
from ._arena import Ended, LinkItem
from ._harness import Harness, next_item
from ._match import Answer, Ledger, Sent
from ._report import CheckFailed, inbound_text


class Judge:
    """Reads the bot's stream and judges each item against the requests of the ledger."""

    def __init__(self, harness: Harness, ledger: Ledger) -> None:
        self.harness = harness
        self.ledger = ledger

    async def collect(self, requests: Sequence[Sent]) -> list[Answer]:
        """Wait for an answer to each of ``requests`` (in any order), each within its clock."""
        answers: dict[str, Answer] = {}
        link = self.harness.link
        assert link is not None
        while len(answers) < len(requests):
            waiting = [sent for sent in requests if sent.request_id not in answers]
            first = min(waiting, key=lambda sent: sent.deadline)
            item = await next_item(link, first.deadline)
            if item is None:
                first.status = "withdrawn"
                raise CheckFailed(
                    f"no answer to request {first.request_id} within {first.move_ms} ms",
                    first.describe(),
                    *(
                        f"answered: {sent.request_id} with {answer.text}"
                        for sent in requests
                        if (answer := answers.get(sent.request_id)) is not None
                    ),
                )
            answer = await self.judge(item)
            if answer is not None:
                answers[answer.sent.request_id] = answer
        return [answers[sent.request_id] for sent in requests]

    async def answer(self, sent: Sent) -> Answer:
        (answer,) = await self.collect([sent])
        return answer

    async def quiet(self, seconds: float) -> int:
        """Listen for ``seconds`` with no request open: anything but a tolerated late answer
        fails; returns how many late answers came."""
        link = self.harness.link
        assert link is not None
        deadline = time.monotonic() + seconds
        late = 0
        while (item := await next_item(link, deadline)) is not None:
            await self.judge(item)
            late += 1
        return late

    async def judge(self, item: LinkItem) -> Answer | None:
        """What one item from the bot means: an answer to an open request (checked), a late
        answer the referee would tolerate (``None``), or a failure."""
        if isinstance(item, Ended):
            await self.harness.lost(item)
        reply = self._reply_in(item.message)
        got = f"got: ActionReply {reply.request_id!r} {script.action_text(reply.action)}"
        sent = self._request_answered(reply, item.at, got)
        if sent is None:
            return None
        elapsed_ms = (item.at - sent.sent_at) * 1000
        got += f" after {elapsed_ms:.0f} ms"
        action = self._action_taken(sent, reply, got)
        if item.at > sent.deadline:
            sent.status = "withdrawn"
            raise CheckFailed(
                f"the answer to {sent.request_id} came after {elapsed_ms:.0f} ms; its clock "
                f"gave {sent.move_ms} ms",
                sent.describe(),
                got,
            )
        sent.status = "answered"
        sent.answered_with = got.removeprefix("got: ")
        return Answer(sent, action, reply.action, elapsed_ms)

    def _reply_in(self, message: Inbound) -> pb.ActionReply:
        """The ``ActionReply`` in a message from a welcomed bot; anything else fails."""
        if isinstance(message, Malformed | TooLarge):
            code = (
                pb.ERROR_CODE_MESSAGE_TOO_LARGE
                if isinstance(message, TooLarge)
                else pb.ERROR_CODE_MALFORMED_MESSAGE
            )
            self.harness.error(code, inbound_text(message) + "; they were ignored")
            raise CheckFailed("the bot sent " + inbound_text(message), *self.ledger.open_lines())
        kind = message.WhichOneof("kind")
        if kind == "hello":
            self.harness.error(pb.ERROR_CODE_DUPLICATE_HELLO, "this stream already said hello")
            raise CheckFailed(
                "the bot sent a second Hello on a stream that was already welcomed",
                *self.ledger.open_lines(),
            )
        if kind is None:
            self.harness.error(
                pb.ERROR_CODE_MALFORMED_MESSAGE, "an empty BotMessage (no hello, no action)"
            )
            raise CheckFailed(
                "the bot sent an empty BotMessage (no hello, no action)", *self.ledger.open_lines()
            )
        reply: pb.ActionReply = message.action
        return reply

    def _request_answered(self, reply: pb.ActionReply, at: float, got: str) -> Sent | None:
        """The open request ``reply`` answers; ``None`` for one withdrawn (a tolerated late
        answer); a failure for an id no request had or a request already answered."""
        sent = self.ledger.requests.get(reply.request_id)
        if sent is None or sent.status != "open":
            self.harness.error(
                pb.ERROR_CODE_UNKNOWN_REQUEST,
                f"no open action request {reply.request_id!r}; the reply was discarded",
                request_id=reply.request_id,
            )
        if sent is None:
            raise CheckFailed(
                f"a reply with request id {reply.request_id!r}, which no request had",
                got,
                *self.ledger.open_lines(),
            )
        if sent.status == "withdrawn":
            return None
        if sent.status == "answered" or at < sent.sent_at:
            # (An answer that arrived before the request was re-sent answers an earlier
            # attempt, already answered.)
            current = self.ledger.current_check
            owner = "" if sent.check == current else f" (of the check {sent.check!r})"
            raise CheckFailed(
                f"a second answer to request {sent.request_id}{owner}, which was already answered",
                sent.describe(),
                f"first answer: {sent.answered_with}",
                got,
            )
        return sent

    def _action_taken(self, sent: Sent, reply: pb.ActionReply, got: str) -> Action:
        """The action of ``reply``, if the referee would take it for ``sent``; otherwise the
        answer is refused and the check fails."""
        try:
            # (The codec returns ``Any``; what it decodes is an engine action.)
            action: Action = wire.decode_game_action(sent.match.game, reply.action)
        except MalformedActionError as problem:
            self.refuse(sent, pb.REJECT_CODE_MALFORMED_ACTION, str(problem))
            raise CheckFailed(
                f"the answer to {sent.request_id} is not a {sent.match.game} action: {problem}",
                sent.describe(),
                got,
            ) from None
        if action not in sent.legal:
            why = sent.match.state.why_illegal(action) or "not in the request's legal actions"
            self.refuse(sent, pb.REJECT_CODE_ILLEGAL_ACTION, why)
            raise CheckFailed(
                f"the answer to {sent.request_id} is not one of its legal actions ({why})",
                sent.describe(),
                got,
            )
        if sent.rejected is not None and action == sent.rejected:
            self.refuse(sent, pb.REJECT_CODE_ILLEGAL_ACTION, "this action was just rejected")
            raise CheckFailed(
                f"attempt {sent.attempt} of {sent.request_id} repeats the action just rejected",
                sent.describe(),
                got,
            )
        return action

    def refuse(self, sent: Sent, code: pb.RejectCode, why: str) -> None:
        """Reject an answer as the referee would, with no attempts left: the check is over."""
        sent.status = "withdrawn"
        self.harness.send(
            pb.ServerMessage(
                action_rejected=pb.ActionRejected(
                    request_id=sent.request_id,
                    match_id=sent.match.id,
                    seat=sent.seat,
                    code=code,
                    message=why,
                    attempts_left=0,
                )
            )
        )
