"""The server's errors, in one place.

Every error the server reports to a person (an operator, a bot author at the command line) is
a :class:`BiscaError`; the command line prints its message and exits non-zero, the gRPC edge
maps :class:`OperatorError` to a call status.  Internal failures stay ordinary exceptions.

::

    BiscaError
     +-- StoreError            the store refuses a request or cannot be used
     |    +-- StoreUnavailable the store's database failed or cannot be reached (try again)
     |    +-- DataDirInUse     a data directory another server runs in
     |    +-- StoreTooNew      a store migrated by a newer Bisca than this one
     |    +-- StoreTooOld      an older Bisca's store, which a command that only reads leaves
     +-- LogFormatError        a file that is not a match log at all
     +-- KeyFileError          a server key (or a public key given) that cannot be used
     +-- MatchFailed           a match that cannot be played (raised inside its runner)
     +-- OperatorError         a refused operator or spectator call (a gRPC status name)
     +-- TournamentError       a tournament that cannot go on
     +-- ConfigError           a settings file or value that cannot be used (also a ValueError)
          +-- TournamentFileError   ... in a tournament file, with its line
"""

from __future__ import annotations

__all__ = [
    "BiscaError",
    "ConfigError",
    "DataDirInUse",
    "KeyFileError",
    "LogFormatError",
    "MatchFailed",
    "OperatorError",
    "StoreError",
    "StoreTooNew",
    "StoreTooOld",
    "StoreUnavailable",
    "TournamentError",
    "TournamentFileError",
]


class BiscaError(Exception):
    """An error whose message is meant for a person: it names what was wrong."""


class StoreError(BiscaError):
    """A request the store refuses (duplicate bot, unknown match, ...), with the reason."""


class StoreUnavailable(StoreError):
    """The store's database did not do what it was asked: it cannot be reached, its disk is
    full, its connection broke.  Not a refusal of the request (a duplicate bot, an unknown
    match): the same request may succeed once the store answers again (``is_store_lost``)."""


class DataDirInUse(StoreError):
    """A data directory where another server runs, given to one that must run alone in it."""


class StoreTooNew(StoreError):
    """A store whose schema a newer Bisca migrated: this Bisca must not use it (not an
    outage: it stays so until Bisca is upgraded on this machine)."""

    def __init__(self, store: str, found: int, known: int) -> None:
        super().__init__(
            f"{store} has schema version {found}, newer than this Bisca ({known}); "
            "upgrade Bisca on this machine"
        )
        self.store = store
        self.found = found
        self.known = known


class StoreTooOld(StoreError):
    """A store an older Bisca left, opened by a command that only reads: it is not upgraded
    (a newer command must not migrate, unasked, a store a server of the older release may be
    using, which would then refuse it: ``StoreTooNew``)."""

    def __init__(self, store: str, found: int, known: int) -> None:
        super().__init__(
            f"{store} has schema version {found}, older than this Bisca's ({known}); a command "
            "that only reads does not upgrade it: a server or worker of this Bisca upgrades it "
            "as it opens it (else read it with the Bisca that wrote it)"
        )
        self.store = store
        self.found = found
        self.known = known


class LogFormatError(BiscaError):
    """A file that is not a Bisca match log at all."""


class KeyFileError(BiscaError):
    """A server key file, or a public key given on the command line, that cannot be used."""


class MatchFailed(BiscaError):
    """The match could not be played (its bots never all connected, its log broke, ...)."""


class OperatorError(BiscaError):
    """A refused operator or spectator call: a gRPC status name and a sentence."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class TournamentError(BiscaError):
    """The tournament cannot go on (a bot never connected, ...); the message says why."""


class ConfigError(BiscaError, ValueError):
    """A settings file or command-line value that cannot be used; the message names it."""


class TournamentFileError(ConfigError):
    """A tournament file that cannot be run; ``str()`` is ``FILE:LINE: problem``."""

    def __init__(self, source: str, line: int | None, problem: str) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {problem}")
