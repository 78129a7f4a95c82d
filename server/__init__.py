"""The referee: command line, sessions, matches, clocks, logs, storage and ratings."""
