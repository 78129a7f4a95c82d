"""A bare grpc.aio echo server for ``bench/arena.py``: the floor our referee is measured
against.

``python -m bench._echo PORT_FILE SIZE,SIZE,...`` serves ``/bench.Echo/Play``: for every
message a client sends it answers with one message per SIZE, of that many bytes, so it speaks
the same message sizes per decision as the referee (measured in the same benchmark run).  It
uses the referee's server options and does no protobuf work at all.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc

from bisca.server.edge import SERVER_OPTIONS


async def serve(port_file: Path, sizes: list[int]) -> None:
    replies = [b"e" * size for size in sizes]

    async def play(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        async for _ in requests:
            for reply in replies:
                yield reply

    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "bench.Echo",
                {"Play": grpc.stream_stream_rpc_method_handler(play)},
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    port_file.write_text(str(port))
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1]), [int(s) for s in sys.argv[2].split(",")]))
