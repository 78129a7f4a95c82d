"""The exit codes of ``bisca replay verify``, apart from the command: the package re-exports
them, and importing ``_replay`` (the store, the logs, their drivers) for five integers cost every
``bisca`` command, a sample bot's included, a third of a second of CPU at its start."""

#: Every log complete and agreeing, a divergence, an unreadable file, or only incomplete
#: (``.partial`` / no footer) logs that agree as far as they go.
EXIT_OK, EXIT_DIVERGES, EXIT_UNREADABLE, EXIT_INCOMPLETE = 0, 1, 2, 3
#: ... or a log that replays but cannot be trusted: unsigned, signed by another key than the
#: server's, or not the log the store recorded.
EXIT_UNTRUSTED = 4
