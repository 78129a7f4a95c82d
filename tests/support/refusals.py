"""Referee options for the tests of what a bot that reads nothing makes the server hold: the
referee ends a stream whose bot has more messages refused than its matches' messages explain
(``referee/_connection.py``); these tests need its refusals answered without end, so that the
answers pile up behind a bot that does not read them."""

from bisca.server.referee import ServerOptions

ENDLESS_REFUSALS = ServerOptions(refusals_at_start=10**9)
