"""A table takes one reply per request (review 45b): a reload, or another page of the table,
answering a request already answered was taken again and written to the arena (which refused
it in English), and a page that came back meanwhile was shown the answered request as open."""

from __future__ import annotations

import asyncio

import pytest

from bisca.server.web import Problem, Table, Tables
from bisca.v1 import arena_pb2 as pb


def test_a_reply_is_taken_once_and_a_page_coming_back_is_not_shown_it_open() -> None:
    async def main() -> None:
        table = Table(id="t-1", token="secret", game="belote", seat=0, match_id="m-1", seats=[])
        table.open_request = "r1"
        table.request_at = asyncio.get_running_loop().time()
        assert table.caught_up()["caughtUp"]["openRequest"] == "r1"
        tables = Tables(backend=None, launcher=None, address="")  # type: ignore[arg-type]
        tables.reply(table, pb.ActionReply(request_id="r1"))
        assert table.replies.qsize() == 1
        with pytest.raises(Problem, match=r"r1.*answered already") as refused:
            tables.reply(table, pb.ActionReply(request_id="r1"))
        assert refused.value.status == 409
        assert table.replies.qsize() == 1
        assert table.caught_up() == {"caughtUp": {"openRequest": "", "openForMs": 0}}

    asyncio.run(main())
