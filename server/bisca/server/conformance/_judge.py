"""Judging what the bot sends: every answer on its request id, its action and its time.

An answer must name an open request, decode (through the referee's codec) to one of that
request's legal actions, and arrive within the request's clock, measured on arrival.  The
referee's own judge decides each of these (``bisca.server.referee``: ``verify_reply_message``,
``verify_addressed``, ``verify_action``) and its answer is sent as it is (an ``Error`` for
bytes that are not a ``BotMessage``, an unknown request id, a second Hello; an
``ActionRejected`` for an action it will not take), so a bot is answered exactly as in a
league; but where the referee would let a bot retry or play a default action, the check fails
at once and says why.  What this module adds is only that strictness.

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

import math
import time
from collections.abc import Sequence

from bisca.engine import Action
from bisca.server.referee import (
    IllegalReply,
    Inbound,
    Malformed,
    MalformedReply,
    RefusedMessage,
    TooLarge,
    Verdict,
    messages,
    verify_action,
    verify_addressed,
    verify_reply_message,
)
from bisca.v1 import arena_pb2 as pb

from . import _script as script
from ._arena import Ended, LinkItem
from ._harness import Harness, next_item
from ._match import Answer, Ledger, Sent
from ._report import CheckFailed, LateAnswer, inbound_text


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
                raise LateAnswer(
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
            raise LateAnswer(
                # Rounded up: an answer 0.4 ms late must not read "300 ms" against 300.
                f"the answer to {sent.request_id} came after {math.ceil(elapsed_ms)} ms; its clock "
                f"gave {sent.move_ms} ms",
                sent.describe(),
                got,
            )
        sent.status = "answered"
        sent.answered_with = got.removeprefix("got: ")
        return Answer(sent, action, reply.action, elapsed_ms)

    def _reply_in(self, message: Inbound) -> pb.ActionReply:
        """The ``ActionReply`` in a message from a welcomed bot; anything else is answered as
        the referee answers it, and fails."""
        try:
            return verify_reply_message(message)
        except RefusedMessage as refused:
            self.harness.send(refused.answer)
            if isinstance(message, Malformed | TooLarge):
                what = inbound_text(message)
            elif refused.verdict is Verdict.DUPLICATE_HELLO:
                what = "a second Hello on a stream that was already welcomed"
            else:
                what = "an empty BotMessage (no hello, no action)"
            raise CheckFailed("the bot sent " + what, *self.ledger.open_lines()) from None

    def _request_answered(self, reply: pb.ActionReply, at: float, got: str) -> Sent | None:
        """The open request ``reply`` answers; ``None`` for one withdrawn (a tolerated late
        answer); a failure for an id no request had or a request already answered."""
        sent = self.ledger.requests.get(reply.request_id)
        try:
            verify_addressed(
                reply.request_id, sent.asked if sent is not None and sent.status == "open" else None
            )
        except RefusedMessage as refused:
            self.harness.send(refused.answer)
            if sent is None:
                raise CheckFailed(
                    f"a reply with request id {reply.request_id!r}, which no request had",
                    got,
                    *self.ledger.open_lines(),
                ) from None
            if sent.status == "withdrawn":
                return None
        assert sent is not None  # (verify_addressed refuses a reply to no request)
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
        answer is refused as the referee refuses it, and the check fails."""
        try:
            action = verify_action(sent.asked, reply.action)
        except MalformedReply as malformed:
            self._withdraw(sent, malformed.answer)
            raise CheckFailed(
                f"the answer to {sent.request_id} is not a {sent.match.game} action: "
                f"{malformed.reason}",
                sent.describe(),
                got,
            ) from None
        except IllegalReply as illegal:
            self._withdraw(sent, illegal.answer)
            raise CheckFailed(
                f"the answer to {sent.request_id} is not one of its legal actions "
                f"({illegal.reason})",
                sent.describe(),
                got,
            ) from None
        if sent.rejected is not None and action == sent.rejected:
            # Stricter than the referee, which would take it: it was refused on purpose.
            self._withdraw(
                sent,
                messages.action_rejected(
                    sent.request_id,
                    sent.match.id,
                    sent.seat,
                    pb.REJECT_CODE_ILLEGAL_ACTION,
                    "this action was just rejected",
                    attempts_left=0,
                ),
            )
            raise CheckFailed(
                f"attempt {sent.attempt} of {sent.request_id} repeats the action just rejected",
                sent.describe(),
                got,
            )
        return action

    def _withdraw(self, sent: Sent, rejection: pb.ServerMessage) -> None:
        """Reject an answer with no attempts left: the check is over."""
        sent.status = "withdrawn"
        self.harness.send(rejection)
