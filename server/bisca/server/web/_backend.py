"""What the web reads and runs through: the referee and its trio run, the store, the tokens.

Two ways to have one.  Inside ``bisca serve --http`` the web shares the arena's own referee,
trio guest and tokens (:meth:`Backend.of_server`): live matches, spectators and a seat for a
person are there.  ``bisca web --data DIR [--store URL]`` has no arena: :func:`data_backend`
opens the store and hosts a referee that no transport reaches, so the operator functions the
gRPC service runs (``bisca.server.edge.operator``) serve the web the same answers, from the
store alone.
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from bisca.server.accounts import LeagueAccounts
from bisca.server.datadir import DataDir
from bisca.server.edge import ArenaServer, TrioGuest
from bisca.server.errors import KeyFileError, StoreError
from bisca.server.league import LadderSettings
from bisca.server.logs import ServerKey
from bisca.server.referee import Referee
from bisca.server.store import Store, open_store, refuse_a_store_used_elsewhere


@dataclass
class Backend:
    guest: TrioGuest
    referee: Referee
    data_dir: Path
    admin_token: str
    spectator_token: str
    #: The public key the server signs its logs with (``None``: check each log's own key).
    public_key: bytes | None
    #: Whether an arena runs in this process (live matches, spectators, a person's seat).
    arena: bool
    #: The accounts of a league for strangers (``bisca serve --registration``), else ``None``.
    accounts: LeagueAccounts | None = None
    #: The settings of the ladder this server plays (``bisca serve --league`` with accounts),
    #: else ``None``: a version's page says when its pace holds it back.
    ladder: LadderSettings | None = None

    @property
    def store(self) -> Store:
        return self.referee.store

    @classmethod
    def of_server(cls, server: ArenaServer) -> Backend:
        return cls(
            guest=server.guest,
            referee=server.referee,
            data_dir=server.config.data_dir,
            admin_token=server.admin_token,
            spectator_token=server.spectator_token,
            public_key=server.key.public,
            arena=True,
        )

    def viewer(self, token: str) -> Viewer:
        """Who holds ``token``: the admin, a spectator, or nobody the arena knows."""
        if _same(token, self.admin_token):
            return Viewer.ADMIN
        if _same(token, self.spectator_token):
            return Viewer.SPECTATOR
        return Viewer.NOBODY


class Viewer(StrEnum):
    """A token's standing; the values are what the pages are told."""

    ADMIN = "admin"
    SPECTATOR = "spectator"
    NOBODY = "nobody"


def _same(given: str, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


@contextlib.asynccontextmanager
async def data_backend(data_dir: Path, store_url: str | None = None) -> AsyncIterator[Backend]:
    """A backend over a data directory without an arena (``bisca web``), on the store
    ``store_url`` names (``--store``: a league's PostgreSQL database, whose logs are in it)
    or else the directory's own.  Raises :class:`StoreError` when the directory holds no
    Bisca data, or its server noted another store."""
    if store_url is None:
        refuse_a_store_used_elsewhere(data_dir)  # its server's store is not this folder's
        if not DataDir(data_dir).store.exists():
            raise StoreError(
                f"no Bisca data in {data_dir} (no store file {DataDir(data_dir).store})"
            )
    store = open_store(store_url, data_dir)
    referee = Referee(store)
    guest = TrioGuest()
    try:
        await guest.start(referee.run)
        # No arena: no token opens a live view, so none is read from (or written to) the
        # data directory; these random ones match nothing anybody holds.
        yield Backend(
            guest=guest,
            referee=referee,
            data_dir=data_dir,
            admin_token=secrets.token_urlsafe(24),
            spectator_token=secrets.token_urlsafe(24),
            public_key=_public_key(data_dir),
            arena=False,
        )
    finally:
        await guest.stop()
        store.close()


def _public_key(data_dir: Path) -> bytes | None:
    """The data directory's server key (its logs are checked against it), if it has one."""
    path = DataDir(data_dir).server_key
    if not path.exists():
        return None
    try:
        return ServerKey.load(path).public
    except KeyFileError:  # every log then shows as untrusted, saying no key was trusted
        return None
