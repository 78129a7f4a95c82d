"""The arena server assembled: store, referee (trio, guest mode) and gRPC transport.

``bisca serve`` runs one until interrupted; ``bisca match`` runs one in-process for a local
match; the tests start real ones on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import fcntl
import logging
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar, TypeVarTuple

import grpc
from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificatePublicKeyTypes,
    PrivateKeyTypes,
    PublicKeyTypes,
)

from bisca.server.datadir import DataDir, partial_of
from bisca.server.errors import ConfigError, DataDirInUse, StoreError
from bisca.server.logs import data_key
from bisca.server.referee import Referee, ServerOptions, logged_result
from bisca.server.store import (
    MAX_SEAT_OUTPUT,
    Store,
    is_store_lost,
    note_store_used,
    open_store,
    without_password,
)
from bisca.server.textfiles import MAX_PEM_BYTES, cut_to_tail, read_regular_file

from ._bridge import TrioGuest
from ._descriptors import incoming_connection_cap, raise_open_files_limit
from ._doors import BotDoors
from ._transport import (
    CLOSE_GRACE_S,
    CONNECTION_IDLE_S,
    MAX_PARKED_PER_PEER,
    MAX_UNANSWERED_PER_PEER,
    MAX_UNANSWERED_STREAMS,
    MAX_UNSENT_BYTES,
    MAX_UNSENT_MESSAGES,
    ArenaTransport,
    start_grpc_server,
)

log = logging.getLogger("bisca.server")
T = TypeVar("T")
Args = TypeVarTuple("Args")

CUT_OFF_REASON = (
    "cut off: the server process running it stopped before the match's end was recorded"
)


@dataclass
class ServerConfig:
    data_dir: Path
    listen: list[str] = field(default_factory=lambda: ["127.0.0.1:50051"])
    admin_token: str | None = None
    options: ServerOptions = field(default_factory=ServerOptions)
    #: A bot stream holding this many messages, or bytes, its bot has not read is cut.
    max_unsent_messages: int = MAX_UNSENT_MESSAGES
    max_unsent_bytes: int = MAX_UNSENT_BYTES
    #: A stream the referee ended is closed this long after at the latest, read or not.
    close_grace_s: float = CLOSE_GRACE_S
    #: Bot streams one address may have open that the referee has not answered yet.
    max_unanswered_per_peer: int = MAX_UNANSWERED_PER_PEER
    #: ... and all addresses together.
    max_unanswered_streams: int = MAX_UNANSWERED_STREAMS
    #: Bot streams one address may hold cut off while their bot reads nothing more.
    max_parked_per_peer: int = MAX_PARKED_PER_PEER
    #: A connection with no call open for this long is closed.
    connection_idle_s: float = CONNECTION_IDLE_S
    #: The server launches sandboxed bots, each through a door of its own (``_doors.py``):
    #: the connections the process may hold are shared half and half between this server
    #: and the doors, so that neither eats the descriptors kept for the arena's own files.
    bot_doors: bool = False
    #: Refuse a data directory another server runs in (``bisca match`` and tournaments launch
    #: bots; a standing server's tokens and live logs are no place for them).
    alone: bool = False
    #: TLS on the TCP addresses: the server's certificate (chain) and its private key, PEM
    #: files.  With ``tls_client_ca`` too, a client must present a certificate signed by that
    #: CA (mutual TLS).  Unix sockets stay plaintext (see :func:`start_grpc_server`).
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    #: The store (``--store``): ``None`` for the data directory's SQLite file, else
    #: ``sqlite:PATH`` or a PostgreSQL URL; the data directory keeps the files either way.
    store: str | None = None


def tls_credentials(config: ServerConfig) -> grpc.ServerCredentials | None:
    """The server's TLS credentials from ``config``'s files (``None`` without TLS), every file
    checked first: grpc would take a broken certificate or a key of another certificate and
    fail later, at a handshake, saying only that it failed.  Raises :class:`ConfigError`
    naming the file and what is wrong with it."""
    if config.tls_cert is None and config.tls_key is None:
        if config.tls_client_ca is not None:
            raise ConfigError(
                f"a client CA ({config.tls_client_ca}) is for mutual TLS: give the server's "
                "certificate and key too (--tls-cert, --tls-key)"
            )
        return None
    if config.tls_cert is None or config.tls_key is None:
        given, missing = (
            ("key", "certificate (--tls-cert)")
            if config.tls_cert is None
            else ("certificate", "private key (--tls-key)")
        )
        raise ConfigError(
            f"TLS needs both a certificate and its key: a {given} without a {missing}"
        )
    cert_pem = _read_pem(config.tls_cert, "TLS certificate")
    chain = _certificates(cert_pem, config.tls_cert, "TLS certificate")
    key_pem = _read_pem(config.tls_key, "TLS key")
    key = _private_key(key_pem, config.tls_key)
    if _public_der(key.public_key()) != _public_der(chain[0].public_key()):
        raise ConfigError(
            f"TLS key {config.tls_key}: not the key of the certificate in {config.tls_cert} "
            "(its public key differs)"
        )
    _warn_if_not_valid_now(chain[0], config.tls_cert)
    client_ca_pem = None
    if config.tls_client_ca is not None:
        client_ca_pem = _read_pem(config.tls_client_ca, "TLS client CA")
        _certificates(client_ca_pem, config.tls_client_ca, "TLS client CA")
    return grpc.ssl_server_credentials(
        [(key_pem, cert_pem)],
        root_certificates=client_ca_pem,
        require_client_auth=client_ca_pem is not None,
    )


def _read_pem(path: Path, what: str) -> bytes:
    try:
        return read_regular_file(path, MAX_PEM_BYTES)
    except FileNotFoundError:
        raise ConfigError(f"{what} {path}: no such file") from None
    except OSError as problem:
        raise ConfigError(f"{what} {path}: cannot read it: {problem.strerror or problem}") from None


def _certificates(pem: bytes, path: Path, what: str) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError:  # cryptography's message is a link to its FAQ, not about this file
        raise ConfigError(
            f"{what} {path}: not a PEM certificate (a '-----BEGIN CERTIFICATE-----' block)"
        ) from None


def _private_key(pem: bytes, path: Path) -> PrivateKeyTypes:
    try:
        return serialization.load_pem_private_key(pem, password=None)
    except TypeError:  # what cryptography raises for a key that needs a password
        raise ConfigError(
            f"TLS key {path}: the key is encrypted; give it unencrypted (readable by the "
            "server's user only)"
        ) from None
    except UnsupportedAlgorithm as problem:
        raise ConfigError(f"TLS key {path}: a key of a kind TLS cannot use: {problem}") from None
    except ValueError:
        raise ConfigError(
            f"TLS key {path}: not a PEM private key (a '-----BEGIN PRIVATE KEY-----' block)"
        ) from None


def _public_der(key: PublicKeyTypes | CertificatePublicKeyTypes) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _warn_if_not_valid_now(certificate: x509.Certificate, path: Path) -> None:
    """An expired certificate still loads (and may be renewed while the server runs), but
    every client will refuse it: say so at the start rather than at each handshake."""
    now = datetime.datetime.now(datetime.UTC)
    if now > certificate.not_valid_after_utc:
        log.warning("TLS certificate %s expired on %s", path, certificate.not_valid_after_utc)
    elif now < certificate.not_valid_before_utc:
        log.warning(
            "TLS certificate %s is not valid before %s", path, certificate.not_valid_before_utc
        )


def admin_token_for(data_dir: Path, given: str | None = None) -> str:
    """The admin token: given, from ``BISCA_ADMIN_TOKEN``, or kept in the data directory
    (created on first use, readable by its owner only)."""
    return _token_for(given, "BISCA_ADMIN_TOKEN", DataDir(data_dir).admin_token, "admin")


def spectator_token_for(data_dir: Path) -> str:
    """The token spectators watch with (``BISCA_SPECTATOR_TOKEN`` or ``spectator.token``)."""
    return _token_for(None, "BISCA_SPECTATOR_TOKEN", DataDir(data_dir).spectator_token, "spectator")


def _token_for(given: str | None, variable: str, path: Path, kind: str) -> str:
    if given:
        return given
    from_env = os.environ.get(variable)
    if from_env:
        return from_env
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = f"bisca_{kind}_" + secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(token + "\n")
    return token


class ServerLease:
    """A server process's claim on the matches it runs: an exclusive ``flock`` on
    ``DATA/servers/ID.lock`` held for the process's life.  The kernel drops it when the process
    dies (``kill -9`` included), so another process sharing the data directory can tell the
    matches of a server that is gone from those of one that still runs."""

    def __init__(self, data_dir: Path) -> None:
        self.id = f"{os.getpid()}-{secrets.token_hex(4)}"
        layout = DataDir(data_dir)
        folder = layout.servers
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = layout.server_lease(self.id)
        # Locked before it takes its name, so a *.lock file is never seen unlocked while its
        # server runs.
        temporary = folder / f"{self.id}.tmp"
        self._fd: int | None = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        os.replace(temporary, self.path)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            os.close(self._fd)
            self._fd = None


def _lease_is_held(path: Path) -> bool:
    """Whether the server of a lease file still runs (something holds its lock)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the lock if this took it
    return False


def refuse_a_shared_data_dir(data_dir: Path) -> None:
    """Raise :class:`DataDirInUse` if a server runs in ``data_dir`` now."""
    layout = DataDir(data_dir)
    if not layout.servers.is_dir():
        return
    running = [path.stem for path in sorted(layout.servers.glob("*.lock")) if _lease_is_held(path)]
    if running:
        raise DataDirInUse(
            f"a server runs in {data_dir} (process {running[0].split('-')[0]}): give this one a "
            "data directory of its own (--data)"
        )


def refuse_to_leave_its_own_store(layout: DataDir, store: str | None) -> None:
    """A :class:`StoreError` when ``store`` is not the SQLite store the data directory holds
    already: served so once, the folder noted the other store, and its own results were out
    of reach of every command given the folder until the note was removed by hand (review
    s59b, M9)."""
    if store is None or not layout.store.exists():
        return
    if store.startswith("sqlite:"):
        named = Path(store.removeprefix("sqlite:"))
        with contextlib.suppress(OSError):
            if named.exists() and named.samefile(layout.store):
                return
    raise StoreError(
        f"{layout.root} holds a store of its own, {layout.store}: served with --store "
        f"{without_password(store)}, its results would be left behind; move {layout.store} "
        "out of the folder first (or back up and remove it), or give another --data"
    )


def _cut_seats_output(match_dir: Path) -> None:
    """A cut-off match never reached its end, where the ladder keeps its seats' output and
    removes their files: each is cut to the end the ladder would have kept (they were left
    whole, up to the sandbox's ``file_mb`` each: review s56), for whoever looks in the folder
    (no page shows a match's output once it is over)."""
    for path in match_dir.glob("seat*.log"):
        try:
            cut_to_tail(path, MAX_SEAT_OUTPUT)
        except OSError as problem:
            log.warning("%s could not be cut: %s", path, problem)


@dataclass(frozen=True)
class CutOff:
    """What a server's start found of the matches of servers that are gone: those it marked
    failed, and those that had finished, their logs complete and signed, whose results it
    recorded from their logs."""

    failed: int = 0
    recorded: int = 0


def fail_cut_off_matches(store: Store, data_dir: Path, trusted_key: bytes | None) -> CutOff:
    """Settle the matches left waiting or running by servers that are gone (and those of
    servers too old to record themselves): a match whose log is complete, finished and signed
    by ``trusted_key`` (this directory's key) is recorded finished with the result its log
    says (its server stopped, or lost its store, between the log and the result's
    transaction); every other is marked failed, with where its log is (a ``.partial`` one,
    normally).  The lease files of gone servers are removed."""
    layout = DataDir(data_dir)
    alive: dict[str, bool] = {}
    cut_off = []
    for match_id, owner in store.matches.unfinished():
        if store.shared and (owner is None or not layout.server_lease(owner).exists()):
            # A store shared by several machines: a match of a server whose lease is not in
            # this data directory is another machine's, alive or not (its worker's lease in
            # the queue decides).
            continue
        if owner is not None and owner not in alive:
            alive[owner] = _lease_is_held(layout.server_lease(owner))
        if owner is None or not alive[owner]:
            cut_off.append(match_id)
    settled = settle_left_open(store, layout, cut_off, CUT_OFF_REASON, trusted_key)
    for match_id in cut_off:
        _cut_seats_output(layout.match_dir(match_id))
    for path in layout.servers.glob("*.lock"):
        if not _lease_is_held(path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    return settled


def settle_left_open(
    store: Store, layout: DataDir, match_ids: list[str], reason: str, trusted_key: bytes | None
) -> CutOff:
    """Settle matches no runner will end (their server stopped, their job ended): one whose
    log in ``layout`` is complete, finished and signed by ``trusted_key`` is recorded with the
    result its log says, every other marked failed with ``reason`` and where its log is.  A
    match whose result its runner was still retrying when it stopped is the first kind: a
    ladder's stop marked it failed, "never recorded" (review s59d, F8)."""
    finished = [
        match_id
        for match_id in match_ids
        if trusted_key is not None and _record_from_log(store, layout, match_id, trusted_key)
    ]
    failed = [match_id for match_id in match_ids if match_id not in finished]
    if failed:
        store.matches.abandon_unfinished(failed, reason)
    for match_id in failed:
        final = layout.match_log(match_id)
        for path in (partial_of(final), final):
            if path.exists():
                store.logs.record(match_id, str(path), None)
                break
    return CutOff(failed=len(failed), recorded=len(finished))


def _record_from_log(store: Store, layout: DataDir, match_id: str, trusted_key: bytes) -> bool:
    """Record match ``match_id`` finished from its complete log, if it has one; whether so."""
    final = layout.match_log(match_id)
    if not final.is_file() or final.is_symlink():
        # (Not a FIFO, which held the start in its ``open`` for good: review s59d, F3.)
        return False
    result = logged_result(final, match_id, trusted_key)
    if result is None:
        return False
    try:
        store.matches.finish_and_rate(
            match_id, result.steps, result.seats, log=(str(result.path), result.final_hash)
        )
    except StoreError as refused:
        if is_store_lost(refused):
            raise
        log.warning("%s: its complete log could not be recorded: %s", match_id, refused)
        return False
    log.warning(
        "%s: finished, but its server stopped before recording it: recorded from its log",
        match_id,
    )
    return True


class ArenaServer:
    """A running arena; use :func:`running_server`."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        # Before anything is created: a bad certificate leaves no lease or store behind.
        self.tls = tls_credentials(config)
        # (A folder new before this server's files: its first key, whatever the store keeps.)
        layout = DataDir(config.data_dir)
        new_folder = not layout.holds_bisca_data()
        if config.alone:
            refuse_a_shared_data_dir(config.data_dir)
        refuse_to_leave_its_own_store(layout, config.store)
        self.store: Store = open_store(config.store, config.data_dir)
        try:
            # Private whatever the store: only a SQLite store in it made it so, and a
            # PostgreSQL league's folder, its strangers' bots' sources in it, was readable by
            # every user of the machine (review s59c, F2).
            layout.create()
            self.lease = ServerLease(config.data_dir)
        except BaseException:
            self.store.close()
            raise
        self.store.owner = self.lease.id
        note_store_used(self.store, config.data_dir)
        # A lost key is refused when the store keeps logs it signed, not only its ``matches/``:
        # a PostgreSQL league's logs are in its store (every arena: serve, tournaments, workers).
        kept = self.store.logs if config.store is not None and not new_folder else None
        try:
            self.key = data_key(layout, kept=kept)
            cut_off = fail_cut_off_matches(self.store, config.data_dir, self.key.public)
        except BaseException:
            self.store.close()
            self.lease.release()
            raise
        if cut_off.failed:
            log.warning(
                "%d match(es) cut off by a server that stopped: marked failed", cut_off.failed
            )
        self.store.log_key = self.key.public_text
        self.referee = Referee(self.store, config.options, self.key)
        self.admin_token = admin_token_for(config.data_dir, config.admin_token)
        self.spectator_token = spectator_token_for(config.data_dir)
        self.guest = TrioGuest()
        self.addresses: list[str] = []
        self._grpc: grpc.aio.Server | None = None
        #: The arena's service, once started (its bots' doors serve it too: ``_doors.py``).
        self._transport: ArenaTransport | None = None
        self._doors_connections = 0

    async def start(self) -> None:
        self.referee.drive_on(asyncio.get_running_loop())
        await self.guest.start(self.referee.run)
        transport = ArenaTransport(
            self.guest,
            self.referee,
            self.admin_token,
            self.spectator_token,
            max_unsent=self.config.max_unsent_messages,
            max_unsent_bytes=self.config.max_unsent_bytes,
            close_grace=self.config.close_grace_s,
            max_unanswered_per_peer=self.config.max_unanswered_per_peer,
            max_unanswered=self.config.max_unanswered_streams,
            max_parked_per_peer=self.config.max_parked_per_peer,
        )
        self._transport = transport
        if self.tls is not None and all(a.startswith("unix:") for a in self.config.listen):
            log.warning("TLS files given, but no TCP address to serve them on")
        raise_open_files_limit()  # first: the connections are counted from the raised limit
        connections = incoming_connection_cap()
        if self.config.bot_doors:  # the doors take the other half (``bot_doors``)
            connections //= 2
        self._doors_connections = connections
        self._grpc, self.addresses = await start_grpc_server(
            transport,
            self.config.listen,
            self.tls,
            connection_idle_s=self.config.connection_idle_s,
            connections=connections,
        )

    async def stop(self, grace: float = 1.0) -> None:
        if self._grpc is not None:
            await self._grpc.stop(grace)
        await self.guest.stop()
        self.store.close()
        self.lease.release()

    def bot_doors(self, folder: Path) -> BotDoors:
        """Doors into this arena for the bots it launches (``_doors.py``), made in ``folder``
        (private to this user); the caller closes them before the server stops."""
        assert self._transport is not None, "the server is not started"
        assert self.config.bot_doors, "doors take a share of connections: ServerConfig.bot_doors"
        return BotDoors(
            self._transport,
            folder,
            connection_idle_s=self.config.connection_idle_s,
            connections=self._doors_connections,
        )

    async def in_trio(self, fn: Callable[[*Args], Awaitable[T]], *args: *Args) -> T:
        """Run a trio coroutine function of the referee's world and return its result."""
        return await self.guest.call(fn, *args)

    @property
    def address(self) -> str:
        return self.addresses[0]


@contextlib.asynccontextmanager
async def running_server(config: ServerConfig) -> AsyncIterator[ArenaServer]:
    server = ArenaServer(config)
    try:
        await server.start()
    except BaseException:  # e.g. an address it cannot listen on: stop what did start
        await server.stop()
        raise
    try:
        yield server
    finally:
        await server.stop()
