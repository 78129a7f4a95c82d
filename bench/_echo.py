"""A bare grpc.aio echo server for ``bench/arena.py``: the floors our referee is measured
against.

``python -m bench._echo PORT_FILE SIZE,SIZE,...`` serves two methods; neither does any
protobuf work, and both use the referee's server options:

* ``/bench.Echo/Play``: for every message a client sends it answers on the same stream with
  one message per SIZE, of that many bytes, so it speaks the same message sizes per decision
  as the referee (measured in the same benchmark run);
* ``/bench.Echo/Table``: the streams are seated at tables of :data:`TABLE_SEATS` (the call's
  metadata ``table`` and ``seat``), and a message from one seat is answered on the *next*
  seat's stream with one message of the last SIZE, as a match's next request goes to the next
  player; each SIZE before it is one message to *every* seat first, as live events are.
  Each stream has what any server writing to other streams than the one it read needs: a
  reader, a queue and a writer.  It is the least a four-seat match costs grpc.aio per
  decision (four connections a table, writes on other streams than the read).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc

from bisca.server.edge import SERVER_OPTIONS

TABLE_SEATS = 4


async def serve(port_file: Path, sizes: list[int]) -> None:
    replies = [b"e" * size for size in sizes]
    # A table's request and events, told apart by their first byte (``bench/_load.py``).
    *events, request = [b"v" * size for size in sizes[:-1]] + [b"q" * sizes[-1]]
    tables: dict[str, list[asyncio.Queue[bytes | None] | None]] = {}

    async def play(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        async for _ in requests:
            for reply in replies:
                yield reply

    async def table(requests: AsyncIterator[bytes], context: Any) -> None:
        metadata = dict(context.invocation_metadata())
        seats = tables.setdefault(metadata["table"], [None] * TABLE_SEATS)
        seat = int(metadata["seat"])
        outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        outbox.put_nowait(b"")  # seated: the client starts once its table's four are
        seats[seat] = outbox
        following = (seat + 1) % TABLE_SEATS

        async def read() -> None:
            try:
                while (message := await context.read()) is not grpc.aio.EOF:
                    del message
                    for event in events:
                        for queue in seats:
                            if queue is not None:
                                queue.put_nowait(event)
                    queue = seats[following]
                    if queue is not None:
                        queue.put_nowait(request)
            finally:
                outbox.put_nowait(None)

        reader = asyncio.ensure_future(read())
        try:
            while (reply := await outbox.get()) is not None:
                await context.write(reply)
        finally:
            reader.cancel()
            seats[seat] = None

    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "bench.Echo",
                {
                    "Play": grpc.stream_stream_rpc_method_handler(play),
                    "Table": grpc.stream_stream_rpc_method_handler(table),
                },
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    port_file.write_text(str(port))
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1]), [int(s) for s in sys.argv[2].split(",")]))
