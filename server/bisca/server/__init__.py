"""The referee, in rooms by concern; imports point one way, down this list::

    cli/          the ``bisca`` command line, one module per command group
    hosting/      a league's hosted bots: each submission built, checked, validated
    conformance/  ``bisca check-bot``
    web/          the browser app: HTTP + WebSocket gateway, its pages and static files
    accounts/     a league for strangers: accounts, sign-in, submissions and their limits
    league/       the league matchmaker (``bisca serve --league``)
    tournament/   local matches (``bisca match``), tournaments, distributed (``bisca worker``)
    edge/         gRPC transport, the asyncio<->trio bridge, operator and spectator RPCs
    sandbox/      bot processes: bubblewrap, rlimits, launching, a bot kept in its seat
    referee/      connections, matches, clocks (trio)
    logs/         match log format, writer, replay/verify, rendering, spectating
    store/        records on disk (SQLite), migrations, ratings, leaderboards
    metrics/      Prometheus metrics every room records into, and their HTTP page
    records, datadir, errors, text, tempfolders, textfiles   what every room shares

A bot's message enters at the edge, becomes an action for a match in the referee, which asks
the engine (:mod:`bisca.engine`) whether it is legal and applies it; the log records it, the
store keeps the result, and the engine's per-seat observations flow back out through the edge.
The wire codec (:mod:`bisca.wire`) is shared with the Python SDK, so it is not in here.
``tests/tooling/test_layout.py`` fails if an import points the wrong way or goes round in a
cycle.
"""
